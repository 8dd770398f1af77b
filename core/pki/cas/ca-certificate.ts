import { ProblemError } from '../../errors/index.js';
import { decodeInput, pemBlocks } from '../input.js';
import type { CertificateInfo } from '../x509/model.js';
import { parseCertificate } from '../x509/parse.js';

/** Parses one certificate; anything unreadable is PKI-001 (the message clients assert on). */
export function readCertificate(der: Uint8Array): CertificateInfo {
  try {
    return parseCertificate(der);
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    throw new ProblemError('PKI-001', { detail: (err as Error).message });
  }
}

/**
 * The certificate of a CA being imported: exactly one certificate (PEM, base64 or DER), and a CA one —
 * basicConstraints CA:TRUE, or a version 1 self-signed certificate (old roots carry no extensions;
 * RFC 5280 §6.1 accepts them as trust anchors).
 */
export function readCaCertificate(text: string): { info: CertificateInfo; der: Uint8Array } {
  if (text.includes('-----BEGIN')) {
    const blocks = pemBlocks(text);
    if (blocks.length > 1) throw new ProblemError('CA-002', { message: `The certificate field holds ${blocks.length} PEM blocks: import one CA certificate at a time` });
    if (blocks[0] && blocks[0].label !== 'CERTIFICATE' && blocks[0].label !== 'X509 CERTIFICATE' && blocks[0].label !== 'TRUSTED CERTIFICATE') {
      throw new ProblemError('PKI-002', { message: `Expected a CERTIFICATE, got a ${blocks[0].label}` });
    }
  }
  const { der } = decodeInput(text);
  const info = readCertificate(der);
  const bc = info.extensions.basicConstraints;
  const v1Root = info.version === 1 && info.selfSigned;
  if (!bc?.ca && !v1Root) {
    const why = bc ? 'its basicConstraints say CA:FALSE' : 'it has no basicConstraints extension';
    throw new ProblemError('CA-002', { message: `The certificate of "${info.dn}" is not a CA certificate: ${why}` });
  }
  return { info, der };
}
