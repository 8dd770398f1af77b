/**
 * What kind of object a blob is, judged from its outer shape, and the problem a failed decode answers:
 * a client sending a CRL to the certificate decoder should hear "wrong kind" (PKI-002), a hostile
 * blob nested thousands deep "too deeply nested" (PKI-005), a length claiming gigabytes "too large"
 * (PKI-004), anything else unreadable PKI-001 ("Could not parse provided PEM").
 */
import { ProblemError } from '../../errors/index.js';
import { children, DerError, readSmallInt, readTlv, TAG, walk, type Tlv } from '../der/reader.js';
import { MAX_OBJECT_BYTES } from '../input.js';

export type ObjectKind = 'certificate' | 'CRL' | 'CSR' | 'PKCS#7 / CMS message' | 'PKCS#12 keystore' | 'private key' | 'public key' | 'OCSP response' | 'unknown';

/** PEM labels (RFC 7468 and OpenSSL's) by the kind they announce. */
const LABELS: Record<string, ObjectKind> = {
  CERTIFICATE: 'certificate',
  'X509 CERTIFICATE': 'certificate',
  'TRUSTED CERTIFICATE': 'certificate',
  'X509 CRL': 'CRL',
  'CERTIFICATE REQUEST': 'CSR',
  'NEW CERTIFICATE REQUEST': 'CSR',
  PKCS7: 'PKCS#7 / CMS message',
  CMS: 'PKCS#7 / CMS message',
  PKCS12: 'PKCS#12 keystore',
  'PRIVATE KEY': 'private key',
  'ENCRYPTED PRIVATE KEY': 'private key',
  'RSA PRIVATE KEY': 'private key',
  'EC PRIVATE KEY': 'private key',
  'PUBLIC KEY': 'public key',
  'RSA PUBLIC KEY': 'public key',
};

export const kindOfLabel = (label: string): ObjectKind => LABELS[label] ?? 'unknown';

const isTime = (t: Tlv | undefined): boolean => t?.tag === TAG.UTC_TIME || t?.tag === TAG.GENERALIZED_TIME;

function shapeOf(der: Uint8Array): ObjectKind {
  const top = readTlv(der, 0);
  if (top.tag !== TAG.SEQUENCE) return 'unknown';
  const c = children(der, top);
  const [a, b, d] = c;
  if (c.length === 3 && a?.tag === TAG.SEQUENCE && b?.tag === TAG.SEQUENCE && d?.tag === TAG.BIT_STRING) {
    const t = children(der, a);
    const [t0, t1, t2, t3] = t;
    if (t0?.tag === 0xa0) return 'certificate';
    if (t0?.tag === TAG.INTEGER && t1?.tag === TAG.SEQUENCE && t2?.tag === TAG.SEQUENCE && t3?.tag === TAG.SEQUENCE) return 'certificate';
    if (t0?.tag === TAG.INTEGER && t1?.tag === TAG.SEQUENCE && t2?.tag === TAG.SEQUENCE && t3?.tag === 0xa0) return 'CSR';
    if (t0?.tag === TAG.INTEGER && t1?.tag === TAG.SEQUENCE && t2?.tag === TAG.SEQUENCE && isTime(t3)) return 'CRL';
    if (t0?.tag === TAG.SEQUENCE && t1?.tag === TAG.SEQUENCE && isTime(t2)) return 'CRL';
    return 'unknown';
  }
  if (a?.tag === TAG.OID && b?.tag === 0xa0) return 'PKCS#7 / CMS message';
  if (a?.tag === TAG.ENUMERATED && (c.length === 1 || b?.tag === 0xa0)) return 'OCSP response';
  if (a?.tag === TAG.INTEGER && b?.tag === TAG.SEQUENCE && readSmallInt(der, a) === 3) return 'PKCS#12 keystore';
  if (a?.tag === TAG.INTEGER && b?.tag === TAG.SEQUENCE && d?.tag === TAG.OCTET_STRING) return 'private key';
  if (a?.tag === TAG.INTEGER && b?.tag === TAG.OCTET_STRING) return 'private key';
  if (c.length >= 9 && c.every((x) => x.tag === TAG.INTEGER)) return 'private key';
  if (c.length === 2 && a?.tag === TAG.SEQUENCE && b?.tag === TAG.BIT_STRING) return 'public key';
  if (c.length === 2 && a?.tag === TAG.SEQUENCE && b?.tag === TAG.OCTET_STRING) return 'private key';
  return 'unknown';
}

/** The kind of a DER blob from its shape; 'unknown' when unreadable. Never throws. */
export function sniffKind(der: Uint8Array): ObjectKind {
  try {
    return shapeOf(der);
  } catch {
    return 'unknown';
  }
}

/** Deepest nesting a PKIX object needs is about a dozen levels; beyond this a blob is hostile. */
const MAX_DEPTH = 48;

function tooDeep(der: Uint8Array): boolean {
  let deepest = 0;
  try {
    walk(der, MAX_DEPTH, (_t, depth) => {
      if (depth > deepest) deepest = depth;
    });
  } catch {
    // walk stops at the first error; only the depth it reached matters.
  }
  return deepest >= MAX_DEPTH;
}

/** The length the outer header claims, read without trusting it (a hostile one may claim gigabytes). */
function claimedLength(der: Uint8Array): number {
  // Only for what starts like a PKIX object (a SEQUENCE); other garbage is just unreadable.
  if (der.length < 2 || der[0] !== TAG.SEQUENCE) return 0;
  const first = der[1]!;
  if (!(first & 0x80)) return first;
  const octets = first & 0x7f;
  // More than 4 length octets is no length the reader accepts: unreadable, not large.
  if (octets > 4) return 0;
  let length = 0;
  for (let i = 0; i < octets && 2 + i < der.length; i++) length = length * 256 + der[2 + i]!;
  return length;
}

/** The problem to answer for a failed decode of `der`, expected to be an `expected`. */
export function decodeFailure(err: unknown, der: Uint8Array, expected: ObjectKind): ProblemError {
  if (err instanceof ProblemError) return err;
  const found = sniffKind(der);
  if (found !== 'unknown' && found !== expected) return wrongKind(expected, found);
  if (claimedLength(der) > MAX_OBJECT_BYTES) return new ProblemError('PKI-004', { detail: `the object claims ${claimedLength(der)} bytes` });
  if (tooDeep(der)) return new ProblemError('PKI-005', { detail: `nested deeper than ${MAX_DEPTH} levels` });
  // DerError messages name the structure and byte offset; anything else thrown by a decoder on
  // hostile bytes (a RangeError…) is reported without internals.
  return new ProblemError('PKI-001', { detail: err instanceof DerError ? `${expected}: ${err.message}` : `malformed ${expected}` });
}

export const wrongKind = (expected: ObjectKind, found: ObjectKind): ProblemError =>
  new ProblemError('PKI-002', { detail: `expected a ${expected}, found a ${found}` });
