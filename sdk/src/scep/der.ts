/**
 * A small DER/BER reader for the SCEP codec. Why not asn1js/pkijs: a pkiMessage is read on every request and
 * pkijs builds a full object graph (milliseconds per message, more than the RSA operation itself); here a
 * TLV is four offsets into the caller's buffer, nothing is copied until a field is asked for, and every
 * structural problem is a ScepError('badRequest'). BER indefinite lengths and constructed OCTET STRINGs are
 * accepted because some CMS producers stream their output.
 */
import { ScepError } from './errors.js';

/** One tag-length-value, as offsets into `buf`. */
export interface Tlv {
  /** The identifier octet: class, constructed bit and tag number (< 31). */
  readonly tag: number;
  readonly buf: Uint8Array;
  readonly start: number;
  readonly contentStart: number;
  /** Exclusive end of the content (the end-of-contents octets for an indefinite length). */
  readonly contentEnd: number;
  /** Exclusive end of the whole encoding. */
  readonly end: number;
  readonly depth: number;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  VISIBLE_STRING: 0x1a,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

const MAX_DEPTH = 40;

export function malformed(what: string): ScepError {
  return new ScepError('badRequest', `Malformed DER: ${what}`);
}

function readTlv(buf: Uint8Array, pos: number, limit: number, depth: number): Tlv {
  if (depth > MAX_DEPTH) throw malformed('nesting too deep');
  if (pos + 2 > limit) throw malformed('truncated');
  const tag = buf[pos]!;
  if ((tag & 0x1f) === 0x1f) throw malformed('high tag numbers are not used here');
  const first = buf[pos + 1]!;
  let contentStart = pos + 2;
  if (first === 0x80) {
    // Indefinite length (BER): constructed only, ends at the first end-of-contents at this level.
    if ((tag & 0x20) === 0) throw malformed('indefinite length on a primitive value');
    let p = contentStart;
    for (;;) {
      if (p + 2 > limit) throw malformed('truncated (no end-of-contents)');
      if (buf[p] === 0 && buf[p + 1] === 0) return { tag, buf, start: pos, contentStart, contentEnd: p, end: p + 2, depth };
      p = readTlv(buf, p, limit, depth + 1).end;
    }
  }
  let length = first;
  if (first > 0x80) {
    const n = first & 0x7f;
    if (n > 4) throw malformed('length too large');
    if (contentStart + n > limit) throw malformed('truncated length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[contentStart + i]!;
    contentStart += n;
  }
  const end = contentStart + length;
  if (end > limit) throw malformed('truncated');
  return { tag, buf, start: pos, contentStart, contentEnd: end, end, depth };
}

/** The single TLV filling `buf` exactly. */
export function parseDer(buf: Uint8Array): Tlv {
  if (!(buf instanceof Uint8Array)) throw malformed('not bytes');
  const t = readTlv(buf, 0, buf.length, 0);
  if (t.end !== buf.length) throw malformed('trailing bytes after the value');
  return t;
}

/** The TLVs inside a constructed value. */
export function children(t: Tlv): Tlv[] {
  if ((t.tag & 0x20) === 0) throw malformed(`tag 0x${t.tag.toString(16)} is not constructed`);
  const out: Tlv[] = [];
  for (let p = t.contentStart; p < t.contentEnd; ) {
    const c = readTlv(t.buf, p, t.contentEnd, t.depth + 1);
    out.push(c);
    p = c.end;
  }
  return out;
}

export function expectTag(t: Tlv | undefined, tag: number, what: string): Tlv {
  if (!t) throw malformed(`${what} is missing`);
  if (t.tag !== tag) throw malformed(`${what}: expected tag 0x${tag.toString(16)}, found 0x${t.tag.toString(16)}`);
  return t;
}

/** The content bytes of a primitive value (a view, not a copy). */
export function content(t: Tlv): Uint8Array {
  return t.buf.subarray(t.contentStart, t.contentEnd);
}

/** The whole encoding (a view). */
export function raw(t: Tlv): Uint8Array {
  return t.buf.subarray(t.start, t.end);
}

/** OCTET STRING content, joining the segments of a BER constructed string. */
export function octets(t: Tlv, what: string): Uint8Array {
  if ((t.tag & 0x1f) !== TAG.OCTET_STRING && (t.tag & 0xc0) === 0) throw malformed(`${what} is not an OCTET STRING`);
  if ((t.tag & 0x20) === 0) return content(t);
  const parts = children(t).map((c) => octets(c, what));
  return Buffer.concat(parts);
}

export function readOid(t: Tlv | undefined, what: string): string {
  const b = content(expectTag(t, TAG.OID, what));
  if (b.length === 0 || (b[b.length - 1]! & 0x80) !== 0) throw malformed(`${what}: bad OBJECT IDENTIFIER`);
  const arcs: number[] = [];
  let v = 0;
  for (const byte of b) {
    v = v * 128 + (byte & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 128) throw malformed(`${what}: OBJECT IDENTIFIER arc too large`);
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    }
  }
  return arcs.join('.');
}

/** A small INTEGER (version numbers). */
export function readSmallInt(t: Tlv | undefined, what: string): number {
  const b = content(expectTag(t, TAG.INTEGER, what));
  if (b.length === 0 || b.length > 4) throw malformed(`${what}: INTEGER out of range`);
  let v = 0;
  for (const byte of b) v = v * 256 + byte;
  return b[0]! & 0x80 ? v - 2 ** (8 * b.length) : v;
}

/** Character strings used by SCEP attributes, challengePassword and names. */
export function readString(t: Tlv | undefined, what: string): string {
  if (!t) throw malformed(`${what} is missing`);
  const b = content(t);
  switch (t.tag) {
    case TAG.UTF8_STRING:
      return Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8');
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.VISIBLE_STRING:
    case TAG.T61_STRING:
      return Buffer.from(b.buffer, b.byteOffset, b.length).toString('latin1');
    case TAG.BMP_STRING: {
      if (b.length % 2) throw malformed(`${what}: odd BMPString`);
      let s = '';
      for (let i = 0; i < b.length; i += 2) s += String.fromCharCode((b[i]! << 8) | b[i + 1]!);
      return s;
    }
    case TAG.UNIVERSAL_STRING: {
      if (b.length % 4) throw malformed(`${what}: bad UniversalString`);
      let s = '';
      for (let i = 0; i < b.length; i += 4) s += String.fromCodePoint(((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0);
      return s;
    }
    default:
      throw malformed(`${what}: tag 0x${t.tag.toString(16)} is not a character string`);
  }
}

/** UTCTime or GeneralizedTime (signingTime, validity). */
export function readTime(t: Tlv | undefined, what: string): Date {
  if (!t) throw malformed(`${what} is missing`);
  const s = Buffer.from(content(t)).toString('latin1');
  let m: RegExpMatchArray | null;
  let iso: string;
  if (t.tag === TAG.UTC_TIME && (m = s.match(/^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?Z$/))) {
    const yy = Number(m[1]);
    iso = `${yy < 50 ? 2000 + yy : 1900 + yy}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}Z`;
  } else if (t.tag === TAG.GENERALIZED_TIME && (m = s.match(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\.\d+)?Z$/))) {
    iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] ?? ''}Z`;
  } else {
    throw malformed(`${what}: bad time`);
  }
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw malformed(`${what}: bad time`);
  return d;
}

/** Lower-case hex of an INTEGER's magnitude, without the sign-padding zero bytes ("0" for zero). */
export function integerHex(t: Tlv | undefined, what: string): string {
  const b = content(expectTag(t, TAG.INTEGER, what));
  if (b.length === 0) throw malformed(`${what}: empty INTEGER`);
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return Buffer.from(b.subarray(i)).toString('hex');
}
