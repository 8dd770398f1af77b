/**
 * The fields of a PKCS#10 CertificationRequest (RFC 2986 §4) located in its DER: the decoder and the
 * issuer read only what they need from here.
 */
import { children, DerError, expectTag, readBitString, readOid, readSmallInt, readTop, TAG, value, whole, type Tlv } from '../der/reader.js';

export interface CsrStructure {
  der: Uint8Array;
  /** The CertificationRequestInfo DER: the signed bytes. */
  info: Uint8Array;
  subject: Tlv;
  spki: Tlv;
  /** The [0] IMPLICIT SET OF Attribute (absent in some old requests, though RFC 2986 requires it). */
  attributes?: Tlv;
  signatureAlgorithm: Tlv;
  signature: Uint8Array;
}

/** Locates the fields of the CSR `der` (one TLV, nothing after it). Throws DerError. */
export function readCsr(der: Uint8Array): CsrStructure {
  const top = readTop(der, TAG.SEQUENCE, 'certification request');
  const [infoTlv, sigAlg, sigValue, extra] = children(der, top);
  if (!infoTlv || !sigAlg || !sigValue || extra) throw new DerError('a CSR is a request info, an algorithm and a signature', top.start);
  const [version, subject, spki, attributes, more] = children(der, expectTag(infoTlv, TAG.SEQUENCE, 'certification request info'));
  if (!version || !subject || !spki || more) throw new DerError('certification request info must have a version, a subject, a key and attributes', infoTlv.start);
  if (readSmallInt(der, version) !== 0) throw new DerError('unknown CSR version', version.start);
  expectTag(subject, TAG.SEQUENCE, 'subject');
  expectTag(spki, TAG.SEQUENCE, 'subject public key info');
  if (attributes) expectTag(attributes, 0xa0, 'attributes');
  return {
    der,
    info: whole(der, infoTlv),
    subject,
    spki,
    ...(attributes ? { attributes } : {}),
    signatureAlgorithm: expectTag(sigAlg, TAG.SEQUENCE, 'signature algorithm'),
    signature: readBitString(der, sigValue).bytes,
  };
}

/** Each attribute's type OID TLV and its SET of values. */
export function csrAttributes(der: Uint8Array, s: CsrStructure): { type: Tlv; values: Tlv[] }[] {
  if (!s.attributes) return [];
  return children(der, s.attributes).map((attr) => {
    const [type, set, extra] = children(der, expectTag(attr, TAG.SEQUENCE, 'attribute'));
    if (!type || !set || extra) throw new DerError('an attribute is a type and a set of values', attr.start);
    return { type, values: children(der, expectTag(set, TAG.SET, 'attribute values')) };
  });
}

const EXTENSION_REQUESTS = new Set(['1.2.840.113549.1.9.14', '1.3.6.1.4.1.311.2.1.14']);

/** The value DER of an extension the CSR requests (extensionRequest), copied as is; undefined if absent. */
export function requestedExtension(s: CsrStructure, extensionOid: string): Uint8Array | undefined {
  const der = s.der;
  for (const { type, values } of csrAttributes(der, s)) {
    if (!EXTENSION_REQUESTS.has(readOid(der, type)) || values.length !== 1) continue;
    for (const ext of children(der, expectTag(values[0]!, TAG.SEQUENCE, 'extensions'))) {
      const parts = children(der, expectTag(ext, TAG.SEQUENCE, 'extension'));
      const last = parts[parts.length - 1];
      if (parts[0] && last && readOid(der, parts[0]) === extensionOid) return value(der, expectTag(last, TAG.OCTET_STRING, 'extension value'));
    }
  }
  return undefined;
}
