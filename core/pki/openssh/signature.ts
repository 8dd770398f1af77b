import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { SSH_CURVES, type SshKeyMaterial } from './keys.js';
import { SshReader } from './wire.js';

/** RSA signature formats and their hashes (RFC 8332; ssh-rsa is the SHA-1 legacy). */
const RSA_FORMATS: Record<string, string> = { 'ssh-rsa': 'sha1', 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' };

const leftPad = (bytes: Uint8Array, size: number): Buffer => {
  const out = Buffer.alloc(Math.max(size, bytes.length));
  out.set(bytes, out.length - bytes.length);
  return out;
};

/**
 * Checks an SSH signature blob (string format, string signature) over `data` with `key`. The format
 * is returned even when the check cannot run. `valid` is null for keys Node cannot use here (DSA,
 * security keys, whose signatures cover authenticator data rather than the message alone), false
 * for a format that does not fit the key or a signature that does not verify.
 */
export function verifySshSignature(key: SshKeyMaterial, signatureBlob: Uint8Array, data: Uint8Array): { format: string; valid: boolean | null } {
  const reader = new SshReader(signatureBlob, 'signature');
  const format = reader.text();
  const sig = reader.string();
  reader.end();
  if (!key.jwk) return { format, valid: null };
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: key.jwk, format: 'jwk' });
  } catch {
    // A point off its curve and the like: nothing can verify against it.
    return { format, valid: false };
  }
  const check = (hash: string | null, signature: Uint8Array, dsaEncoding?: 'ieee-p1363'): boolean => {
    try {
      return verify(hash, data, dsaEncoding ? { key: publicKey, dsaEncoding } : publicKey, signature);
    } catch {
      return false;
    }
  };
  if (key.type === 'ssh-ed25519') return { format, valid: format === 'ssh-ed25519' && sig.length === 64 && check(null, sig) };
  if (key.type === 'ssh-rsa') {
    const hash = RSA_FORMATS[format];
    if (!hash) return { format, valid: false };
    // OpenSSH accepts signatures shorter than the modulus (leading zeros dropped); OpenSSL does not.
    const modulusBytes = Math.ceil(key.bits / 8);
    return { format, valid: sig.length <= modulusBytes && check(hash, leftPad(sig, modulusBytes)) };
  }
  const curve = SSH_CURVES[key.type.slice('ecdsa-sha2-'.length)];
  if (key.type.startsWith('ecdsa-sha2-') && curve) {
    if (format !== key.type) return { format, valid: false };
    // RFC 5656 §3.1.2: the signature blob holds mpint r and mpint s; Node wants r || s.
    const inner = new SshReader(sig, 'ECDSA signature');
    const r = inner.mpint();
    const s = inner.mpint();
    inner.end();
    if (r.length > curve.size || s.length > curve.size) return { format, valid: false };
    return { format, valid: check(curve.hash, Buffer.concat([leftPad(r, curve.size), leftPad(s, curve.size)]), 'ieee-p1363') };
  }
  return { format, valid: null };
}
