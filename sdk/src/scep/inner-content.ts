/**
 * The decrypted contents of a pkcsPKIEnvelope (RFC 8894 §3.3): readers for the server, encoders for
 * clients.
 *
 *   PKCSReq / RenewalReq   a PKCS#10 CertificationRequest  → challengePasswordOf, csrSubjectOf
 *   CertPoll               IssuerAndSubject                 → readIssuerAndSubject / encodeIssuerAndSubject
 *   GetCert / GetCRL       IssuerAndSerialNumber            → readIssuerAndSerial / encodeIssuerAndSerial
 *
 * Every reader throws ScepError('badRequest') on malformed input.
 */
import { OID } from './algorithms.js';
import { certificateFields } from './certificate-fields.js';
import { children, content, expectTag, integerHex, parseDer, raw, readOid, readString, TAG } from './der.js';
import { integerContent, seq, unsignedInteger } from './der-writer.js';
import { guarded } from './errors.js';

export interface IssuerAndSerial {
  /** The issuer Name, DER (compare bytes with a certificate's issuer). */
  readonly issuerDer: Uint8Array;
  /** The serial number's magnitude in lower-case hex, without sign-padding zeros. */
  readonly serialHex: string;
  /** The INTEGER content bytes as encoded. */
  readonly serial: Uint8Array;
}

export function readIssuerAndSerial(der: Uint8Array): IssuerAndSerial {
  return guarded('badRequest', 'Malformed IssuerAndSerialNumber', () => {
    const [issuer, serial, extra] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'IssuerAndSerialNumber'));
    if (extra) throw new Error('extra fields');
    return {
      issuerDer: Uint8Array.from(raw(expectTag(issuer, TAG.SEQUENCE, 'issuer'))),
      serialHex: integerHex(serial, 'serialNumber'),
      serial: Uint8Array.from(content(serial!)),
    };
  });
}

/** IssuerAndSerialNumber from an issuer Name (DER) and a serial magnitude (bytes or hex). */
export function encodeIssuerAndSerial(issuerDer: Uint8Array, serial: Uint8Array | string): Uint8Array {
  const bytes = typeof serial === 'string' ? Buffer.from(serial.length % 2 ? `0${serial}` : serial, 'hex') : serial;
  return seq(issuerDer, unsignedInteger(bytes));
}

/** The IssuerAndSerialNumber naming a certificate (GetCert on it, GetCRL for its issuer's CRL). */
export function issuerAndSerialOf(certificateDer: Uint8Array): Uint8Array {
  const c = certificateFields(certificateDer);
  return seq(c.issuerDer, integerContent(c.serial));
}

export interface IssuerAndSubject {
  readonly issuerDer: Uint8Array;
  readonly subjectDer: Uint8Array;
}

export function readIssuerAndSubject(der: Uint8Array): IssuerAndSubject {
  return guarded('badRequest', 'Malformed IssuerAndSubject', () => {
    const [issuer, subject, extra] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'IssuerAndSubject'));
    if (extra) throw new Error('extra fields');
    return {
      issuerDer: Uint8Array.from(raw(expectTag(issuer, TAG.SEQUENCE, 'issuer'))),
      subjectDer: Uint8Array.from(raw(expectTag(subject, TAG.SEQUENCE, 'subject'))),
    };
  });
}

export function encodeIssuerAndSubject(issuerDer: Uint8Array, subjectDer: Uint8Array): Uint8Array {
  return seq(issuerDer, subjectDer);
}

function requestInfo(csrDer: Uint8Array) {
  const [info] = children(expectTag(parseDer(csrDer), TAG.SEQUENCE, 'CertificationRequest'));
  const f = children(expectTag(info, TAG.SEQUENCE, 'CertificationRequestInfo'));
  expectTag(f[0], TAG.INTEGER, 'version');
  return { subject: expectTag(f[1], TAG.SEQUENCE, 'subject'), attributes: f[3]?.tag === 0xa0 ? children(f[3]) : [] };
}

/**
 * The PKCS#9 challengePassword of a PKCS#10 request (a DirectoryString: PrintableString, UTF8String,
 * IA5String, T61String, BMPString…), or undefined when the request carries none.
 */
export function challengePasswordOf(csrDer: Uint8Array): string | undefined {
  return guarded('badRequest', 'Malformed certification request', () => {
    for (const a of requestInfo(csrDer).attributes) {
      const [type, values] = children(expectTag(a, TAG.SEQUENCE, 'Attribute'));
      if (readOid(type, 'attrType') !== OID.challengePassword) continue;
      const [value] = children(expectTag(values, TAG.SET, 'attrValues'));
      return readString(value, 'challengePassword');
    }
    return undefined;
  });
}

/** The subject Name (DER) of a PKCS#10 request: with the CA's subject, what a CertPoll names. */
export function csrSubjectOf(csrDer: Uint8Array): Uint8Array {
  return guarded('badRequest', 'Malformed certification request', () => Uint8Array.from(raw(requestInfo(csrDer).subject)));
}
