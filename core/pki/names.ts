import { children, DerError, expectTag, readOid, readString, TAG, hex, whole, type Tlv } from './der/reader.js';
import { DN_ATTRIBUTES, DN_ELEMENTS } from './oids.js';

/** One attribute of a DN as client-compat names it: `element` is name + 1-based index (`cn.1`, `ou.2`). */
export interface DnElement {
  element: string;
  type: string;
  value: string;
}

export interface DecodedName {
  /** RFC 4514 string (last RDN first), attribute names as OpenSSL's `-nameopt RFC2253`. */
  dn: string;
  /** Attributes in the order they appear in the certificate (first RDN first). */
  elements: DnElement[];
  /** The Name's DER (for issuer matching by bytes). */
  der: Uint8Array;
}

const SPECIAL = /[,+"\\<>;=]/g;

/** RFC 4514 §2.4 escaping of an attribute value. */
export function escapeDnValue(value: string): string {
  let out = value.replace(SPECIAL, (c) => `\\${c}`);
  if (out.startsWith('#') || out.startsWith(' ')) out = `\\${out}`;
  if (out.endsWith(' ') && out.length > 1) out = `${out.slice(0, -1)}\\ `;
  // Control characters: \XX (never NUL in a string we print).
  return out.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Decodes a Name (SEQUENCE OF RDN) at `tlv`. */
export function decodeName(buf: Uint8Array, tlv: Tlv): DecodedName {
  expectTag(tlv, TAG.SEQUENCE, 'name');
  const rdnStrings: string[] = [];
  const elements: DnElement[] = [];
  const counts = new Map<string, number>();
  for (const rdn of children(buf, tlv)) {
    expectTag(rdn, TAG.SET, 'relative distinguished name');
    const parts: string[] = [];
    for (const atv of children(buf, rdn)) {
      expectTag(atv, TAG.SEQUENCE, 'attribute');
      const [typeTlv, valueTlv, extra] = children(buf, atv);
      if (!typeTlv || !valueTlv || extra) throw new DerError('attribute must be a type and a value', atv.start);
      const oid = readOid(buf, typeTlv);
      const name = DN_ATTRIBUTES[oid];
      let text: string;
      let printed: string;
      try {
        text = readString(buf, valueTlv);
        printed = escapeDnValue(text);
      } catch (err) {
        if (!(err instanceof DerError)) throw err;
        // Not a string (RFC 4514 §2.4): the value's DER in hex.
        text = `#${hex(whole(buf, valueTlv))}`;
        printed = text;
      }
      parts.push(`${name ?? oid}=${printed}`);
      const element = DN_ELEMENTS[oid] ?? name ?? oid;
      const n = (counts.get(element) ?? 0) + 1;
      counts.set(element, n);
      elements.push({ element: `${element}.${n}`, type: (name ?? oid).toUpperCase(), value: text });
    }
    // OpenSSL prints a multi-valued RDN's values in reverse too (it reverses every entry of the name).
    rdnStrings.push(parts.reverse().join('+'));
  }
  return { dn: rdnStrings.reverse().join(','), elements, der: whole(buf, tlv) };
}
