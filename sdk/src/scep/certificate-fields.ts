/**
 * The few certificate fields CMS needs (issuer, serial number, subject, public key, subjectKeyIdentifier),
 * read straight from the DER. Used to find the signer of a SignedData and the recipient of an EnvelopedData,
 * and to name ourselves in the ones we build, without paying for a full X.509 parse per message.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { children, content, expectTag, malformed, octets, raw, readOid, TAG, type Tlv, parseDer } from './der.js';
import { OID } from './algorithms.js';

export interface CertificateFields {
  readonly der: Uint8Array;
  /** The issuer Name, whole DER. */
  readonly issuerDer: Uint8Array;
  /** The serial number INTEGER's content bytes (as encoded, for byte comparison). */
  readonly serial: Uint8Array;
  readonly subjectDer: Uint8Array;
  /** SubjectPublicKeyInfo, whole DER. */
  readonly spkiDer: Uint8Array;
  /** The subjectKeyIdentifier extension, or else the RFC 5280 §4.2.1.2 method 1 value (SHA-1 of the key). */
  readonly subjectKeyIdentifier: Uint8Array;
}

/** Reads `der` (a Certificate); a ScepError('badRequest') when it is not one. */
export function certificateFields(der: Uint8Array): CertificateFields {
  return fieldsOf(parseDer(der));
}

export function fieldsOf(cert: Tlv): CertificateFields {
  const [tbs] = children(expectTag(cert, TAG.SEQUENCE, 'Certificate'));
  const f = children(expectTag(tbs, TAG.SEQUENCE, 'TBSCertificate'));
  let i = f[0]?.tag === 0xa0 ? 1 : 0; // [0] EXPLICIT version
  const serial = content(expectTag(f[i++], TAG.INTEGER, 'serialNumber'));
  expectTag(f[i++], TAG.SEQUENCE, 'signature');
  const issuer = expectTag(f[i++], TAG.SEQUENCE, 'issuer');
  expectTag(f[i++], TAG.SEQUENCE, 'validity');
  const subject = expectTag(f[i++], TAG.SEQUENCE, 'subject');
  const spki = expectTag(f[i++], TAG.SEQUENCE, 'subjectPublicKeyInfo');
  let ski: Uint8Array | undefined;
  for (; i < f.length; i++) {
    if (f[i]!.tag !== 0xa3) continue;
    const [exts] = children(f[i]!);
    for (const ext of children(expectTag(exts, TAG.SEQUENCE, 'extensions'))) {
      const e = children(expectTag(ext, TAG.SEQUENCE, 'extension'));
      if (readOid(e[0], 'extnID') !== OID.subjectKeyIdentifier) continue;
      const value = octets(expectTag(e[e.length - 1], TAG.OCTET_STRING, 'extnValue'), 'extnValue');
      ski = content(expectTag(parseDer(value), TAG.OCTET_STRING, 'keyIdentifier'));
    }
  }
  const spkiDer = raw(spki);
  return {
    der: raw(cert),
    issuerDer: raw(issuer),
    serial,
    subjectDer: raw(subject),
    spkiDer,
    subjectKeyIdentifier: ski ?? keyIdentifierOf(spkiDer),
  };
}

/**
 * A KeyObject for a SubjectPublicKeyInfo. RSA keys are imported as JWK (n, e) because OpenSSL 3's DER
 * decoders make createPublicKey(spki) cost ~200 µs, more than the RSA verification it serves; other keys
 * go through the DER path.
 */
export function publicKeyOf(spkiDer: Uint8Array): KeyObject {
  const [alg, bits] = children(expectTag(parseDer(spkiDer), TAG.SEQUENCE, 'subjectPublicKeyInfo'));
  if (readOid(children(expectTag(alg, TAG.SEQUENCE, 'algorithm'))[0], 'algorithm') === OID.rsaEncryption) {
    const b = content(expectTag(bits, TAG.BIT_STRING, 'subjectPublicKey'));
    const [n, e] = children(expectTag(parseDer(b.subarray(1)), TAG.SEQUENCE, 'RSAPublicKey'));
    const magnitude = (t: Tlv | undefined, what: string) => {
      const v = content(expectTag(t, TAG.INTEGER, what));
      let i = 0;
      while (i < v.length - 1 && v[i] === 0) i++;
      return Buffer.from(v.subarray(i)).toString('base64url');
    };
    return createPublicKey({ key: { kty: 'RSA', n: magnitude(n, 'modulus'), e: magnitude(e, 'publicExponent') }, format: 'jwk' });
  }
  return createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' });
}

/** RFC 5280 §4.2.1.2 (1): SHA-1 of the subjectPublicKey BIT STRING's value. */
export function keyIdentifierOf(spkiDer: Uint8Array): Uint8Array {
  const [, bits] = children(expectTag(parseDer(spkiDer), TAG.SEQUENCE, 'subjectPublicKeyInfo'));
  const b = content(expectTag(bits, TAG.BIT_STRING, 'subjectPublicKey'));
  if (b.length < 1) throw malformed('empty subjectPublicKey');
  return createHash('sha1').update(b.subarray(1)).digest();
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** The DER certificates of PEM text (any number of CERTIFICATE blocks). */
export function pemToDer(pem: string, label = 'CERTIFICATE'): Uint8Array[] {
  const out: Uint8Array[] = [];
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`, 'g');
  for (const m of pem.matchAll(re)) out.push(new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')));
  return out;
}

export function derToPem(der: Uint8Array, label = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
