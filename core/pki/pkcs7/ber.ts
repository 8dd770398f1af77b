import { DerError } from '../der/reader.js';

/**
 * BER → DER framing, for the objects that are often BER in the wild (PKCS#7 / CMS from S/MIME and
 * Windows, PKCS#12 from some exporters): indefinite lengths become definite, constructed universal
 * strings become primitive, long-form lengths become minimal. Only framing is touched (SET OF order,
 * BOOLEAN values, implicitly tagged constructed strings are left as they are: callers of [0] IMPLICIT
 * OCTET STRING fields accept both forms). Input that is already DER comes back unchanged (same bytes),
 * so the strict reader keeps its fast path. Depth is bounded: hostile nesting fails with a DerError.
 */
export function berToDer(buf: Uint8Array, maxDepth = 64): Uint8Array {
  const state = { changed: false };
  const { next, parts } = element(buf, 0, buf.length, 0, maxDepth, state);
  if (next !== buf.length) throw new DerError(`${buf.length - next} bytes after the value`, next);
  return state.changed ? concat(parts) : buf;
}

/** Universal string types that BER may send in constructed (chunked) form. */
const STRING_TAGS = new Set([3, 4, 12, 18, 19, 20, 21, 22, 25, 26, 27, 28, 30]);

interface Out {
  next: number;
  /** The element's DER, as pieces (joined once at the end). */
  parts: Uint8Array[];
  length: number;
}

function element(buf: Uint8Array, pos: number, limit: number, depth: number, maxDepth: number, state: { changed: boolean }): Out {
  const start = pos;
  if (pos >= limit) throw new DerError('truncated: expected a tag', pos);
  const first = buf[pos++]!;
  if ((first & 0x1f) === 0x1f) {
    for (let i = 0; ; i++) {
      if (pos >= limit) throw new DerError('truncated tag', pos);
      if (i === 4) throw new DerError('tag number too large', pos);
      if ((buf[pos++]! & 0x80) === 0) break;
    }
  }
  const identifier = buf.subarray(start, pos);
  const constructed = (first & 0x20) !== 0;
  if (pos >= limit) throw new DerError('truncated: expected a length', pos);
  const lengthStart = pos;
  let length = buf[pos++]!;
  let indefinite = false;
  if (length === 0x80) {
    if (!constructed) throw new DerError('indefinite length on a primitive value', lengthStart);
    indefinite = true;
  } else if (length & 0x80) {
    const n = length & 0x7f;
    if (n > 4) throw new DerError('length field of more than 4 bytes', lengthStart);
    if (pos + n > limit) throw new DerError('truncated length', pos);
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[pos++]!;
    if (n !== minimalLengthBytes(length)) state.changed = true;
  }
  if (!constructed) {
    if (pos + length > limit) throw new DerError(`value of ${length} bytes runs past its container`, pos);
    const content = buf.subarray(pos, pos + length);
    return { next: pos + length, parts: [identifier, lengthBytes(length), content], length: identifier.length + lengthSize(length) + length };
  }
  if (depth + 1 > maxDepth) throw new DerError(`nested deeper than ${maxDepth} levels`, start);
  if (indefinite) state.changed = true;
  const end = indefinite ? limit : pos + length;
  if (end > limit) throw new DerError(`value of ${length} bytes runs past its container`, pos);
  const kids: Out[] = [];
  for (;;) {
    if (indefinite) {
      if (pos + 2 > limit) throw new DerError('indefinite length without an end-of-contents marker', pos);
      if (buf[pos] === 0 && buf[pos + 1] === 0) {
        pos += 2;
        break;
      }
    } else if (pos >= end) break;
    const kid = element(buf, pos, end, depth + 1, maxDepth, state);
    kids.push(kid);
    pos = kid.next;
  }
  if ((first & 0xc0) === 0 && STRING_TAGS.has(first & 0x1f)) {
    state.changed = true;
    return flattenString(first & 0xdf, first === 0x23, kids, pos, start);
  }
  const contentLength = kids.reduce((n, k) => n + k.length, 0);
  const parts = [identifier, lengthBytes(contentLength), ...kids.flatMap((k) => k.parts)];
  return { next: pos, parts, length: identifier.length + lengthSize(contentLength) + contentLength };
}

/**
 * A constructed string's chunks joined into one primitive value. Every chunk has already been
 * normalised to [identifier, length, content]; BIT STRING chunks each carry an unused-bits octet.
 */
function flattenString(tag: number, bitString: boolean, kids: Out[], next: number, at: number): Out {
  const chunks: Uint8Array[] = [];
  let unused = 0;
  for (const [i, kid] of kids.entries()) {
    if (kid.parts.length !== 3 || (kid.parts[0]![0]! & 0xdf) !== tag) throw new DerError('constructed string with a chunk of another type', at);
    let value = kid.parts[2]!;
    if (bitString) {
      if (value.length === 0) throw new DerError('empty bit string chunk', at);
      if (value[0] !== 0 && i !== kids.length - 1) throw new DerError('unused bits in a middle bit string chunk', at);
      unused = value[0]!;
      value = value.subarray(1);
    }
    chunks.push(value);
  }
  const content = concat(bitString ? [Uint8Array.of(unused), ...chunks] : chunks);
  return { next, parts: [Uint8Array.of(tag), lengthBytes(content.length), content], length: 1 + lengthSize(content.length) + content.length };
}

const minimalLengthBytes = (n: number): number => (n < 0x80 ? 0 : n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4);
const lengthSize = (n: number): number => 1 + minimalLengthBytes(n);

/** A DER length field. */
function lengthBytes(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

function concat(parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
