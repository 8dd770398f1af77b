/**
 * Names for issuance: a subject from compat elements ({element|type, value}) or an RFC 4514 string,
 * and GeneralNames from compat SANs. Template mistakes are 400s (HTTP-003) naming the bad value.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { ProblemError } from '../../errors/index.js';
import { TAG } from '../der/reader.js';
import { explicit, ia5String, implicit, octets, oid, printableString, seq, setOf, tlv, utf8String } from '../der/writer.js';
import { DN_ATTRIBUTES, DN_ELEMENTS, OTHER_NAMES } from '../oids.js';
import type { SubjectAlternateName } from '../x509/model.js';

/** One attribute of a subject: `type` is an OpenSSL short name (CN), a compat element (cn, cn.1, e) or an OID. */
export interface NameAttribute {
  type: string;
  value: string;
}

const invalid = (detail: string): ProblemError => new ProblemError('HTTP-003', { detail });

/** Attribute type names (lower case) → OID, from both the OpenSSL names and the compat elements. */
const TYPES = new Map<string, string>();
for (const [o, name] of Object.entries(DN_ATTRIBUTES)) TYPES.set(name.toLowerCase(), o);
for (const [o, element] of Object.entries(DN_ELEMENTS)) TYPES.set(element, o);

/** Attributes whose values X.520 / PKIX restrict to PrintableString or IA5String. */
const PRINTABLE_ONLY = new Set(['2.5.4.6', '2.5.4.46', '1.3.6.1.4.1.311.60.2.1.3']);
const IA5 = new Set(['1.2.840.113549.1.9.1', '0.9.2342.19200300.100.1.25']);
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

function attributeOid(type: string): string {
  if (/^\d+(\.\d+)+$/.test(type)) return type;
  // A compat element carries its index (cn.1): the index only orders, the name decides.
  const found = TYPES.get(type.toLowerCase().replace(/\.\d+$/, ''));
  if (!found) throw invalid(`unknown subject attribute type: ${type}`);
  return found;
}

function attributeValue(o: string, text: string): Uint8Array {
  try {
    if (IA5.has(o)) return ia5String(text);
    if (PRINTABLE_ONLY.has(o) || (o === '2.5.4.5' && PRINTABLE.test(text))) return printableString(text);
    return utf8String(text);
  } catch {
    throw invalid(`value not allowed for attribute ${DN_ATTRIBUTES[o] ?? o}: ${JSON.stringify(text)}`);
  }
}

const atv = (a: NameAttribute): Uint8Array => {
  const o = attributeOid(a.type);
  return seq(oid(o), attributeValue(o, a.value));
};

/** A Name with one RDN per attribute, in the order given (first RDN first, as dnElements list them). */
export function encodeName(attributes: readonly NameAttribute[]): Uint8Array {
  return seq(...attributes.map((a) => setOf(atv(a))));
}

/** Splits at unescaped `sep`. */
function splitUnescaped(text: string, sep: string): string[] {
  if (!text.includes('\\')) return text.split(sep);
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
    } else if (c === sep) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out;
}

/** RFC 4514 §3 value unescaping: `\,` and `\HH` (UTF-8 bytes). */
function unescapeValue(raw: string): string {
  // Most values hold no escape (a byte-wise decode of each would be garbage for the GC on the issue path).
  if (!raw.includes('\\')) return raw;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) {
      bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '\\' && i + 1 < raw.length) {
      bytes.push(...Buffer.from(raw[++i]!, 'utf8'));
    } else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** An RFC 4514 string (last RDN first: `CN=a,O=b`) as a Name; `+` joins a multi-valued RDN. */
export function encodeDn(dn: string): Uint8Array {
  if (dn.trim() === '') return seq();
  const rdns = splitUnescaped(dn, ',').reverse();
  return seq(
    ...rdns.map((rdn) =>
      setOf(
        ...splitUnescaped(rdn, '+').map((pair) => {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw invalid(`not an RFC 4514 attribute: ${JSON.stringify(pair)}`);
          return atv({ type: pair.slice(0, eq).trim(), value: unescapeValue(pair.slice(eq + 1).trim()) });
        }),
      ),
    ),
  );
}

