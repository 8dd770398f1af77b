import * as crypto from 'node:crypto';

/** One-shot digest: crypto.hash (node ≥ 20.12) is twice as fast as createHash for the KDF's short inputs. */
const digestOf: (algorithm: string, data: Uint8Array) => Buffer =
  typeof crypto.hash === 'function' ? (a, d) => crypto.hash(a, d, 'buffer') : (a, d) => crypto.createHash(a).update(d).digest();

/** Digest output (u) and block (v) sizes in bytes, for the digests PKCS#12 files use. */
export const DIGEST_SIZES: Record<string, { u: number; v: number }> = {
  md5: { u: 16, v: 64 },
  sha1: { u: 20, v: 64 },
  sha224: { u: 28, v: 64 },
  sha256: { u: 32, v: 64 },
  sha384: { u: 48, v: 128 },
  sha512: { u: 64, v: 128 },
  'sha512-224': { u: 28, v: 128 },
  'sha512-256': { u: 32, v: 128 },
};

/** Purposes of derived material (RFC 7292 B.3). */
export const KDF_ID = { key: 1, iv: 2, mac: 3 } as const;

/**
 * The PKCS#12 key derivation (RFC 7292 Appendix B.2), by hand: node:crypto exposes PBKDF2 but not this
 * function, which derives the MAC key of every PKCS#12 file and the keys and IVs of the PKCS#12 PBE
 * algorithms. `password` is already the BMPString form (UTF-16BE with a two-byte terminator, or empty
 * for OpenSSL's "no password").
 */
export function pkcs12Kdf(digest: string, password: Uint8Array, salt: Uint8Array, id: number, iterations: number, length: number): Uint8Array {
  const sizes = DIGEST_SIZES[digest];
  if (!sizes) throw new RangeError(`no PKCS#12 KDF for ${digest}`);
  const { u, v } = sizes;
  const D = Buffer.alloc(v, id);
  const fill = (src: Uint8Array): Buffer => {
    const out = Buffer.alloc(v * Math.ceil(src.length / v));
    for (let i = 0; i < out.length; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const I = Buffer.concat([fill(salt), fill(password)]);
  const out = Buffer.alloc(length);
  for (let at = 0; ; at += u) {
    let A = digestOf(digest, Buffer.concat([D, I]));
    for (let r = 1; r < iterations; r++) A = digestOf(digest, A);
    A.copy(out, at, 0, Math.min(u, length - at));
    if (at + u >= length) return out;
    // I_j = (I_j + B + 1) mod 2^(8v) for every v-byte block of I, B being A repeated to v bytes.
    const B = fill(A).subarray(0, v);
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k]! + B[k]! + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
}

/** The BMPString form of a password as PKCS#12 hashes it; '' and OpenSSL's NULL password differ. */
export function bmpPassword(password: string, nullPassword = false): Uint8Array {
  if (nullPassword) return new Uint8Array(0);
  const le = Buffer.from(`${password}\0`, 'utf16le');
  for (let i = 0; i < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1]!, le[i]!];
  return le;
}
