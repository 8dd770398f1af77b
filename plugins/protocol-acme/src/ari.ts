/**
 * ACME Renewal Information (RFC 9773): the certificate identifier `base64url(AKI keyIdentifier) "."
 * base64url(serial)` (the DER INTEGER's content octets), and the suggested renewal window.
 */
import * as pkijs from 'pkijs';
import { ariSuggestedWindow } from '@certwright/sdk';
import { AcmeProblem } from './problems.js';

export interface CertFacts {
  certId: string;
  serialHex: string;
  akiHex: string;
  notBefore: number;
  notAfter: number;
}

export function certFactsOf(pem: string): CertFacts {
  const b64 = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const cert = pkijs.Certificate.fromBER(Buffer.from(b64, 'base64'));
  const serial = Buffer.from(cert.serialNumber.valueBlock.valueHexView);
  const aki = cert.extensions?.find((e) => e.extnID === '2.5.29.35')?.parsedValue as pkijs.AuthorityKeyIdentifier | undefined;
  const keyId = aki?.keyIdentifier ? Buffer.from(aki.keyIdentifier.valueBlock.valueHexView) : Buffer.alloc(0);
  return {
    certId: `${keyId.toString('base64url')}.${serial.toString('base64url')}`,
    serialHex: serial.toString('hex'),
    akiHex: keyId.toString('hex'),
    notBefore: cert.notBefore.value.getTime(),
    notAfter: cert.notAfter.value.getTime(),
  };
}

/** The two parts of a certID, or `malformed`. */
export function parseCertId(certId: unknown): { akiHex: string; serialHex: string } {
  const m = typeof certId === 'string' ? /^([A-Za-z0-9_-]{1,128})\.([A-Za-z0-9_-]{1,64})$/.exec(certId) : null;
  if (!m) throw new AcmeProblem('malformed', 'A certificate identifier is base64url(AKI).base64url(serial) (RFC 9773 §4.1)');
  return { akiHex: Buffer.from(m[1]!, 'base64url').toString('hex'), serialHex: Buffer.from(m[2]!, 'base64url').toString('hex') };
}

/** The suggested window (the SDK's, shared with the kernel's automation policies). */
export const suggestedWindow = (notBefore: number, notAfter: number, renewAfter: number | null): { start: number; end: number } => ariSuggestedWindow(notBefore, notAfter, renewAfter);