/** IPv4 or IPv6 text to its 4 or 16 bytes. */
export function ipBytes(text: string): Uint8Array {
  if (isIPv4(text)) return Uint8Array.from(text.split('.').map(Number));
  if (!isIPv6(text)) throw invalid(`not an IP address: ${JSON.stringify(text)}`);
  let groups = text;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (v4) {
    const b = v4[1]!.split('.').map(Number);
    groups = `${groups.slice(0, v4.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head, tail] = groups.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const words = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    const n = parseInt(w, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

const ascii = (text: string, what: string): Uint8Array => {
  if (!/^[\x21-\x7e]+$/.test(text)) throw invalid(`${what} must be printable ASCII: ${JSON.stringify(text)}`);
  return Buffer.from(text, 'latin1');
};

/** A DNS name as IA5: internationalised labels go to their A-label (punycode) form. */
function dnsName(text: string): Uint8Array {
  if (/^[\x21-\x7e]+$/.test(text)) return Buffer.from(text, 'latin1');
  const wildcard = text.startsWith('*.');
  const converted = domainToASCII(wildcard ? text.slice(2) : text);
  if (!converted) throw invalid(`not a DNS name: ${JSON.stringify(text)}`);
  return Buffer.from(wildcard ? `*.${converted}` : converted, 'latin1');
}

/** One compat SAN as a GeneralName. */
export function encodeGeneralName(san: SubjectAlternateName): Uint8Array {
  const v = san.value;
  switch (san.sanType) {
    case 'DNSNAME':
      return implicit(2, dnsName(v));
    case 'RFC822NAME':
      return implicit(1, ascii(v, 'an email address'));
    case 'URI':
      return implicit(6, ascii(v, 'a URI'));
    case 'IPADDRESS':
      return implicit(7, ipBytes(v));
    case 'OTHERNAME_UPN':
      return tlv(0xa0, oid(OTHER_NAMES.upn), explicit(0, utf8String(v)));
    case 'OTHERNAME_GUID': {
      const hexText = v.replace(/[{}-]/g, '');
      if (!/^[0-9a-fA-F]{32}$/.test(hexText)) throw invalid(`a GUID is 16 bytes of hex: ${JSON.stringify(v)}`);
      return tlv(0xa0, oid(OTHER_NAMES.guid), explicit(0, octets(Buffer.from(hexText, 'hex'))));
    }
    case 'REGISTERED_ID': {
      const encoded = oidOrInvalid(v);
      return implicit(8, encoded.subarray(2));
    }
    case 'DIRECTORYNAME':
      return explicit(4, encodeDn(v));
    case 'OTHERNAME': {
      // `<oid>:<text>`, as the decoder prints a string-valued otherName.
      const colon = v.indexOf(':');
      if (colon <= 0) throw invalid(`an otherName is <oid>:<value>: ${JSON.stringify(v)}`);
      return tlv(0xa0, oidOrInvalid(v.slice(0, colon)), explicit(0, utf8String(v.slice(colon + 1))));
    }
    default:
      throw invalid(`unknown SAN type: ${String(san.sanType)}`);
  }
}

function oidOrInvalid(text: string): Uint8Array {
  try {
    const encoded = oid(text);
    // Short form length only (an OID of more than 127 bytes is not a real one).
    if (encoded[1]! & 0x80 || encoded[0] !== TAG.OID) throw new RangeError('too long');
    return encoded;
  } catch {
    throw invalid(`not an object identifier: ${JSON.stringify(text)}`);
  }
}

export const encodeGeneralNames = (sans: readonly SubjectAlternateName[]): Uint8Array => seq(...sans.map(encodeGeneralName));
