/**
 * The body of simpleenroll / simplereenroll: a PKCS#10 request in base64 (RFC 8951: whatever
 * Content-Transfer-Encoding says, line breaks allowed), or DER for clients that send it raw.
 */
import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { EST_ERRORS } from './errors.js';

const CHALLENGE_PASSWORD = '1.2.840.113549.1.9.7';

export interface EstCsr {
  der: Buffer;
  pem: string;
  /** SHA-256 of the DER, hex: how a poll finds its request. */
  hash: string;
  /** The subject's attributes, normalized (types and values, case and spacing folded): compared with a renewed certificate's. */
  subject: string[];
  /** The PKCS#9 challengePassword attribute, when the CSR carries one. */
  challengePassword: string | null;
  /** SHA-256 of the CSR's SubjectPublicKeyInfo DER, hex: finds the certificate a same-key renewal renews. */
  publicKeyThumbprint: string;
}

export function derOfBody(body: Buffer): Buffer {
  if (body.length === 0) throw EST_ERRORS.encoding('it is empty');
  // DER starts with a SEQUENCE tag (0x30); base64 of a SEQUENCE starts with "M".
  if (body[0] === 0x30) return body;
  let text = body.toString('latin1');
  const pem = /-----BEGIN (?:NEW )?CERTIFICATE REQUEST-----([\s\S]*?)-----END (?:NEW )?CERTIFICATE REQUEST-----/.exec(text);
  if (pem) text = pem[1]!;
  text = text.replace(/[\r\n\t ]+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 === 1) throw EST_ERRORS.encoding('it has characters base64 does not use');
  return Buffer.from(text, 'base64');
}

export function parseEstCsr(body: Buffer): EstCsr {
  const der = derOfBody(body);
  let csr: pkijs.CertificationRequest;
  try {
    const parsed = asn1js.fromBER(new Uint8Array(der));
    if (parsed.offset === -1 || parsed.offset !== der.length) throw new Error('trailing or broken DER');
    csr = new pkijs.CertificationRequest({ schema: parsed.result });
  } catch {
    throw EST_ERRORS.encoding('the DER is not a PKCS#10 request');
  }
  let challengePassword: string | null = null;
  for (const attribute of csr.attributes ?? []) {
    if (attribute.type !== CHALLENGE_PASSWORD) continue;
    const value = attribute.values[0] as { valueBlock?: { value?: unknown } } | undefined;
    if (typeof value?.valueBlock?.value === 'string') challengePassword = value.valueBlock.value;
  }
  const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
  return {
    der,
    pem,
    hash: createHash('sha256').update(der).digest('hex'),
    subject: normalizedName(csr.subject),
    challengePassword,
    publicKeyThumbprint: createHash('sha256').update(Buffer.from(csr.subjectPublicKeyInfo.toSchema().toBER(false))).digest('hex'),
  };
}

/** A certificate's subject, normalized as EstCsr.subject. */
export function subjectOfCertificate(der: Buffer): string[] {
  return normalizedName(pkijs.Certificate.fromBER(der).subject);
}

/**
 * Whether a CSR keeps a certificate's subject: every attribute of the certificate's subject is in the CSR's (the
 * profile may have dropped some of the first CSR's attributes; the renewal is issued with the certificate's).
 */
export function keepsSubject(certificate: string[], csr: string[]): boolean {
  const requested = new Set(csr);
  return certificate.every((e) => requested.has(e));
}

/** Types and values in order, values trimmed with case and inner spaces folded (RFC 5280 §7.1 in spirit). */
function normalizedName(name: pkijs.RelativeDistinguishedNames): string[] {
  return name.typesAndValues.map((tv) => {
    const value = (tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value;
    const text = typeof value === 'string' ? value : Buffer.from(tv.value.toBER(false)).toString('hex');
    return `${tv.type}=${text.trim().replace(/\s+/g, ' ').toLowerCase()}`;
  });
}
