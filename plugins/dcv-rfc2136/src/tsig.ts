/**
 * TSIG (RFC 8945) with HMAC-SHA256 / HMAC-SHA512: signing a request and verifying the server's answer.
 *
 * Written by hand because no well-kept npm DNS library does it: dns-packet (used for everything else) knows the
 * TSIG type number only and treats its RDATA as opaque bytes, and the MAC is computed over a reconstruction of
 * the message (the answer as it was before the server appended its TSIG record, with the original ID and one
 * additional record fewer) plus the "TSIG variables", which only code that owns the wire bytes can build.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TsigAlgorithm = 'hmac-sha256' | 'hmac-sha512';

export interface TsigKey {
  /** Key name as configured on the server (`certwright-update`). */
  name: string;
  algorithm: TsigAlgorithm;
  secret: Buffer;
}

const HASH: Record<TsigAlgorithm, string> = { 'hmac-sha256': 'sha256', 'hmac-sha512': 'sha512' };
const TYPE_TSIG = 250;
const CLASS_ANY = 255;
/** Seconds of clock difference either side that the request allows (RFC 8945 recommends 300). */
export const FUDGE = 300;

/** TSIG error codes (RFC 8945 §3 / IANA): what the server's TSIG record says went wrong. */
export const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** A domain name in canonical wire form: lower case, uncompressed, ending in the root label. */
export function wireName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').toLowerCase().split('.').filter((l) => l.length > 0);
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'utf8');
    if (bytes.length > 63) throw new RangeError(`DNS label longer than 63 bytes: ${label}`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
function u48(n: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
}

/** The TSIG variables that follow the message in the MAC input (RFC 8945 §4.3.3). */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  return Buffer.concat([wireName(key.name), u16(CLASS_ANY), u32(0), wireName(key.algorithm), u48(timeSigned), u16(fudge), u16(error), u16(other.length), other]);
}

function hmac(key: TsigKey, ...parts: Buffer[]): Buffer {
  const h = createHmac(HASH[key.algorithm], key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Appends a TSIG record to `message` (an encoded request without one). Answers the signed wire and its MAC. */
export function signRequest(message: Buffer, key: TsigKey, timeSigned: number): { wire: Buffer; mac: Buffer } {
  const mac = hmac(key, message, variables(key, timeSigned, FUDGE, 0, Buffer.alloc(0)));
  const rdata = Buffer.concat([wireName(key.algorithm), u48(timeSigned), u16(FUDGE), u16(mac.length), mac, u16(message.readUInt16BE(0)), u16(0), u16(0)]);
  const rr = Buffer.concat([wireName(key.name), u16(TYPE_TSIG), u16(CLASS_ANY), u32(0), u16(rdata.length), rdata]);
  const head = Buffer.from(message);
  head.writeUInt16BE(head.readUInt16BE(10) + 1, 10);
  return { wire: Buffer.concat([head, rr]), mac };
}

/** Offset just past the (possibly compressed) name at `offset`. */
function skipName(buf: Buffer, offset: number): number {
  for (;;) {
    if (offset >= buf.length) throw new RangeError('truncated DNS name');
    const len = buf[offset]!;
    if (len === 0) return offset + 1;
    if ((len & 0xc0) === 0xc0) return offset + 2;
    offset += len + 1;
  }
}

/** Reads a name (following compression pointers), lower case, without the trailing dot. */
function readName(buf: Buffer, offset: number): string {
  const labels: string[] = [];
  for (let hops = 0; hops < 64; hops++) {
    const len = buf[offset];
    if (len === undefined) throw new RangeError('truncated DNS name');
    if (len === 0) return labels.join('.').toLowerCase();
    if ((len & 0xc0) === 0xc0) {
      offset = buf.readUInt16BE(offset) & 0x3fff;
      continue;
    }
    labels.push(buf.subarray(offset + 1, offset + 1 + len).toString('utf8'));
    offset += len + 1;
  }
  throw new RangeError('DNS name compression loop');
}

export type AnswerSignature =
  | { state: 'unsigned' }
  /** The server's TSIG carries an error (BADSIG, BADKEY, BADTIME): it did not accept the request's signature. */
  | { state: 'error'; error: number; name: string }
  | { state: 'invalid'; reason: string }
  | { state: 'valid' };

/** Checks the TSIG record closing `answer` (the server's reply to a request whose MAC was `requestMac`). */
export function verifyAnswer(answer: Buffer, requestMac: Buffer, key: TsigKey, nowSeconds: number): AnswerSignature {
  const qd = answer.readUInt16BE(4);
  const rrs = answer.readUInt16BE(6) + answer.readUInt16BE(8) + answer.readUInt16BE(10);
  if (answer.readUInt16BE(10) === 0) return { state: 'unsigned' };
  let offset = 12;
  for (let i = 0; i < qd; i++) offset = skipName(answer, offset) + 4;
  let last = offset;
  for (let i = 0; i < rrs; i++) {
    last = offset;
    const afterName = skipName(answer, offset);
    offset = afterName + 10 + answer.readUInt16BE(afterName + 8);
  }
  const tsigStart = last;
  const afterOwner = skipName(answer, tsigStart);
  if (answer.readUInt16BE(afterOwner) !== TYPE_TSIG) return { state: 'unsigned' };
  const owner = readName(answer, tsigStart);
  let p = afterOwner + 10;
  const algorithm = readName(answer, p);
  p = skipName(answer, p);
  const timeSigned = answer.readUIntBE(p, 6);
  const fudge = answer.readUInt16BE(p + 6);
  const macSize = answer.readUInt16BE(p + 8);
  const mac = answer.subarray(p + 10, p + 10 + macSize);
  p += 10 + macSize;
  const originalId = answer.readUInt16BE(p);
  const error = answer.readUInt16BE(p + 2);
  const otherLen = answer.readUInt16BE(p + 4);
  const other = answer.subarray(p + 6, p + 6 + otherLen);
  const name = TSIG_ERRORS[error] ?? `TSIG error ${error}`;
  if (error !== 0 && macSize === 0) return { state: 'error', error, name };
  if (owner !== key.name.replace(/\.$/, '').toLowerCase()) return { state: 'invalid', reason: `signed with key "${owner}", not "${key.name}"` };
  if (algorithm !== key.algorithm) return { state: 'invalid', reason: `signed with ${algorithm}, not ${key.algorithm}` };
  // The answer as the server signed it: without its TSIG record, one additional record fewer, the original ID.
  const unsigned = Buffer.from(answer.subarray(0, tsigStart));
  unsigned.writeUInt16BE(originalId, 0);
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  const expected = hmac(key, u16(requestMac.length), requestMac, unsigned, variables(key, timeSigned, fudge, error, Buffer.from(other)));
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return { state: 'invalid', reason: 'the MAC of the answer does not verify' };
  if (error !== 0) return { state: 'error', error, name };
  if (Math.abs(nowSeconds - timeSigned) > fudge) return { state: 'invalid', reason: `the answer was signed ${nowSeconds - timeSigned} s away from this clock (fudge ${fudge} s)` };
  return { state: 'valid' };
}
