/**
 * GeneralName (RFC 5280 §4.2.1.6) as the compat {sanType, value}: subject alternative names, name
 * constraints, distribution points and access locations all use it.
 */
import { children, DerError, expectTag, hex, readOid, readString, readTlv, TAG, value, whole, type Tlv } from '../der/reader.js';
import { decodeName } from '../names.js';
import { OTHER_NAMES } from '../oids.js';
import type { SubjectAlternateName } from './model.js';

/** IPv4 dotted quad, IPv6 in RFC 5952 form (lower case, longest zero run compressed). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  if (bytes.length !== 16) throw new DerError(`IP address of ${bytes.length} bytes`, 0);
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!);
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const text = words.map((w) => w.toString(16));
  if (best < 0) return text.join(':');
  return `${text.slice(0, best).join(':')}::${text.slice(best + bestLen).join(':')}`;
}

/** Prefix length of a contiguous netmask, or -1. */
function prefixLength(mask: Uint8Array): number {
  let bits = 0;
  let i = 0;
  while (i < mask.length && mask[i] === 0xff) (bits += 8), i++;
  if (i < mask.length) {
    const b = mask[i]!;
    const ones = Math.clz32(~(b << 24));
    if (((b << ones) & 0xff) !== 0) return -1;
    bits += ones;
    for (i++; i < mask.length; i++) if (mask[i] !== 0) return -1;
  }
  return bits;
}

/** A name-constraint IP range (address + mask) as CIDR, or address/mask when the mask is not contiguous. */
export function formatIpRange(bytes: Uint8Array): string {
  if (bytes.length !== 8 && bytes.length !== 32) throw new DerError(`IP range of ${bytes.length} bytes`, 0);
  const half = bytes.length / 2;
  const address = formatIp(bytes.subarray(0, half));
  const mask = bytes.subarray(half);
  const prefix = prefixLength(mask);
  return prefix >= 0 ? `${address}/${prefix}` : `${address}/${formatIp(mask)}`;
}

/** A value of unknown type: its string when it is one, else `#` + the hex of its DER (RFC 4514 style). */
export function anyValue(buf: Uint8Array, tlv: Tlv): string {
  try {
    return readString(buf, tlv);
  } catch {
    return `#${hex(whole(buf, tlv))}`;
  }
}

function otherName(buf: Uint8Array, tlv: Tlv): SubjectAlternateName {
  const [typeId, wrapped, extra] = children(buf, tlv);
  if (!typeId || !wrapped || extra || wrapped.tag !== 0xa0) throw new DerError('malformed otherName', tlv.start);
  const type = readOid(buf, typeId);
  const [inner, more] = children(buf, wrapped);
  if (!inner || more) throw new DerError('malformed otherName value', wrapped.start);
  if (type === OTHER_NAMES.upn) return { sanType: 'OTHERNAME_UPN', value: readString(buf, inner) };
  if (type === OTHER_NAMES.guid) return { sanType: 'OTHERNAME_GUID', value: hex(value(buf, expectTag(inner, TAG.OCTET_STRING, 'GUID'))) };
  return { sanType: 'OTHERNAME', value: `${type}:${anyValue(buf, inner)}` };
}

/** One GeneralName at `tlv`. */
export function readGeneralName(buf: Uint8Array, tlv: Tlv): SubjectAlternateName {
  if (tlv.tagClass !== 2) throw new DerError('a general name must be context-tagged', tlv.start);
  // otherName, x400Address, directoryName and ediPartyName are constructed; the others primitive.
  if (tlv.constructed !== [0, 3, 4, 5].includes(tlv.tagNumber)) throw new DerError('general name with the wrong form', tlv.start);
  const bytes = value(buf, tlv);
  switch (tlv.tagNumber) {
    case 0:
      return otherName(buf, tlv);
    case 1:
      return { sanType: 'RFC822NAME', value: readString(buf, { ...tlv, tag: TAG.IA5_STRING }) };
    case 2:
      return { sanType: 'DNSNAME', value: readString(buf, { ...tlv, tag: TAG.IA5_STRING }) };
    case 4: {
      const [name, extra] = children(buf, tlv);
      if (!name || extra) throw new DerError('malformed directoryName', tlv.start);
      return { sanType: 'DIRECTORYNAME', value: decodeName(buf, name).dn };
    }
    case 6:
      return { sanType: 'URI', value: readString(buf, { ...tlv, tag: TAG.IA5_STRING }) };
    case 7:
      return { sanType: 'IPADDRESS', value: bytes.length > 16 || bytes.length === 8 ? formatIpRange(bytes) : formatIp(bytes) };
    case 8:
      return { sanType: 'REGISTERED_ID', value: readOid(buf, { ...tlv, tag: TAG.OID }) };
    default:
      // x400Address [3], ediPartyName [5]: kept as their DER.
      return { sanType: 'OTHERNAME', value: `#${hex(whole(buf, tlv))}` };
  }
}

/** GeneralNames (SEQUENCE OF, or the content of an IMPLICIT [n] wrapper). */
export function readGeneralNames(buf: Uint8Array, tlv: Tlv): SubjectAlternateName[] {
  return children(buf, tlv).map((n) => readGeneralName(buf, n));
}

/** GeneralNames held in an extension's OCTET STRING. */
export function readGeneralNamesDer(der: Uint8Array): SubjectAlternateName[] {
  const top = readTlv(der, 0);
  if (top.end !== der.length) throw new DerError('bytes after the names', top.end);
  return readGeneralNames(der, expectTag(top, TAG.SEQUENCE, 'general names'));
}
