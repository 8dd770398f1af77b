// Strict base64 decoding. Buffer.from(s, 'base64') silently skips invalid
// characters and ignores trailing bits, so a corrupted value could decode to
// *something*; we only accept input that re-encodes to exactly itself.

const URL_SAFE = /^[A-Za-z0-9_-]*$/;
const ANY_ALPHABET = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decode unpadded base64url (the form Buffer emits); null if not canonical. */
export function decodeBase64Url(s: string): Buffer | null {
  if (!URL_SAFE.test(s)) return null;
  const buf = Buffer.from(s, 'base64url');
  return buf.toString('base64url') === s ? buf : null;
}

/** Decode standard base64 or base64url, padded or not; null if not canonical. */
export function decodeBase64Any(s: string): Buffer | null {
  if (!ANY_ALPHABET.test(s)) return null;
  if (s.includes('=') && s.length % 4 !== 0) return null;
  const normalized = s.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  const buf = Buffer.from(normalized, 'base64url');
  return buf.toString('base64url') === normalized ? buf : null;
}
