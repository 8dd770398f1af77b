/**
 * RSA PKCS#1 v1.5 key transport (RFC 5652 §6.2.1 with rsaEncryption) for the content-encryption key.
 *
 * Why the padding is removed here: Node 20 refuses privateDecrypt with RSA_PKCS1_PADDING (CVE-2023-46809),
 * and an error that says "bad padding" is a Bleichenbacher/Marvin oracle anyway. So the ciphertext is raised
 * to the private exponent with RSA_NO_PADDING and unpadded with implicit rejection: when the padding (or the
 * key length) is wrong, the result is a pseudo-random key derived from a secret of the private key and the
 * ciphertext. It is deterministic, of the cipher's key length, and the envelope then fails exactly as with a
 * wrong key. No branch depends on the plaintext bytes; the real and synthetic keys are merged by masks.
 */
import { constants, createHash, createHmac, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import { ScepError } from './errors.js';

/**
 * The per-key secret: SHA-256 of the private exponent. Derived on each call (a JWK export is ~15 µs,
 * a PKCS#8 one ~300 µs), so nothing about a key outlives its KeyObject.
 */
function keySecret(privateKey: KeyObject): Buffer {
  const { d } = privateKey.export({ format: 'jwk' });
  if (typeof d !== 'string') throw new ScepError('badAlg', 'Key transport needs a private key');
  return createHash('sha256').update('certwright scep implicit rejection\0').update(d).digest();
}

/** The pseudo-random key used on a padding failure: HMAC-SHA256(HMAC-SHA256(secret, ciphertext), i || label). */
export function syntheticKey(privateKey: KeyObject, ciphertext: Uint8Array, length: number): Buffer {
  const kdk = createHmac('sha256', keySecret(privateKey)).update(ciphertext).digest();
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < length; i++) {
    blocks.push(createHmac('sha256', kdk).update(Uint8Array.of(i >> 8, i & 0xff, length >> 8, length & 0xff)).update('synthetic key').digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

function modulusBytes(key: KeyObject): number {
  if (key.asymmetricKeyType !== 'rsa') throw new ScepError('badAlg', `Key transport needs an RSA key, not ${key.asymmetricKeyType ?? 'a secret key'}`);
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (!bits) throw new ScepError('badAlg', 'The RSA key has no modulus length');
  return Math.ceil(bits / 8);
}

/** 1 when x === 0, else 0, for 0 <= x < 2^31, without a branch. */
const isZero = (x: number): number => (((x | -x) >>> 31) ^ 1) & 1;

/**
 * The content-encryption key of `keyLength` bytes carried in `encryptedKey`. Never throws on a bad
 * ciphertext: a wrong padding, a wrong length or a value out of range all give the synthetic key.
 */
export function unwrapContentKey(privateKey: KeyObject, encryptedKey: Uint8Array, keyLength: number): Uint8Array {
  const k = modulusBytes(privateKey);
  const synthetic = syntheticKey(privateKey, encryptedKey, keyLength);
  let em: Uint8Array;
  let good = 1;
  try {
    const c = new Uint8Array(k);
    if (encryptedKey.length > k) throw new RangeError('ciphertext longer than the modulus');
    c.set(encryptedKey, k - encryptedKey.length);
    em = privateDecrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, c);
  } catch {
    // Too long or >= n: facts about the public ciphertext, not about the plaintext.
    em = new Uint8Array(k);
    good = 0;
  }
  // EM = 0x00 || 0x02 || PS (>= 8 non-zero bytes) || 0x00 || M, |M| = keyLength.
  good &= isZero(em[0]!) & isZero(em[1]! ^ 0x02);
  let zeroIndex = 0;
  let looking = 1;
  for (let i = 2; i < k; i++) {
    const hit = looking & isZero(em[i]!);
    zeroIndex |= i & -hit;
    looking &= hit ^ 1;
  }
  good &= looking ^ 1; // a separator exists
  good &= ((zeroIndex - 10) >>> 31) ^ 1; // PS is at least 8 bytes: zeroIndex >= 10
  good &= isZero((k - zeroIndex - 1) ^ keyLength); // M has the cipher's key length
  const mask = -good & 0xff;
  const out = new Uint8Array(keyLength);
  const offset = k - keyLength; // when good, M is exactly the last keyLength bytes
  for (let j = 0; j < keyLength; j++) out[j] = (em[offset + j]! & mask) | (synthetic[j]! & ~mask & 0xff);
  return out;
}

/** Encrypts a content-encryption key to an RSA public key (PKCS#1 v1.5, which node still allows here). */
export function wrapContentKey(recipientPublicKey: KeyObject, key: Uint8Array): Uint8Array {
  modulusBytes(recipientPublicKey);
  return publicEncrypt({ key: recipientPublicKey, padding: constants.RSA_PKCS1_PADDING }, key);
}
