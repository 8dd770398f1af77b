import type { KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { nameKey, type CaRecord } from '../cas/store.js';
import { decodeCrl, type DecodedCrl } from '../crl/decode.js';
import { verifyCrl } from '../crl/verify.js';
import { decodeInput } from '../input.js';
import type { CertificateInfo } from '../x509/model.js';
import type { CrlCacheRecord } from './store.js';

const refuse = (message: string) => new ProblemError('CRL-002', { message });

/**
 * Checks a downloaded CRL against its CA before it may replace the cached one: a full CRL (not a delta),
 * issued under the CA's name, signed by the CA's key (a CRL signed by another key under the same name is
 * refused), by a CA allowed to sign CRLs, and not older than the one cached (no rollback to a CRL that
 * predates a revocation). Returns the decoded CRL and its DER.
 */
export function acceptCrl(body: Uint8Array, ca: CaRecord, caCert: CertificateInfo, caKey: KeyObject, cached: CrlCacheRecord | undefined): { crl: DecodedCrl; der: Uint8Array } {
  // Distribution points serve DER; some serve PEM.
  const { der } = decodeInput(body);
  const crl = decodeCrl(der);
  if (crl.deltaCrlIndicator !== undefined) throw refuse(`The CRL is a delta CRL (base ${crl.deltaCrlIndicator}): only full CRLs are cached`);
  if (nameKey(crl.issuer) !== nameKey(ca.subjectDn)) throw refuse(`The CRL is issued by "${crl.issuer}", not by the CA "${ca.subjectDn}"`);
  const aki = crl.authorityKeyIdentifier?.keyIdentifier?.toLowerCase();
  if (aki && ca.ski && aki !== ca.ski.toLowerCase()) throw refuse(`The CRL names the key ${aki}, not the CA's key ${ca.ski}`);
  if (!verifyCrl(der, caKey)) throw refuse(`The CRL's signature does not verify with the key of the CA "${ca.name}"`);
  const usage = caCert.extensions.keyUsage;
  if (usage && !usage.usages.includes('cRLSign')) throw refuse(`The key usage of the CA "${ca.name}" does not allow signing CRLs (no cRLSign)`);
  if (cached?.thisUpdate != null) {
    const older =
      crl.crlNumber !== null && cached.crlNumber !== null ? BigInt(crl.crlNumber) < BigInt(cached.crlNumber) : crl.thisUpdate < cached.thisUpdate;
    if (older) throw refuse(`The CRL (number ${crl.crlNumber ?? '-'}, ${new Date(crl.thisUpdate).toISOString()}) is older than the cached one (number ${cached.crlNumber ?? '-'})`);
  }
  return { crl, der };
}
