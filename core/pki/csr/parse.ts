/**
 * The PKCS#10 decoder (rfc5280/pkcs10 routes, enrollment): subject, requested SANs and extensions,
 * key, attributes, and whether the request is signed by its own key (proof of possession). Same rules
 * as the certificate decoder: the lean reader, and a PKI problem for any bad input.
 */
import { readOid, readString } from '../der/reader.js';
import { decodeInput, toPem } from '../input.js';
import { decodeName, type DnElement } from '../names.js';
import { readExtensions } from '../x509/extensions.js';
import { anyValue } from '../x509/general-names.js';
import { decodeFailure, kindOfLabel, wrongKind } from '../x509/kind.js';
import { publicKeyThumbprint, readPublicKey } from '../x509/keys.js';
import type { DecodedExtensions, SubjectAlternateName } from '../x509/model.js';
import { readSignatureAlgorithm, verifySignature, verifySignatureOffThread, type SignatureAlgorithm } from '../x509/signature.js';
import { csrAttributes, readCsr } from './structure.js';

export const CSR_ATTRIBUTES = {
  challengePassword: '1.2.840.113549.1.9.7',
  unstructuredName: '1.2.840.113549.1.9.2',
  extensionRequest: '1.2.840.113549.1.9.14',
  /** Microsoft's older name for extensionRequest (certreq). */
  msExtensionRequest: '1.3.6.1.4.1.311.2.1.14',
} as const;

export interface CsrAttributes {
  challengePassword?: string;
  unstructuredName?: string;
  /** The requested extensions, decoded as a certificate's are. */
  extensionRequest?: DecodedExtensions;
  /** Attributes not decoded above: values as text, or `#` + DER hex. */
  other: { oid: string; values: string[] }[];
}

/** A decoded CSR: the compat `{dn, sans, dnElements, keyType, pem}` (client-compat §7) and more. */
export interface CsrInfo {
  pem: string;
  dn: string;
  dnElements: DnElement[];
  /** Requested subject alternative names (from the extensionRequest). */
  sans: SubjectAlternateName[];
  keyType: string;
  publicKeyThumbprint: string;
  signingAlgorithm: string;
  /** The request is signed by the key it carries. */
  signatureValid: boolean;
  attributes: CsrAttributes;
}

/** What the proof-of-possession check needs: the signature over the request info, by the key it carries. */
interface PossessionCheck {
  algorithm: SignatureAlgorithm;
  spki: Uint8Array;
  info: Uint8Array;
  signature: Uint8Array;
}

/** The CSR decoded, all but its signature check (`signatureValid` false until `check` is run). */
function decodeUnchecked(der: Uint8Array): { info: CsrInfo; check: PossessionCheck } {
  const s = readCsr(der);
  const subject = decodeName(der, s.subject);
  const key = readPublicKey(der, s.spki);
  const algorithm = readSignatureAlgorithm(der, s.signatureAlgorithm);
  const attributes: CsrAttributes = { other: [] };
  let sans: SubjectAlternateName[] = [];
  for (const { type, values } of csrAttributes(der, s)) {
    const oid = readOid(der, type);
    const [first] = values;
    if (first && values.length === 1 && (oid === CSR_ATTRIBUTES.extensionRequest || oid === CSR_ATTRIBUTES.msExtensionRequest)) {
      const read = readExtensions(der, first);
      attributes.extensionRequest = read.extensions;
      sans = read.subjectAlternateNames;
    } else if (first && values.length === 1 && oid === CSR_ATTRIBUTES.challengePassword) {
      attributes.challengePassword = readString(der, first);
    } else if (first && values.length === 1 && oid === CSR_ATTRIBUTES.unstructuredName) {
      attributes.unstructuredName = readString(der, first);
    } else {
      attributes.other.push({ oid, values: values.map((v) => anyValue(der, v)) });
    }
  }
  const info: CsrInfo = {
    pem: toPem(der, 'CERTIFICATE REQUEST'),
    dn: subject.dn,
    dnElements: subject.elements,
    sans,
    keyType: key.keyType,
    publicKeyThumbprint: publicKeyThumbprint(key.spki),
    signingAlgorithm: algorithm.name,
    signatureValid: false,
    attributes,
  };
  return { info, check: { algorithm, spki: key.spki, info: s.info, signature: s.signature } };
}

function decode(der: Uint8Array): CsrInfo {
  const { info, check } = decodeUnchecked(der);
  info.signatureValid = verifySignature(check.algorithm, check.spki, check.info, check.signature);
  return info;
}

/** Decodes one DER CSR. Throws ProblemError PKI-001/002/004/005. */
export function parseCsr(der: Uint8Array): CsrInfo {
  try {
    return decode(der);
  } catch (err) {
    throw decodeFailure(err, der, 'CSR');
  }
}

/** The DER of a CSR sent as PEM (possibly percent-encoded), bare base64 or DER bytes. */
function csrDerOf(input: string | Uint8Array): Uint8Array {
  const decoded = decodeInput(input);
  if (decoded.label !== undefined) {
    const kind = kindOfLabel(decoded.label);
    if (kind !== 'CSR' && kind !== 'unknown') throw wrongKind('CSR', kind);
  }
  return decoded.der;
}

/** Decodes a CSR sent as PEM (possibly percent-encoded), bare base64 or DER bytes. */
export function parseCsrPem(input: string | Uint8Array): CsrInfo {
  return parseCsr(csrDerOf(input));
}

/**
 * `parseCsrPem` for a server answering many requests: the signature check runs on the signature worker
 * thread (x509/signature-thread.ts), not on the caller's.
 */
export async function parseCsrPemOffThread(input: string | Uint8Array): Promise<CsrInfo> {
  const der = csrDerOf(input);
  let decoded: ReturnType<typeof decodeUnchecked>;
  try {
    decoded = decodeUnchecked(der);
  } catch (err) {
    throw decodeFailure(err, der, 'CSR');
  }
  const { info, check } = decoded;
  info.signatureValid = await verifySignatureOffThread(check.algorithm, check.spki, check.info, check.signature);
  return info;
}
