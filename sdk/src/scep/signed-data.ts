/**
 * The outer CMS SignedData of SCEP messages (RFC 5652 §5, RFC 8894 §3.2): read it and verify its one
 * SignerInfo against the certificate it carries, or build one signed by an RA/CA or client key. Everything
 * SCEP-specific lives in signed attributes, so the signature always covers the DER SET OF attributes.
 */
import { createHash, sign, verify, constants, type KeyObject } from 'node:crypto';
import { DIGEST_OIDS, digestByOid, ECDSA_SIGNATURE_OIDS, OID, RSA_SIGNATURE_OIDS, signatureScheme, type DigestName } from './algorithms.js';
import { fieldsOf, publicKeyOf, sameBytes, type CertificateFields } from './certificate-fields.js';
import { children, content, expectTag, malformed, octets, parseDer, raw, readOid, readSmallInt, TAG, type Tlv } from './der.js';
import { algorithm, ctx, NULL, octetString, oid, seq, set, setOf, smallInteger, integerContent, time } from './der-writer.js';
import { ScepError } from './errors.js';

export type SignerId = { readonly type: 'issuerAndSerial'; readonly issuerDer: Uint8Array; readonly serial: Uint8Array } | { readonly type: 'subjectKeyIdentifier'; readonly subjectKeyIdentifier: Uint8Array };

export interface SignedDataView {
  readonly eContentType: string;
  /** The encapsulated content octets; undefined when absent (CertRep FAILURE/PENDING). */
  readonly eContent: Uint8Array | undefined;
  readonly certificates: readonly Tlv[];
  readonly crls: readonly Uint8Array[];
  readonly sid: SignerId;
  readonly digestAlgorithm: DigestName;
  readonly signatureAlgorithm: string;
  readonly signature: Uint8Array;
  /** The signedAttrs as received ([0] IMPLICIT tag). */
  readonly signedAttrs: Uint8Array;
  /** Attribute OID → its values. */
  readonly attributes: ReadonlyMap<string, readonly Tlv[]>;
}

/** Reads a ContentInfo(SignedData) with exactly the first SignerInfo kept. ScepError on anything malformed. */
export function parseSignedData(der: Uint8Array): SignedDataView {
  const [typeOid, explicit] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'ContentInfo'));
  const contentType = readOid(typeOid, 'ContentInfo.contentType');
  if (contentType !== OID.signedData) throw new ScepError('badRequest', `The message is a ${contentType}, not a SignedData`);
  const f = children(expectTag(children(expectTag(explicit, 0xa0, 'ContentInfo.content'))[0], TAG.SEQUENCE, 'SignedData'));
  let i = 0;
  readSmallInt(f[i++], 'SignedData.version');
  expectTag(f[i++], TAG.SET, 'digestAlgorithms');
  const encap = children(expectTag(f[i++], TAG.SEQUENCE, 'encapContentInfo'));
  const eContentType = readOid(encap[0], 'eContentType');
  let eContent: Uint8Array | undefined;
  if (encap[1]) {
    const [inner] = children(expectTag(encap[1], 0xa0, 'eContent'));
    if (!inner) throw malformed('empty eContent');
    eContent = octets(inner, 'eContent');
  }
  const certificates = f[i]?.tag === 0xa0 ? children(f[i++]!).filter((c) => c.tag === TAG.SEQUENCE) : [];
  const crls = f[i]?.tag === 0xa1 ? children(f[i++]!).filter((c) => c.tag === TAG.SEQUENCE).map(raw) : [];
  const signerInfos = children(expectTag(f[i], TAG.SET, 'signerInfos'));
  if (signerInfos.length === 0) throw new ScepError('badRequest', 'The SignedData has no signer');
  const s = children(expectTag(signerInfos[0], TAG.SEQUENCE, 'SignerInfo'));
  let j = 0;
  readSmallInt(s[j++], 'SignerInfo.version');
  const sidTlv = s[j++];
  let sid: SignerId;
  if (sidTlv?.tag === TAG.SEQUENCE) {
    const [issuer, serial] = children(sidTlv);
    sid = { type: 'issuerAndSerial', issuerDer: raw(expectTag(issuer, TAG.SEQUENCE, 'sid.issuer')), serial: content(expectTag(serial, TAG.INTEGER, 'sid.serialNumber')) };
  } else if (sidTlv?.tag === 0x80) {
    sid = { type: 'subjectKeyIdentifier', subjectKeyIdentifier: content(sidTlv) };
  } else {
    throw malformed('SignerInfo.sid');
  }
  const digestOid = readOid(children(expectTag(s[j++], TAG.SEQUENCE, 'SignerInfo.digestAlgorithm'))[0], 'digestAlgorithm');
  const digestAlgorithm = digestByOid(digestOid);
  if (!digestAlgorithm) throw new ScepError('badAlg', `Unsupported digest algorithm ${digestOid}`);
  const attrsTlv = s[j]?.tag === 0xa0 ? s[j++]! : undefined;
  if (!attrsTlv) throw new ScepError('badRequest', 'The SignerInfo has no signed attributes');
  const signatureAlgorithm = readOid(children(expectTag(s[j++], TAG.SEQUENCE, 'signatureAlgorithm'))[0], 'signatureAlgorithm');
  const signature = content(expectTag(s[j++], TAG.OCTET_STRING, 'signature'));
  const attributes = new Map<string, Tlv[]>();
  for (const a of children(attrsTlv)) {
    const [type, values] = children(expectTag(a, TAG.SEQUENCE, 'Attribute'));
    const name = readOid(type, 'attrType');
    if (attributes.has(name)) throw new ScepError('badRequest', `Signed attribute ${name} appears twice`);
    attributes.set(name, children(expectTag(values, TAG.SET, 'attrValues')));
  }
  return { eContentType, eContent, certificates, crls, sid, digestAlgorithm, signatureAlgorithm, signature, signedAttrs: raw(attrsTlv), attributes };
}

