/**
 * A lean DER writer for issuance: each function returns the complete TLV as bytes, so a certificate is
 * built by nesting calls (seq(int(…), oid(…), …)) with one copy per level and no object graph (pkijs
 * issues ~300 certificates/s here, a P-256 signature alone costs ~27 µs). Output is DER by
 * construction: minimal lengths and integers, sorted SET OF, trailing zero bits dropped from named bits.
 */
import { TAG } from './reader.js';

/** Length octets of a value of `n` bytes. */
function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v & 0xff);
  return [0x80 | out.length, ...out];
}

/** A TLV with identifier octet `tag` around the concatenation of `parts`. */
export function tlv(tag: number, ...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const len = lengthBytes(length);
  const out = Buffer.allocUnsafe(1 + len.length + length);
  out[0] = tag;
  for (let i = 0; i < len.length; i++) out[1 + i] = len[i]!;
  let pos = 1 + len.length;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

export const seq = (...parts: Uint8Array[]): Uint8Array => tlv(TAG.SEQUENCE, ...parts);

/** SET OF: DER orders the encoded elements as byte strings (X.690 §11.6). */
export function setOf(...parts: Uint8Array[]): Uint8Array {
  return tlv(TAG.SET, ...[...parts].sort(Buffer.compare));
}

/** [n] EXPLICIT: the inner TLV wrapped in a constructed context tag. */
export const explicit = (n: number, inner: Uint8Array): Uint8Array => tlv(0xa0 | n, inner);

/** [n] IMPLICIT over the value bytes of a primitive type (or of a constructed one's content). */
export const implicit = (n: number, content: Uint8Array, constructed = false): Uint8Array =>
  tlv(0x80 | (constructed ? 0x20 : 0) | n, content);

const EMPTY = new Uint8Array(0);
export const nul = (): Uint8Array => tlv(TAG.NULL, EMPTY);
export const bool = (v: boolean): Uint8Array => tlv(TAG.BOOLEAN, Uint8Array.of(v ? 0xff : 0x00));
export const octets = (bytes: Uint8Array): Uint8Array => tlv(TAG.OCTET_STRING, bytes);

/** INTEGER from the big-endian magnitude of a non-negative number (leading zeros dropped, sign byte added). */
export function unsignedInt(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const body = magnitude.length === 0 ? Uint8Array.of(0) : magnitude.subarray(start);
  return body[0]! & 0x80 ? tlv(TAG.INTEGER, Uint8Array.of(0), body) : tlv(TAG.INTEGER, body);
}

/** INTEGER from a small safe integer (versions, path lengths); negative values in two's complement. */
export function smallInt(n: number): Uint8Array {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${n}`);
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(((v % 256) + 256) % 256);
    v = Math.floor(v / 256);
  } while (v !== 0 && v !== -1);
  // A sign byte when the top bit disagrees with the sign.
  if (n >= 0 && bytes[0]! & 0x80) bytes.unshift(0);
  if (n < 0 && !(bytes[0]! & 0x80)) bytes.unshift(0xff);
  return tlv(TAG.INTEGER, Uint8Array.from(bytes));
}

/**
 * Encodings by dotted text, bounded by count (OID_CACHE_MAX) and by the length of what is kept (OID_CACHE_MAX_TEXT):
 * texts can come from requests (an otherName SAN's OID), and a text of any length up to the body limit was kept
 * (issue 24: 4,096 entries of up to a megabyte each). Real OIDs are far shorter; longer ones are encoded each time.
 */
const OID_CACHE_MAX = 4096;
export const OID_CACHE_MAX_TEXT = 128;
const oidCache = new Map<string, Uint8Array>();

/** Entries in the OID encoding cache (tests of its bounds). */
export const oidCacheSize = (): number => oidCache.size;

/** OBJECT IDENTIFIER from dotted text (encodings are cached: issuance repeats the same few dozen). */
export function oid(dotted: string): Uint8Array {
  const cached = oidCache.get(dotted);
  if (cached) return cached;
  const arcs = dotted.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new RangeError(`not an object identifier: ${dotted}`);
    return Number(a);
  });
  if (arcs.length < 2 || arcs[0]! > 2 || (arcs[0]! < 2 && arcs[1]! > 39) || arcs.some((a) => !Number.isSafeInteger(a))) {
    throw new RangeError(`not an object identifier: ${dotted}`);
  }
  const body: number[] = [];
  const push = (arc: number): void => {
    const chunk: number[] = [arc % 128];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | v % 128);
    body.push(...chunk);
  };
  push(arcs[0]! * 40 + arcs[1]!);
  for (const a of arcs.slice(2)) push(a);
  const out = tlv(TAG.OID, Uint8Array.from(body));
  // Once full it keeps what it has: the OIDs issuance repeats are the first ever encoded.
  if (oidCache.size < OID_CACHE_MAX && dotted.length <= OID_CACHE_MAX_TEXT) oidCache.set(dotted, out);
  return out;
}

const utf8 = new TextEncoder();
export const utf8String = (s: string): Uint8Array => tlv(TAG.UTF8_STRING, utf8.encode(s));

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
export function printableString(s: string): Uint8Array {
  if (!PRINTABLE.test(s)) throw new RangeError(`not a PrintableString: ${JSON.stringify(s)}`);
  return tlv(TAG.PRINTABLE_STRING, Buffer.from(s, 'latin1'));
}

const ASCII = /^[\x00-\x7f]*$/;
export function ia5String(s: string, tag: number = TAG.IA5_STRING): Uint8Array {
  if (!ASCII.test(s)) throw new RangeError(`not an IA5String: ${JSON.stringify(s)}`);
  return tlv(tag, Buffer.from(s, 'latin1'));
}

/** BIT STRING of whole bytes (keys, signatures). */
export const bitString = (bytes: Uint8Array): Uint8Array => tlv(TAG.BIT_STRING, Uint8Array.of(0), bytes);

/**
 * BIT STRING of named bits (KeyUsage): bit 0 is the most significant bit of the first byte; DER drops
 * trailing zero bits (X.690 §11.2.2).
 */
export function namedBits(bits: readonly number[]): Uint8Array {
  if (bits.length === 0) return tlv(TAG.BIT_STRING, Uint8Array.of(0));
  const highest = Math.max(...bits);
  const bytes = new Uint8Array((highest >> 3) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return tlv(TAG.BIT_STRING, Uint8Array.of(7 - (highest & 7)), bytes);
}

const two = (n: number): string => String(n).padStart(2, '0');

/** Validity time per RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime after; whole seconds, Z. */
export function time(ms: number): Uint8Array {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (!Number.isFinite(ms) || year < 1950 || year > 9999) throw new RangeError(`time out of range: ${ms}`);
  const rest = `${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}Z`;
  return year < 2050
    ? tlv(TAG.UTC_TIME, Buffer.from(`${two(year % 100)}${rest}`, 'latin1'))
    : tlv(TAG.GENERALIZED_TIME, Buffer.from(`${year}${rest}`, 'latin1'));
}
