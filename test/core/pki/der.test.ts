import * as asn1js from 'asn1js';
import fc from 'fast-check';
import t from 'tap';
import { DerError, readBitString, readOid, readSmallInt, readString, readTime, readTlv, readTop, readUnsignedHex, children, TAG } from '../../../core/pki/der/reader.js';
import { bitString, bool, ia5String, namedBits, oid, printableString, seq, setOf, smallInt, time, tlv, unsignedInt, utf8String } from '../../../core/pki/der/writer.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const asn1 = (block: { toBER(): ArrayBuffer }): string => Buffer.from(block.toBER()).toString('hex');

t.test('the writer encodes as asn1js does (DER by construction)', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (magnitude) => {
      // asn1js wants the two's-complement content: a sign byte when the top bit is set.
      let start = 0;
      while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
      const body = magnitude.subarray(start);
      const content = body[0]! & 0x80 ? Buffer.concat([Buffer.of(0), body]) : Buffer.from(body);
      return hex(unsignedInt(magnitude)) === asn1(new asn1js.Integer({ valueHex: content }));
    }),
    { numRuns: 500 },
  );
  fc.assert(fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (n) => hex(smallInt(n)) === asn1(new asn1js.Integer({ value: n }))), { numRuns: 500 });
  const arc = fc.integer({ min: 0, max: 2 ** 31 });
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 39 }), fc.array(arc, { maxLength: 8 }), (a, b, rest) => {
      const dotted = [a, b, ...rest].join('.');
      return hex(oid(dotted)) === asn1(new asn1js.ObjectIdentifier({ value: dotted }));
    }),
    { numRuns: 500 },
  );
  fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => hex(utf8String(s)) === asn1(new asn1js.Utf8String({ value: s }))), { numRuns: 300 });
  fc.assert(fc.property(fc.uint8Array({ maxLength: 70_000 }), (b) => hex(bitString(b)) === asn1(new asn1js.BitString({ valueHex: b, unusedBits: 0 }))), { numRuns: 50 });
  t.equal(hex(bool(true)), asn1(new asn1js.Boolean({ value: true })), 'BOOLEAN TRUE is ff');
  t.equal(hex(printableString('FR')), asn1(new asn1js.PrintableString({ value: 'FR' })));
  t.equal(hex(ia5String('a@b.c')), asn1(new asn1js.IA5String({ value: 'a@b.c' })));
  t.equal(hex(seq(smallInt(1), seq())), asn1(new asn1js.Sequence({ value: [new asn1js.Integer({ value: 1 }), new asn1js.Sequence()] })));
});

t.test('lengths: short and long forms, minimal', async (t) => {
  for (const n of [0, 1, 127, 128, 255, 256, 65_535, 65_536, 1_000_000]) {
    const encoded = tlv(TAG.OCTET_STRING, new Uint8Array(n));
    const read = readTop(encoded, TAG.OCTET_STRING, 'octets');
    t.equal(read.end - read.valueStart, n, `${n} bytes read back`);
    t.equal(read.valueStart, n < 128 ? 2 : n < 256 ? 3 : n < 65_536 ? 4 : 5, `${n}: minimal length octets`);
  }
});

t.test('reader ↔ writer round trips', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 33 }), (m) => {
      const expected = Buffer.from(m).toString('hex').replace(/^(00)+(?=.)/, '') || '00';
      return readUnsignedHex(unsignedInt(m), readTlv(unsignedInt(m), 0)) === (m.length === 0 ? '00' : expected);
    }),
  );
  fc.assert(fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (n) => readSmallInt(smallInt(n), readTlv(smallInt(n), 0)) === n));
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 39 }), fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 6 }), (a, b, rest) => {
      const dotted = [a, b, ...rest].join('.');
      const encoded = oid(dotted);
      return readOid(encoded, readTlv(encoded, 0)) === dotted;
    }),
  );
  fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 50 }), (s) => readString(utf8String(s), readTlv(utf8String(s), 0)) === s));
  // Whole seconds from 1950 to 9999: UTCTime through 2049, GeneralizedTime after.
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(1950, 0, 1) / 1000, max: Date.UTC(9999, 11, 31, 23, 59, 59) / 1000 }), (s) => {
      const encoded = time(s * 1000);
      const expectedTag = new Date(s * 1000).getUTCFullYear() < 2050 ? TAG.UTC_TIME : TAG.GENERALIZED_TIME;
      return encoded[0] === expectedTag && readTime(encoded, readTlv(encoded, 0)) === s * 1000;
    }),
  );
  t.equal(Buffer.from(time(Date.UTC(2049, 11, 31, 23, 59, 59))).subarray(2).toString(), '491231235959Z', 'last UTCTime');
  t.equal(Buffer.from(time(Date.UTC(2050, 0, 1))).subarray(2).toString(), '20500101000000Z', 'first GeneralizedTime');
});

t.test('named bits drop trailing zero bits (KeyUsage DER)', async (t) => {
  t.equal(hex(namedBits([0])), '03020780', 'digitalSignature');
  t.equal(hex(namedBits([0, 2])), '030205a0', 'digitalSignature, keyEncipherment');
  t.equal(hex(namedBits([5, 6])), '03020106', 'keyCertSign, cRLSign');
  t.equal(hex(namedBits([8])), '0303070080', 'decipherOnly spills into a second byte');
  const { unused, bytes } = readBitString(namedBits([0, 2]), readTlv(namedBits([0, 2]), 0));
  t.same({ unused, bytes: hex(bytes) }, { unused: 5, bytes: 'a0' });
});

t.test('SET OF is sorted; children are read in order', async (t) => {
  const a = smallInt(2);
  const b = smallInt(1);
  const set = setOf(a, b);
  t.same(children(set, readTlv(set, 0)).map((c) => readSmallInt(set, c)), [1, 2]);
});

t.test('the reader refuses what is not DER', async (t) => {
  const refuses = (bytes: number[], what: string, message: RegExp): void => {
    t.throws(() => readTop(Uint8Array.from(bytes), bytes[0]!, 'x'), { name: 'DerError', message }, what);
  };
  refuses([0x30, 0x80, 0x00, 0x00], 'indefinite length', /indefinite/);
  refuses([0x04, 0x81, 0x05, 1, 2, 3, 4, 5], 'long form for a short length', /minimally/);
  refuses([0x04, 0x82, 0x00, 0x85, ...new Array(0x85).fill(0)], 'leading zero in a long length', /minimally/);
  refuses([0x04, 0x85, 1, 1, 1, 1, 1], 'five length octets', /more than 4 bytes/);
  refuses([0x04, 0x05, 1, 2], 'value past the end', /runs past/);
  refuses([0x04, 0x01, 1, 0], 'trailing bytes', /after/);
  refuses([0x30], 'no length', /truncated/);
  t.throws(() => readOid(Uint8Array.of(6, 2, 0x2a, 0x80), readTlv(Uint8Array.of(6, 2, 0x2a, 0x80), 0)), DerError, 'truncated OID arc');
  t.throws(() => readTime(Buffer.from('170d3235313332303030303030305a', 'hex'), readTlv(Buffer.from('170d3235313332303030303030305a', 'hex'), 0)), DerError, 'month 13');
});
