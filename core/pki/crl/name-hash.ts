import { createHash } from 'node:crypto';
import { children, expectTag, readString, TAG, whole, type Tlv } from '../der/reader.js';
import { seq, setOf, tlv } from '../der/writer.js';

/** String types OpenSSL canonicalises (ASN1_MASK_CANON); others (NumericString, …) are hashed as they are. */
const CANON_TAGS = new Set<number>([TAG.UTF8_STRING, TAG.BMP_STRING, TAG.UNIVERSAL_STRING, TAG.PRINTABLE_STRING, TAG.T61_STRING, TAG.IA5_STRING, TAG.VISIBLE_STRING]);
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]);

/**
 * OpenSSL's name hash (`openssl crl -hash`, `openssl x509 -subject_hash`, the `<hash>.r0` file names of
 * a CApath): SHA-1 of the name's canonical encoding, first four bytes read little-endian. Canonical
 * (x509_name_canon): every string value re-encoded as UTF8String with ASCII lower-cased, surrounding
 * whitespace dropped and inner runs collapsed to one space; each RDN's SET sorted as DER sorts; the RDN
 * SETs concatenated without the outer SEQUENCE.
 */
export function opensslNameHash(buf: Uint8Array, name: Tlv): string {
  expectTag(name, TAG.SEQUENCE, 'name');
  const sets: Uint8Array[] = [];
  for (const rdn of children(buf, name)) {
    const atvs = children(buf, expectTag(rdn, TAG.SET, 'relative distinguished name')).map((atv) => {
      const [type, val] = children(buf, atv);
      if (!type || !val) return whole(buf, atv);
      return seq(whole(buf, type), CANON_TAGS.has(val.tag) ? tlv(TAG.UTF8_STRING, canon(readString(buf, val))) : whole(buf, val));
    });
    sets.push(setOf(...atvs));
  }
  const digest = createHash('sha1').update(Buffer.concat(sets)).digest();
  return digest.readUInt32LE(0).toString(16).padStart(8, '0');
}

function canon(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'utf8');
  let from = 0;
  let to = bytes.length;
  while (from < to && SPACE.has(bytes[from]!)) from++;
  while (to > from && SPACE.has(bytes[to - 1]!)) to--;
  const out: number[] = [];
  for (let i = from; i < to; ) {
    const b = bytes[i]!;
    if (SPACE.has(b)) {
      out.push(0x20);
      while (SPACE.has(bytes[i]!)) i++;
    } else {
      out.push(b >= 0x41 && b <= 0x5a ? b + 0x20 : b);
      i++;
    }
  }
  return Uint8Array.from(out);
}
