/**
 * DER writer for the SCEP codec: each helper returns the finished bytes of one value, and `tlv` sizes and
 * copies its parts once. Enough for CMS SignedData/EnvelopedData, certificates and CSRs; nothing more.
 */

/** Bytes taken by the length octets of a content of n bytes. */
function lengthSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : n < 0x1000000 ? 4 : 5;
}

export function encodeLength(n: number): Uint8Array {
  const out = new Uint8Array(lengthSize(n));
  writeLength(out, 0, n);
  return out;
}

function writeLength(out: Uint8Array, at: number, n: number): number {
  const size = lengthSize(n);
  if (size === 1) {
    out[at] = n;
    return 1;
  }
  out[at] = 0x80 | (size - 1);
  for (let i = size - 1, v = n; i >= 1; i--, v = Math.floor(v / 256)) out[at + i] = v & 0xff;
  return size;
}

/** tag + length + the parts concatenated, in one allocation. */
export function tlv(tag: number, parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(1 + lengthSize(length) + length);
  out[0] = tag;
  let o = 1 + writeLength(out, 1, length);
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export const seq = (...parts: Uint8Array[]): Uint8Array => tlv(0x30, parts);
/** A SET whose order is given (SET OF with one element, or where the order is meaningful to readers). */
export const set = (...parts: Uint8Array[]): Uint8Array => tlv(0x31, parts);
/** [n] EXPLICIT / constructed context tag. */
export const ctx = (n: number, ...parts: Uint8Array[]): Uint8Array => tlv(0xa0 | n, parts);
/** [n] IMPLICIT on a primitive value. */
export const ctxPrimitive = (n: number, bytes: Uint8Array): Uint8Array => tlv(0x80 | n, [bytes]);
export const octetString = (bytes: Uint8Array): Uint8Array => tlv(0x04, [bytes]);
export const NULL = Uint8Array.of(0x05, 0x00);

/**
 * DER SET OF: elements sorted by their encodings (X.690 §11.6). Signed attributes must be sorted, because
 * verifiers such as OpenSSL re-encode them before checking the signature.
 */
export function setOf(parts: readonly Uint8Array[], tag = 0x31): Uint8Array {
  const sorted = [...parts].sort((a, b) => {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  });
  return tlv(tag, sorted);
}

const oidCache = new Map<string, Uint8Array>();

/** OBJECT IDENTIFIER from dotted form (encodings of the codec's constant OIDs are memoised). */
export function oid(dotted: string): Uint8Array {
  const hit = oidCache.get(dotted);
  if (hit) return hit;
  const arcs = dotted.split('.').map(Number);
  const body: number[] = [];
  const push = (v: number) => {
    const chunk = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift((x & 0x7f) | 0x80);
    body.push(...chunk);
  };
  push(arcs[0]! * 40 + arcs[1]!);
  for (const a of arcs.slice(2)) push(a);
  const out = tlv(0x06, [Uint8Array.from(body)]);
  if (oidCache.size < 256) oidCache.set(dotted, out);
  return out;
}

/** A non-negative INTEGER from its magnitude (leading zeros dropped, a zero byte added before a high bit). */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  if (m.length === 0) return Uint8Array.of(0x02, 0x01, 0x00);
  return m[0]! & 0x80 ? tlv(0x02, [Uint8Array.of(0), m]) : tlv(0x02, [m]);
}

/** An INTEGER whose content bytes are already DER (a serial number copied from a certificate). */
export const integerContent = (bytes: Uint8Array): Uint8Array => tlv(0x02, [bytes]);

export function smallInteger(n: number): Uint8Array {
  if (n < 0 || n > 0x7fffff) throw new RangeError('smallInteger out of range');
  if (n < 0x80) return Uint8Array.of(0x02, 0x01, n);
  if (n < 0x8000) return Uint8Array.of(0x02, 0x02, n >> 8, n & 0xff);
  return Uint8Array.of(0x02, 0x03, n >> 16, (n >> 8) & 0xff, n & 0xff);
}

/** PrintableString when every character fits one byte (SCEP attributes), else UTF8String. */
export function printableString(s: string): Uint8Array {
  return /^[\u0000-\u00ff]*$/.test(s) ? tlv(0x13, [Buffer.from(s, 'latin1')]) : tlv(0x0c, [Buffer.from(s, 'utf8')]);
}

export const utf8String = (s: string): Uint8Array => tlv(0x0c, [Buffer.from(s, 'utf8')]);

/** UTCTime before 2050, GeneralizedTime after (RFC 5280 §4.1.2.5), whole seconds. */
export function time(d: Date): Uint8Array {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const year = d.getUTCFullYear();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  if (year >= 1950 && year < 2050) return tlv(0x17, [Buffer.from(`${digits.slice(2)}Z`, 'latin1')]);
  return tlv(0x18, [Buffer.from(`${digits}Z`, 'latin1')]);
}

/** AlgorithmIdentifier with absent parameters, or the given DER parameters. */
export const algorithm = (dotted: string, params?: Uint8Array): Uint8Array => (params ? seq(oid(dotted), params) : seq(oid(dotted)));
