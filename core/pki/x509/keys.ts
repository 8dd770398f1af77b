/**
 * Public keys of certificates and CSRs: the compat keyType name, the SPKI thumbprint, and node
 * KeyObjects built once per key. Importing a key is the expensive part of a signature check (OpenSSL 3
 * decodes a DER SPKI at ~6k/s here, a PEM string costs ~19× a signature), so KeyObjects are cached by
 * SPKI bytes and built from a JWK where node allows it (RSA ~250k/s, Ed25519 ~120k/s, EC ~11k/s).
 */
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { children, DerError, expectTag, readBitString, readOid, readTlv, TAG, value, whole, type Tlv } from '../der/reader.js';
import { CURVES, KEY_ALGORITHMS } from '../oids.js';

/** ML-DSA (FIPS 204) keys by OID; their keyType is the parameter set. */
const ML_DSA: Record<string, string> = {
  '2.16.840.1.101.3.4.3.17': 'ml-dsa-44',
  '2.16.840.1.101.3.4.3.18': 'ml-dsa-65',
  '2.16.840.1.101.3.4.3.19': 'ml-dsa-87',
};

/** JWK curve names of the curves node imports from JWK. */
const JWK_CURVES: Record<string, { crv: string; size: number }> = {
  '1.2.840.10045.3.1.7': { crv: 'P-256', size: 32 },
  '1.3.132.0.34': { crv: 'P-384', size: 48 },
  '1.3.132.0.35': { crv: 'P-521', size: 66 },
  '1.3.132.0.10': { crv: 'secp256k1', size: 32 },
};

export interface PublicKeyInfo {
  /** rsa-2048, ec-secp256r1, ed-25519, … (client-compat §2.3). */
  keyType: string;
  /** Algorithm OID of the SubjectPublicKeyInfo. */
  algorithm: string;
  /** Named curve OID of an EC key. */
  curve?: string;
  /** The whole SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** The subjectPublicKey BIT STRING's bytes (hashed for key identifiers). */
  keyBytes: Uint8Array;
}

/** Bit length of an INTEGER's magnitude (RSA modulus size). */
function integerBits(buf: Uint8Array, tlv: Tlv): number {
  expectTag(tlv, TAG.INTEGER, 'integer');
  let i = tlv.valueStart;
  while (i < tlv.end - 1 && buf[i] === 0) i++;
  if (i === tlv.end) throw new DerError('empty integer', tlv.start);
  return (tlv.end - i - 1) * 8 + (32 - Math.clz32(buf[i]!));
}

/** Splits an SPKI into its algorithm, parameters and key bytes. */
function spkiParts(buf: Uint8Array, spki: Tlv): { algorithm: string; params: Tlv | undefined; key: Uint8Array } {
  expectTag(spki, TAG.SEQUENCE, 'subject public key info');
  const [alg, bits, extra] = children(buf, spki);
  if (!alg || !bits || extra) throw new DerError('subject public key info must be an algorithm and a key', spki.start);
  const [algOid, params, more] = children(buf, expectTag(alg, TAG.SEQUENCE, 'algorithm identifier'));
  if (!algOid || more) throw new DerError('malformed algorithm identifier', alg.start);
  const { unused, bytes } = readBitString(buf, bits);
  if (unused !== 0) throw new DerError('public key is not a whole number of bytes', bits.start);
  return { algorithm: readOid(buf, algOid), params, key: bytes };
}

