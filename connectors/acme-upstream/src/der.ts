/**
 * Just enough DER to read what an ACME client needs from a PKCS#10 request (RFC 2986): the subject's common
 * name, the requested subjectAltName DNS names and IP addresses, and the SubjectPublicKeyInfo. Plugins do not
 * import the kernel's PKI toolkit, and an ACME order needs no more than this.
 */
import { isIP } from 'node:net';

interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  /** Offset of the first content byte. */
  body: number;
  /** Offset just past the content. */
  end: number;
}

export class DerError extends Error {}

function readTlv(buf: Uint8Array, pos: number, limit = buf.length): Tlv {
  if (pos + 2 > limit) throw new DerError('truncated DER');
  const tag = buf[pos]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not supported');
  let len = buf[pos + 1]!;
  let body = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError('unsupported DER length');
    if (body + n > limit) throw new DerError('truncated DER');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[body + i]!;
    body += n;
  }
  const end = body + len;
  if (end > limit) throw new DerError('truncated DER');
  return { tag, start: pos, body, end };
}

function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let pos = parent.body; pos < parent.end; ) {
    const child = readTlv(buf, pos, parent.end);
    out.push(child);
    pos = child.end;
  }
  return out;
}

function expect(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv || tlv.tag !== tag) throw new DerError(`${what}: unexpected DER structure`);
  return tlv;
}

function oidOf(buf: Uint8Array, tlv: Tlv): string {
  const bytes = buf.subarray(tlv.body, tlv.end);
  const parts: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

function stringOf(buf: Uint8Array, tlv: Tlv): string {
  const bytes = Buffer.from(buf.subarray(tlv.body, tlv.end));
  if (tlv.tag === 0x1e) return bytes.swap16().toString('utf16le'); // BMPString
  return tlv.tag === 0x0c ? bytes.toString('utf8') : bytes.toString('latin1');
}

const OID_CN = '2.5.4.3';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';

/** An IP address in the text form RFC 8738 asks for (IPv6 per RFC 5952: lower case, compressed). */
export function formatIp(text: string): string | null {
  const kind = isIP(text);
  if (kind === 4) return text;
  if (kind === 6) return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  return null;
}

function ipFromBytes(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
    return formatIp(groups.join(':'))!;
  }
  throw new DerError(`an iPAddress SAN of ${bytes.length} bytes`);
}

export interface CsrNames {
  commonName?: string;
  dnsNames: string[];
  ipAddresses: string[];
  /** SubjectPublicKeyInfo, DER. */
  spki: Buffer;
  /** Other subjectAltName types present (rfc822Name, URI, …), by their context tag number. */
  otherSanTags: number[];
}

/** Reads a PKCS#10 CertificationRequest (DER). Throws DerError when it is not one. */
export function readCsr(der: Uint8Array): CsrNames {
  const root = expect(readTlv(der, 0), 0x30, 'CertificationRequest');
  if (root.end !== der.length) throw new DerError('trailing bytes after the CertificationRequest');
  const [info] = children(der, root);
  const parts = children(der, expect(info, 0x30, 'CertificationRequestInfo'));
  expect(parts[0], 0x02, 'version');
  const subject = expect(parts[1], 0x30, 'subject');
  const spki = expect(parts[2], 0x30, 'subjectPKInfo');
  const names: CsrNames = { dnsNames: [], ipAddresses: [], spki: Buffer.from(der.subarray(spki.start, spki.end)), otherSanTags: [] };

  for (const rdn of children(der, subject)) {
    for (const atv of children(der, expect(rdn, 0x31, 'RDN'))) {
      const [type, value] = children(der, expect(atv, 0x30, 'AttributeTypeAndValue'));
      if (type && value && oidOf(der, expect(type, 0x06, 'attribute type')) === OID_CN) names.commonName = stringOf(der, value);
    }
  }

  const attributes = parts[3];
  if (attributes && attributes.tag === 0xa0) {
    for (const attribute of children(der, attributes)) {
      const [type, values] = children(der, expect(attribute, 0x30, 'Attribute'));
      if (!type || oidOf(der, expect(type, 0x06, 'attribute type')) !== OID_EXTENSION_REQUEST) continue;
      for (const extensions of children(der, expect(values, 0x31, 'attribute values'))) {
        for (const extension of children(der, expect(extensions, 0x30, 'Extensions'))) {
          const fields = children(der, expect(extension, 0x30, 'Extension'));
          if (oidOf(der, expect(fields[0], 0x06, 'extnID')) !== OID_SUBJECT_ALT_NAME) continue;
          const value = expect(fields[fields.length - 1], 0x04, 'extnValue');
          const generalNames = expect(readTlv(der, value.body, value.end), 0x30, 'GeneralNames');
          for (const name of children(der, generalNames)) {
            if (name.tag === 0x82) names.dnsNames.push(Buffer.from(der.subarray(name.body, name.end)).toString('latin1'));
            else if (name.tag === 0x87) names.ipAddresses.push(ipFromBytes(der.subarray(name.body, name.end)));
            else names.otherSanTags.push(name.tag & 0x1f);
          }
        }
      }
    }
  }
  return names;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** The PEM blocks of a text, as {label, der}. */
export function pemBlocks(text: string): { label: string; der: Buffer }[] {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1]!, der: Buffer.from(m[2]!.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64') }));
}

/** DER as PEM with 64-column lines and a final newline. */
export function toPem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN ${label}-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
}

/** Each certificate of a PEM bundle, re-encoded in canonical PEM. */
export function splitCertificates(text: string): string[] {
  return pemBlocks(text)
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => toPem('CERTIFICATE', b.der));
}
