import t from 'tap';
import { readOid, readTlv } from '../../../core/pki/der/reader.js';
import { OID_CACHE_MAX_TEXT, oid, oidCacheSize } from '../../../core/pki/der/writer.js';

/**
 * The OID encoding cache of the DER writer is bounded (issue 24): by count, and by the length of the texts it keeps,
 * since texts can come from requests (an otherName SAN's OID) and were kept whatever their length.
 */
t.test('the OID cache keeps at most 4,096 encodings, and only of short texts', async (t) => {
  const start = oidCacheSize();
  const repeated = oid('1.2.840.10045.4.3.2');
  t.equal(oid('1.2.840.10045.4.3.2'), repeated, 'a repeated OID is served from the cache');

  // A long OID (each arc a safe integer; text far over the bound) encodes right, and is not kept.
  const long = ['1', '3', ...Array.from({ length: 2_000 }, (_, i) => String(1_000_000 + i))].join('.');
  t.ok(long.length > OID_CACHE_MAX_TEXT);
  const encoded = oid(long);
  t.equal(readOid(encoded, readTlv(encoded, 0)), long);
  t.not(oid(long), encoded, 'encoded afresh each time');
  t.equal(oidCacheSize(), start + 1, 'only the short OID was kept');

  for (let i = 0; i < 6_000; i++) oid(`1.3.6.1.4.1.99999.${i}`);
  t.equal(oidCacheSize(), 4_096, 'full at 4,096');
  t.equal(oid('1.2.840.10045.4.3.2'), repeated, 'what it holds it keeps');
  const late = oid('1.3.6.1.4.1.99999.5999');
  t.equal(readOid(late, readTlv(late, 0)), '1.3.6.1.4.1.99999.5999', 'an OID past the bound still encodes');
  t.equal(oidCacheSize(), 4_096);
});