/** Reads the SubjectPublicKeyInfo at `spki` of `buf`. */
export function readPublicKey(buf: Uint8Array, spki: Tlv): PublicKeyInfo {
  const { algorithm, params, key } = spkiParts(buf, spki);
  const info: PublicKeyInfo = { keyType: algorithm, algorithm, spki: whole(buf, spki), keyBytes: key };
  switch (algorithm) {
    case KEY_ALGORITHMS.rsa:
    case KEY_ALGORITHMS.rsaPss: {
      const rsa = readTlv(key, 0);
      if (rsa.end !== key.length) throw new DerError('bytes after the RSA public key', rsa.end);
      const [modulus] = children(key, expectTag(rsa, TAG.SEQUENCE, 'RSA public key'));
      if (!modulus) throw new DerError('RSA public key without modulus', rsa.start);
      info.keyType = `rsa-${integerBits(key, modulus)}`;
      break;
    }
    case KEY_ALGORITHMS.ec: {
      if (params?.tag !== TAG.OID) {
        info.keyType = 'ec-explicit';
        break;
      }
      info.curve = readOid(buf, params);
      info.keyType = `ec-${CURVES[info.curve] ?? info.curve}`;
      break;
    }
    case KEY_ALGORITHMS.ed25519:
      info.keyType = 'ed-25519';
      break;
    case KEY_ALGORITHMS.ed448:
      info.keyType = 'ed-448';
      break;
    case KEY_ALGORITHMS.x25519:
      info.keyType = 'x-25519';
      break;
    case KEY_ALGORITHMS.x448:
      info.keyType = 'x-448';
      break;
    case KEY_ALGORITHMS.dsa: {
      const p = params?.tag === TAG.SEQUENCE ? children(buf, params)[0] : undefined;
      info.keyType = p ? `dsa-${integerBits(buf, p)}` : 'dsa';
      break;
    }
    default:
      info.keyType = ML_DSA[algorithm] ?? algorithm;
  }
  return info;
}

const hexOf = (bytes: Uint8Array, algorithm: 'sha1' | 'sha256'): string => createHash(algorithm).update(bytes).digest('hex');

/** SHA-256 of the SPKI DER, lower-case hex (the compat `publicKeyThumbprint`). */
export const publicKeyThumbprint = (spki: Uint8Array): string => hexOf(spki, 'sha256');

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bytes (key identifiers). */
export const keyIdentifier = (info: PublicKeyInfo): Uint8Array => createHash('sha1').update(info.keyBytes).digest();

const b64u = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64url');

/** The key as a JWK when node can import it that way (faster than DER), else undefined. */
export function asJwk(spki: Uint8Array): JsonWebKey | undefined {
  const { algorithm, params, key } = spkiParts(spki, readTlv(spki, 0));
  if (algorithm === KEY_ALGORITHMS.rsa) {
    const [n, e] = children(key, readTlv(key, 0));
    if (!n || !e) return undefined;
    const magnitude = (t: Tlv): Uint8Array => {
      const v = value(key, t);
      return v.length > 1 && v[0] === 0 ? v.subarray(1) : v;
    };
    return { kty: 'RSA', n: b64u(magnitude(n)), e: b64u(magnitude(e)) };
  }
  if (algorithm === KEY_ALGORITHMS.ec && params?.tag === TAG.OID) {
    const curve = JWK_CURVES[readOid(spki, params)];
    // Uncompressed points only (0x04 || x || y); compressed ones go through DER.
    if (!curve || key.length !== 1 + 2 * curve.size || key[0] !== 0x04) return undefined;
    return { kty: 'EC', crv: curve.crv, x: b64u(key.subarray(1, 1 + curve.size)), y: b64u(key.subarray(1 + curve.size)) };
  }
  if (algorithm === KEY_ALGORITHMS.ed25519 && key.length === 32) return { kty: 'OKP', crv: 'Ed25519', x: b64u(key) };
  if (algorithm === KEY_ALGORITHMS.ed448 && key.length === 57) return { kty: 'OKP', crv: 'Ed448', x: b64u(key) };
  return undefined;
}

/** Keys seen recently (CA keys, roots re-ingested, a renewal's CSR key): a few hundred KiB at most. */
const keyObjects = new LRUCache<string, KeyObject>({ max: 1024 });

/**
 * The node KeyObject of an SPKI, cached by its bytes. Throws a DerError when node cannot read the key
 * (unknown algorithm, point not on the curve).
 */
export function publicKeyObject(spki: Uint8Array): KeyObject {
  const cacheKey = Buffer.from(spki.buffer, spki.byteOffset, spki.length).toString('latin1');
  const cached = keyObjects.get(cacheKey);
  if (cached) return cached;
  let key: KeyObject;
  try {
    const jwk = asJwk(spki);
    key = jwk ? createPublicKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch (err) {
    if (err instanceof DerError) throw err;
    throw new DerError(`unusable public key: ${(err as Error).message}`, 0);
  }
  keyObjects.set(cacheKey, key);
  return key;
}

/** Forgets every cached KeyObject (a benchmark measuring a key never seen, over repeated inputs). */
export function forgetKeyObjects(): void {
  keyObjects.clear();
}