function isSigner(sid: SignerId, cert: CertificateFields): boolean {
  return sid.type === 'issuerAndSerial'
    ? sameBytes(sid.issuerDer, cert.issuerDer) && sameBytes(sid.serial, cert.serial)
    : sameBytes(sid.subjectKeyIdentifier, cert.subjectKeyIdentifier);
}

/**
 * The signer's certificate (from the SignedData's certificates) and whether the signature holds: the
 * messageDigest attribute equals the digest of the content, contentType matches, and the signature over
 * the DER SET OF signed attributes verifies with the certificate's key. ScepError('badCertId') when no
 * carried certificate matches the SignerInfo; ScepError('badAlg') for an unsupported signature algorithm.
 */
export function verifySigner(sd: SignedDataView): { certificate: CertificateFields; valid: boolean } {
  let certificate: CertificateFields | undefined;
  for (const c of sd.certificates) {
    const fields = fieldsOf(c);
    if (isSigner(sd.sid, fields)) {
      certificate = fields;
      break;
    }
  }
  if (!certificate) throw new ScepError('badCertId', 'No certificate in the message matches its signer');
  const scheme = signatureScheme(sd.signatureAlgorithm, sd.digestAlgorithm);
  if (!scheme) throw new ScepError('badAlg', `Unsupported signature algorithm ${sd.signatureAlgorithm}`);
  const [md] = sd.attributes.get(OID.messageDigest) ?? [];
  const [ct] = sd.attributes.get(OID.contentType) ?? [];
  let valid = md?.tag === TAG.OCTET_STRING && ct?.tag === TAG.OID && readOid(ct, 'contentType') === sd.eContentType;
  if (valid) {
    const digest = createHash(sd.digestAlgorithm).update(sd.eContent ?? new Uint8Array(0)).digest();
    valid = sameBytes(digest, content(md!));
  }
  if (valid) {
    try {
      const key = publicKeyOf(certificate.spkiDer);
      if (key.asymmetricKeyType !== scheme.keyType) return { certificate, valid: false };
      const signed = Uint8Array.from(sd.signedAttrs);
      signed[0] = TAG.SET; // RFC 5652 §5.4: the signature covers the EXPLICIT SET OF encoding
      valid = verify(scheme.digest, signed, scheme.keyType === 'rsa' ? { key, padding: constants.RSA_PKCS1_PADDING } : key, sd.signature);
    } catch {
      valid = false;
    }
  }
  return { certificate, valid };
}

export interface SignOptions {
  /** The encapsulated content (id-data); omitted for a CertRep FAILURE/PENDING. */
  readonly eContent?: Uint8Array;
  /** DER Attributes besides contentType, messageDigest and signingTime. */
  readonly attributes: readonly Uint8Array[];
  readonly digest: DigestName;
  readonly signer: CertificateFields;
  readonly signerPrivateKey: KeyObject;
  /** Default: now; null to leave signingTime out. */
  readonly signingTime?: Date | null;
  /** Certificates to carry besides the signer's (chain). */
  readonly extraCertificatesDer?: readonly Uint8Array[];
}

export const attribute = (type: string, value: Uint8Array): Uint8Array => seq(oid(type), set(value));

/** ContentInfo(SignedData) with one SignerInfo named by issuer and serial. One private-key signature. */
export function buildSignedData(o: SignOptions): Uint8Array {
  const digestAlg = algorithm(DIGEST_OIDS[o.digest]);
  const md = createHash(o.digest).update(o.eContent ?? new Uint8Array(0)).digest();
  const attrs = [attribute(OID.contentType, oid(OID.data)), attribute(OID.messageDigest, octetString(md)), ...o.attributes];
  if (o.signingTime !== null) attrs.push(attribute(OID.signingTime, time(o.signingTime ?? new Date())));
  const signedAttrs = setOf(attrs);
  const keyType = o.signerPrivateKey.asymmetricKeyType;
  let signatureAlgorithm: Uint8Array;
  // RSA signers say rsaEncryption (RFC 5652 §10.1.2 allows it; strongSwan's pki accepts nothing else).
  if (keyType === 'rsa') signatureAlgorithm = algorithm(OID.rsaEncryption, NULL);
  else if (keyType === 'ec' && ECDSA_SIGNATURE_OIDS[o.digest]) signatureAlgorithm = algorithm(ECDSA_SIGNATURE_OIDS[o.digest]!);
  else throw new ScepError('badAlg', `Cannot sign with a ${keyType ?? 'secret'} key and ${o.digest}`);
  const signature = sign(o.digest, signedAttrs, keyType === 'rsa' ? { key: o.signerPrivateKey, padding: constants.RSA_PKCS1_PADDING } : o.signerPrivateKey);
  const implicitAttrs = Uint8Array.from(signedAttrs);
  implicitAttrs[0] = 0xa0;
  const signerInfo = seq(
    smallInteger(1),
    seq(o.signer.issuerDer, integerContent(o.signer.serial)),
    digestAlg,
    implicitAttrs,
    signatureAlgorithm,
    octetString(signature),
  );
  const encap = o.eContent ? seq(oid(OID.data), ctx(0, octetString(o.eContent))) : seq(oid(OID.data));
  const signedData = seq(smallInteger(1), set(digestAlg), encap, ctx(0, o.signer.der, ...(o.extraCertificatesDer ?? [])), set(signerInfo));
  return seq(oid(OID.signedData), ctx(0, signedData));
}
