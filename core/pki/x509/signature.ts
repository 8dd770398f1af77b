/**
 * Signature algorithms of certificates and CSRs: what an AlgorithmIdentifier names, and checking a
 * signature with node:crypto over a cached KeyObject (keys.ts).
 */
import { constants, createHash, verify, type JsonWebKey } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { children, DerError, expectTag, readOid, readSmallInt, TAG, type Tlv } from '../der/reader.js';
import { SIGNATURE_ALGORITHMS } from '../oids.js';
import { asJwk, publicKeyObject } from './keys.js';
import { checkOffThread } from './signature-thread.js';

/** Digest of each signature algorithm node can check (null: the scheme hashes itself, EdDSA). */
const DIGESTS: Record<string, string | null> = {
  '1.2.840.113549.1.1.4': 'md5',
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.14': 'sha224',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.1': 'sha224',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.10040.4.3': 'sha1', // dsa-with-sha1
  '2.16.840.1.101.3.4.3.2': 'sha256', // dsa-with-sha256
  '1.3.101.112': null,
  '1.3.101.113': null,
};

const HASH_OIDS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

const RSA_PSS = '1.2.840.113549.1.1.10';

export interface SignatureAlgorithm {
  oid: string;
  /** OpenSSL's name (sha256WithRSAEncryption, ecdsa-with-SHA256, ED25519…), else the OID. */
  name: string;
  /** Digest node uses; null for EdDSA; undefined when the algorithm cannot be checked here. */
  digest: string | null | undefined;
  /** RSASSA-PSS salt length (RFC 4055 parameters; MGF1 uses the same digest, as node does). */
  saltLength?: number;
}

/** Reads an AlgorithmIdentifier naming a signature algorithm. */
export function readSignatureAlgorithm(buf: Uint8Array, alg: Tlv): SignatureAlgorithm {
  const [oidTlv, params, extra] = children(buf, expectTag(alg, TAG.SEQUENCE, 'signature algorithm'));
  if (!oidTlv || extra) throw new DerError('malformed signature algorithm', alg.start);
  const oid = readOid(buf, oidTlv);
  const out: SignatureAlgorithm = { oid, name: SIGNATURE_ALGORITHMS[oid] ?? oid, digest: DIGESTS[oid] };
  if (oid === RSA_PSS) {
    // RSASSA-PSS-params: [0] hash (default SHA-1), [1] mask generation, [2] salt length (default 20).
    out.digest = 'sha1';
    out.saltLength = 20;
    if (params?.tag === TAG.SEQUENCE) {
      for (const p of children(buf, params)) {
        const inner = children(buf, p)[0];
        if (!inner) throw new DerError('empty RSASSA-PSS parameter', p.start);
        if (p.tag === 0xa0) {
          const hashOid = children(buf, expectTag(inner, TAG.SEQUENCE, 'hash algorithm'))[0];
          out.digest = hashOid ? HASH_OIDS[readOid(buf, hashOid)] : undefined;
        } else if (p.tag === 0xa2) {
          out.saltLength = readSmallInt(buf, inner);
        }
      }
    }
  }
  return out;
}

/**
 * Signatures that verified, by a SHA-256 of everything the check covered. One enrollment checks its CSR
 * twice (the request workflow on submission, then the CA's issuer on the same bytes): the second check is a
 * hash instead of an ECDSA verification (~45% of the crypto of an enrollment). Only successes are kept, and a
 * hit needs the same algorithm, parameters, key, data and signature bytes, so it answers what the check would.
 */
const verified = new LRUCache<string, true>({ max: 4096 });
const MEMO_MAX_DATA = 16 * 1024;

/** The memo key of a check, or undefined for large signed data (CRLs): hashing it again would cost what the check costs. */
function verificationKey(alg: SignatureAlgorithm, spki: Uint8Array, data: Uint8Array, signature: Uint8Array): string | undefined {
  if (data.length > MEMO_MAX_DATA) return undefined;
  const h = createHash('sha256').update(`${alg.oid}\u0000${alg.digest ?? ''}\u0000${alg.saltLength ?? ''}\u0000`);
  for (const part of [spki, data, signature]) h.update(`${part.length}:`).update(part);
  return h.digest('base64');
}

const rememberedValid = (memo: string | undefined): boolean => memo !== undefined && verified.has(memo);

function remember(memo: string | undefined, ok: boolean): boolean {
  if (ok && memo !== undefined) verified.set(memo, true);
  return ok;
}

/** Forgets every remembered verification (a benchmark measuring the check itself, over repeated inputs). */
export function forgetVerifiedSignatures(): void {
  verified.clear();
}

/** Whether `signature` over `data` verifies with the key of `spki`; false for anything unusable. */
export function verifySignature(alg: SignatureAlgorithm, spki: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  const digest = alg.digest;
  if (digest === undefined) return false;
  const memo = verificationKey(alg, spki, data, signature);
  return rememberedValid(memo) || remember(memo, checkSignature(alg, digest, spki, data, signature));
}

function checkSignature(alg: SignatureAlgorithm, digest: string | null, spki: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = publicKeyObject(spki);
    if (alg.saltLength !== undefined) {
      return verify(digest, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: alg.saltLength }, signature);
    }
    return verify(digest, data, key, signature);
  } catch {
    // A key node cannot use, a digest OpenSSL refuses, a malformed ECDSA signature: not valid.
    return false;
  }
}

/**
 * `verifySignature` with the check on the signature worker thread (signature-thread.ts): for a key seen
 * once, as a CSR's, where importing the key is most of the cost. Remembered like verifySignature's; checked
 * here (checkSignature) when the worker is unavailable.
 */
export async function verifySignatureOffThread(alg: SignatureAlgorithm, spki: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const digest = alg.digest;
  if (digest === undefined) return false;
  const memo = verificationKey(alg, spki, data, signature);
  if (rememberedValid(memo)) return true;
  let jwk: JsonWebKey | undefined;
  try {
    jwk = asJwk(spki);
  } catch {
    return false;
  }
  // Copies: a view would send its whole underlying buffer to the worker.
  const check = {
    digest,
    key: jwk ? { jwk } : { spki: spki.slice() },
    data: data.slice(),
    signature: signature.slice(),
    ...(alg.saltLength !== undefined ? { saltLength: alg.saltLength } : {}),
  };
  return remember(memo, await checkOffThread(check, () => checkSignature(alg, digest, spki, data, signature)));
}
