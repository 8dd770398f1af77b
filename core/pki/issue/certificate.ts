/**
 * Builds and signs one certificate: TBSCertificate (v3) from DER pieces, then the signature. Shared by
 * the CA issuer and self-signed CA creation.
 */
import { randomFillSync } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { readTlv } from '../der/reader.js';
import { bitString, explicit, seq, smallInt, time, unsignedInt } from '../der/writer.js';
import { keyIdentifier, readPublicKey } from '../x509/keys.js';
import { buildExtensions } from './extensions.js';
import type { Signer } from './signer.js';
import type { CertificateTemplate } from './template.js';

const DAY_MS = 86_400_000;

/** 16 random bytes, top bit clear and first byte non-zero: a positive 16-byte INTEGER (CA/B ≥ 64 bits). */
export function randomSerial(): Uint8Array {
  const serial = randomFillSync(new Uint8Array(16));
  serial[0] = serial[0]! & 0x7f || 0x01;
  return serial;
}

export interface CertificateParts {
  signer: Signer;
  /** Issuer Name DER (the CA's subject, byte for byte). */
  issuer: Uint8Array;
  authorityKeyId?: Uint8Array;
  subject: Uint8Array;
  /** SubjectPublicKeyInfo DER of the certified key. */
  spki: Uint8Array;
  /** GeneralNames DER, absent for none. */
  sans?: Uint8Array;
  template: CertificateTemplate;
  now: number;
}

export function buildCertificate(p: CertificateParts): Uint8Array {
  const t = p.template;
  const notBefore = Math.floor((t.notBefore ?? p.now) / 1000) * 1000;
  const notAfter = Math.floor((t.notAfter ?? notBefore + (t.validityDays ?? 365) * DAY_MS) / 1000) * 1000;
  if (!(notAfter > notBefore)) throw new ProblemError('HTTP-003', { detail: 'notAfter must be after notBefore' });
  const subjectKey = readPublicKey(p.spki, readTlv(p.spki, 0));
  // An empty subject is SEQUENCE {} (2 bytes): then SANs are mandatory (RFC 5280 §4.1.2.6).
  const subjectEmpty = p.subject.length === 2;
  if (subjectEmpty && !p.sans) throw new ProblemError('HTTP-003', { detail: 'a certificate needs a subject or subject alternative names' });
  let validity: Uint8Array;
  try {
    validity = seq(time(notBefore), time(notAfter));
  } catch {
    throw new ProblemError('HTTP-003', { detail: 'validity out of range' });
  }
  const tbs = seq(
    explicit(0, smallInt(2)),
    unsignedInt(t.serial ?? randomSerial()),
    p.signer.algorithm,
    p.issuer,
    validity,
    p.subject,
    p.spki,
    explicit(3, buildExtensions({ template: t, subjectKey, subjectKeyId: keyIdentifier(subjectKey), ...(p.authorityKeyId ? { authorityKeyId: p.authorityKeyId } : {}), ...(p.sans ? { sans: p.sans } : {}), subjectEmpty })),
  );
  return seq(tbs, p.signer.algorithm, bitString(p.signer.sign(tbs)));
}
