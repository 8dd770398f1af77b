/**
 * The fields of a Certificate (RFC 5280 §4.1) located in its DER, without decoding them: the decoder
 * (parse.ts), chain building and issuance read only what they need from here.
 */
import { children, DerError, expectTag, readBitString, readSmallInt, readTime, readTop, TAG, whole, type Tlv } from '../der/reader.js';

export interface CertificateStructure {
  der: Uint8Array;
  /** The TBSCertificate DER: the signed bytes. */
  tbs: Uint8Array;
  /** 1, 2 or 3. */
  version: number;
  serial: Tlv;
  issuer: Tlv;
  notBefore: number;
  notAfter: number;
  subject: Tlv;
  spki: Tlv;
  /** The Extensions SEQUENCE inside [3], when present. */
  extensions?: Tlv;
  signatureAlgorithm: Tlv;
  /** The signature BIT STRING's bytes. */
  signature: Uint8Array;
}

/** Locates the fields of the Certificate `der` (one TLV, nothing after it). Throws DerError. */
export function readCertificate(der: Uint8Array): CertificateStructure {
  const cert = readTop(der, TAG.SEQUENCE, 'certificate');
  const [tbsTlv, sigAlg, sigValue, extra] = children(der, cert);
  if (!tbsTlv || !sigAlg || !sigValue || extra) throw new DerError('a certificate is a TBSCertificate, an algorithm and a signature', cert.start);
  const fields = children(der, expectTag(tbsTlv, TAG.SEQUENCE, 'TBSCertificate'));
  let i = 0;
  let version = 1;
  if (fields[0]?.tag === 0xa0) {
    const [v, more] = children(der, fields[0]);
    if (!v || more) throw new DerError('malformed version', fields[0].start);
    version = readSmallInt(der, v) + 1;
    if (version < 1 || version > 3) throw new DerError(`unknown certificate version ${version}`, v.start);
    i = 1;
  }
  const [serial, innerAlg, issuer, validity, subject, spki] = fields.slice(i, i + 6);
  if (!serial || !innerAlg || !issuer || !validity || !subject || !spki) throw new DerError('TBSCertificate is missing fields', tbsTlv.start);
  expectTag(serial, TAG.INTEGER, 'serial number');
  expectTag(innerAlg, TAG.SEQUENCE, 'signature algorithm');
  expectTag(issuer, TAG.SEQUENCE, 'issuer');
  expectTag(subject, TAG.SEQUENCE, 'subject');
  expectTag(spki, TAG.SEQUENCE, 'subject public key info');
  const [nb, na, moreTimes] = children(der, expectTag(validity, TAG.SEQUENCE, 'validity'));
  if (!nb || !na || moreTimes) throw new DerError('validity must be two times', validity.start);
  let extensions: Tlv | undefined;
  let lastTag = 0;
  for (const f of fields.slice(i + 6)) {
    // [1] issuerUniqueID, [2] subjectUniqueID, [3] extensions, each at most once and in this order.
    if (f.tag !== 0x81 && f.tag !== 0x82 && f.tag !== 0xa3) throw new DerError('unexpected field in TBSCertificate', f.start);
    if ((f.tag & 0x1f) <= lastTag) throw new DerError('TBSCertificate fields out of order', f.start);
    lastTag = f.tag & 0x1f;
    if (f.tag === 0xa3) {
      const [seq, more] = children(der, f);
      if (!seq || more) throw new DerError('malformed extensions', f.start);
      extensions = expectTag(seq, TAG.SEQUENCE, 'extensions');
    }
  }
  return {
    der,
    tbs: whole(der, tbsTlv),
    version,
    serial,
    issuer,
    notBefore: readTime(der, nb),
    notAfter: readTime(der, na),
    subject,
    spki,
    ...(extensions ? { extensions } : {}),
    signatureAlgorithm: sigAlg,
    signature: readBitString(der, sigValue).bytes,
  };
}
