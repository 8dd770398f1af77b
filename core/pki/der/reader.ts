/**
 * A lean DER reader for the hot paths (certificate ingest, CSR → certificate): it walks tag-length-
 * value headers over the original bytes without building an object graph (pkijs/asn1js parse ~600
 * certificates/s here; this kind of walk runs at hundreds of thousands). Strict DER only: definite
 * lengths, minimal length encodings, no value running past its parent. Every failure is a DerError,
 * never an exception of another kind, so callers can answer 400 for any bad input.
 */
export class DerError extends Error {
  constructor(
    message: string,
    /** Byte offset the reader was at. */
    readonly offset: number,
  ) {
    super(`${message} (at byte ${offset})`);
    this.name = 'DerError';
  }
}

/** One TLV: where its header starts, where its value starts and ends. */
export interface Tlv {
  /** The identifier octet as read (class, constructed bit and tag number ≤ 30). */
  tag: number;
  /** Tag number (high-tag-number form decoded). */
  tagNumber: number;
  tagClass: 0 | 1 | 2 | 3;
  constructed: boolean;
  /** Offset of the identifier octet. */
  start: number;
  /** Offset of the first value byte. */
  valueStart: number;
  /** Offset just past the value. */
  end: number;
}

/** Universal tags used by PKIX. */
export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  UTF8_STRING: 0x0c,
  SEQUENCE: 0x30,
  SET: 0x31,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  VISIBLE_STRING: 0x1a,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  NUMERIC_STRING: 0x12,
} as const;

/** Context-specific tag byte: [n] primitive or constructed. */
export const context = (n: number, constructed: boolean): number => 0x80 | (constructed ? 0x20 : 0) | n;

/** Reads the TLV starting at `offset`, which must end by `limit`. */
export function readTlv(buf: Uint8Array, offset: number, limit: number = buf.length): Tlv {
  if (offset >= limit) throw new DerError('truncated: expected a tag', offset);
  const first = buf[offset]!;
  let pos = offset + 1;
  let tagNumber = first & 0x1f;
  if (tagNumber === 0x1f) {
    // High tag number form: base-128, at most 4 bytes (no PKIX structure needs more).
    tagNumber = 0;
    for (let i = 0; ; i++) {
      if (pos >= limit) throw new DerError('truncated tag', pos);
      if (i === 4) throw new DerError('tag number too large', pos);
      const b = buf[pos++]!;
      tagNumber = (tagNumber << 7) | (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
  }
  if (pos >= limit) throw new DerError('truncated: expected a length', pos);
  let length = buf[pos++]!;
  if (length & 0x80) {
    const n = length & 0x7f;
    if (n === 0) throw new DerError('indefinite length is not DER', pos - 1);
    if (n > 4) throw new DerError('length field of more than 4 bytes', pos - 1);
    if (pos + n > limit) throw new DerError('truncated length', pos);
    if (buf[pos] === 0) throw new DerError('length not minimally encoded', pos);
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[pos++]!;
    if (length < 0x80) throw new DerError('length not minimally encoded', pos - n);
  }
  const end = pos + length;
  if (end > limit) throw new DerError(`value of ${length} bytes runs past its container`, pos);
  return {
    tag: first,
    tagNumber,
    tagClass: (first >> 6) as 0 | 1 | 2 | 3,
    constructed: (first & 0x20) !== 0,
    start: offset,
    valueStart: pos,
    end,
  };
}

/** The TLVs directly inside a constructed TLV, in order. */
export function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  if (!parent.constructed) throw new DerError('expected a constructed value', parent.start);
  const out: Tlv[] = [];
  let pos = parent.valueStart;
  while (pos < parent.end) {
    const child = readTlv(buf, pos, parent.end);
    out.push(child);
    pos = child.end;
  }
  return out;
}

/** Throws unless `tlv` has the identifier octet `tag`. */
export function expectTag(tlv: Tlv, tag: number, what: string): Tlv {
  if (tlv.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${tlv.tag.toString(16)}`, tlv.start);
  return tlv;
}

/** The whole input must be one TLV of the expected tag, with nothing after it. */
export function readTop(buf: Uint8Array, tag: number, what: string): Tlv {
  const tlv = expectTag(readTlv(buf, 0), tag, what);
  if (tlv.end !== buf.length) throw new DerError(`${buf.length - tlv.end} bytes after the ${what}`, tlv.end);
  return tlv;
}

export const value = (buf: Uint8Array, tlv: Tlv): Uint8Array => buf.subarray(tlv.valueStart, tlv.end);
export const whole = (buf: Uint8Array, tlv: Tlv): Uint8Array => buf.subarray(tlv.start, tlv.end);

/** Dotted OBJECT IDENTIFIER. */
export function readOid(buf: Uint8Array, tlv: Tlv): string {
  expectTag(tlv, TAG.OID, 'object identifier');
  if (tlv.end === tlv.valueStart) throw new DerError('empty object identifier', tlv.start);
  const parts: number[] = [];
  let n = 0;
  let bits = 0;
  for (let i = tlv.valueStart; i < tlv.end; i++) {
    const b = buf[i]!;
    if (bits === 0 && b === 0x80) throw new DerError('object identifier arc not minimally encoded', i);
    n = n * 128 + (b & 0x7f);
    bits += 7;
    if (bits > 49) throw new DerError('object identifier arc too large', i);
    if ((b & 0x80) === 0) {
      if (parts.length === 0) {
        const top = n < 40 ? 0 : n < 80 ? 1 : 2;
        parts.push(top, n - top * 40);
      } else parts.push(n);
      n = 0;
      bits = 0;
    }
  }
  if (bits !== 0) throw new DerError('truncated object identifier', tlv.end);
  return parts.join('.');
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
export function hex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

/** A non-negative INTEGER as lower-case hex without sign padding (certificate serials). */
export function readUnsignedHex(buf: Uint8Array, tlv: Tlv): string {
  expectTag(tlv, TAG.INTEGER, 'integer');
  let start = tlv.valueStart;
  if (start === tlv.end) throw new DerError('empty integer', tlv.start);
  while (start < tlv.end - 1 && buf[start] === 0) start++;
  return hex(buf.subarray(start, tlv.end));
}

/** A small INTEGER (versions, path lengths, counts): at most 6 bytes. */
export function readSmallInt(buf: Uint8Array, tlv: Tlv): number {
  if (tlv.tag !== TAG.INTEGER && tlv.tag !== TAG.ENUMERATED) throw new DerError('expected an integer', tlv.start);
  const len = tlv.end - tlv.valueStart;
  if (len === 0 || len > 6) throw new DerError('integer out of range', tlv.start);
  let n = buf[tlv.valueStart]! & 0x80 ? -1 : 0;
  for (let i = tlv.valueStart; i < tlv.end; i++) n = n * 256 + buf[i]!;
  return n;
}

export function readBoolean(buf: Uint8Array, tlv: Tlv): boolean {
  expectTag(tlv, TAG.BOOLEAN, 'boolean');
  if (tlv.end - tlv.valueStart !== 1) throw new DerError('boolean of the wrong size', tlv.start);
  return buf[tlv.valueStart] !== 0;
}

/** BIT STRING: its unused-bit count and content bytes. */
export function readBitString(buf: Uint8Array, tlv: Tlv): { unused: number; bytes: Uint8Array } {
  expectTag(tlv, TAG.BIT_STRING, 'bit string');
  if (tlv.end === tlv.valueStart) throw new DerError('empty bit string', tlv.start);
  const unused = buf[tlv.valueStart]!;
  if (unused > 7) throw new DerError('bit string with more than 7 unused bits', tlv.start);
  return { unused, bytes: buf.subarray(tlv.valueStart + 1, tlv.end) };
}

const digits = (buf: Uint8Array, from: number, count: number, at: number): number => {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = buf[i]! - 48;
    if (c < 0 || c > 9) throw new DerError('time with a non-digit', at);
    n = n * 10 + c;
  }
  return n;
};

/** UTCTime (YYMMDDHHMMSSZ, 1950–2049) or GeneralizedTime (YYYYMMDDHHMMSS[.f]Z) as epoch ms. */
export function readTime(buf: Uint8Array, tlv: Tlv): number {
  const len = tlv.end - tlv.valueStart;
  const s = tlv.valueStart;
  let year: number;
  let p: number;
  if (tlv.tag === TAG.UTC_TIME) {
    if (len !== 13 || buf[s + 12] !== 0x5a) throw new DerError('UTCTime must be YYMMDDHHMMSSZ', tlv.start);
    const yy = digits(buf, s, 2, tlv.start);
    year = yy < 50 ? 2000 + yy : 1900 + yy;
    p = s + 2;
  } else if (tlv.tag === TAG.GENERALIZED_TIME) {
    if (len < 15 || buf[tlv.end - 1] !== 0x5a) throw new DerError('GeneralizedTime must be YYYYMMDDHHMMSS[.fff]Z', tlv.start);
    year = digits(buf, s, 4, tlv.start);
    p = s + 4;
  } else {
    throw new DerError('expected a time', tlv.start);
  }
  const month = digits(buf, p, 2, tlv.start);
  const day = digits(buf, p + 2, 2, tlv.start);
  const hour = digits(buf, p + 4, 2, tlv.start);
  const minute = digits(buf, p + 6, 2, tlv.start);
  const second = digits(buf, p + 8, 2, tlv.start);
  let ms = 0;
  if (tlv.tag === TAG.GENERALIZED_TIME && len > 15) {
    if (buf[p + 10] !== 0x2e || len < 17) throw new DerError('GeneralizedTime fraction malformed', tlv.start);
    // Milliseconds from the first three fraction digits; the rest must still be digits.
    const fraction = tlv.end - 1 - (p + 11);
    const take = Math.min(fraction, 3);
    ms = digits(buf, p + 11, take, tlv.start) * 10 ** (3 - take);
    digits(buf, p + 11 + take, fraction - take, tlv.start);
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) throw new DerError('time out of range', tlv.start);
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Any directory string type as text (UTF8, Printable, IA5, T61 as latin1, BMP, Universal). */
export function readString(buf: Uint8Array, tlv: Tlv): string {
  const bytes = value(buf, tlv);
  switch (tlv.tag) {
    case TAG.UTF8_STRING:
      return utf8.decode(bytes);
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.VISIBLE_STRING:
    case TAG.NUMERIC_STRING:
    case TAG.T61_STRING:
      return latin1.decode(bytes);
    case TAG.BMP_STRING: {
      if (bytes.length % 2) throw new DerError('BMPString of odd length', tlv.start);
      let out = '';
      for (let i = 0; i < bytes.length; i += 2) out += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
      return out;
    }
    case TAG.UNIVERSAL_STRING: {
      if (bytes.length % 4) throw new DerError('UniversalString length not a multiple of 4', tlv.start);
      let out = '';
      for (let i = 0; i < bytes.length; i += 4) out += String.fromCodePoint(((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0);
      return out;
    }
    default:
      throw new DerError(`expected a string, found tag 0x${tlv.tag.toString(16)}`, tlv.start);
  }
}

/**
 * Walks every TLV of a blob down to `maxDepth`, reading into OCTET/BIT STRINGs that hold DER (as X.509
 * extensions do) — used to tell what a blob is and to bound work on hostile input.
 */
export function walk(buf: Uint8Array, maxDepth: number, visit?: (tlv: Tlv, depth: number) => void): void {
  const stack: { tlv: Tlv; depth: number }[] = [{ tlv: readTlv(buf, 0), depth: 0 }];
  while (stack.length > 0) {
    const { tlv, depth } = stack.pop()!;
    visit?.(tlv, depth);
    if (!tlv.constructed) continue;
    if (depth + 1 > maxDepth) throw new DerError(`nested deeper than ${maxDepth} levels`, tlv.start);
    for (const child of children(buf, tlv)) stack.push({ tlv: child, depth: depth + 1 });
  }
}
