import { ProblemError } from '../../errors/index.js';
import { children, DerError, expectTag, readOid, readTop, TAG, whole, type Tlv } from '../der/reader.js';
import { decodeCrl, type DecodedCrl } from '../crl/decode.js';
import { MAX_DEPTH, problemFor } from '../detect.js';
import { parseCertificate } from '../x509/parse.js';
import type { CertificateInfo } from '../x509/model.js';
import { berToDer } from './ber.js';

export interface DecodedPkcs7 {
  /** Certificates in the order the bundle lists them (a p7b has no chain order; trust-chain code sorts). */
  certificates: CertificateInfo[];
  crls: DecodedCrl[];
  /** Attribute certificates and other certificate choices, counted but not decoded. */
  otherCertificates: number;
  /** 0 for a degenerate ("certs-only") SignedData such as a p7b bundle. */
  signerCount: number;
  /** Type of the encapsulated content (1.2.840.113549.1.7.1 = data for bundles). */
  encapsulatedContentType: string;
}

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/**
 * The certificates and CRLs of a PKCS#7 / CMS SignedData (RFC 5652), typically a degenerate p7b bundle
 * (`openssl crl2pkcs7`, Windows "PKCS #7 certificates" exports, CA chain downloads). BER framing is
 * accepted; signatures are not checked (bundles carry none). Other content types → PKI-006.
 */
export function decodePkcs7(input: Uint8Array): DecodedPkcs7 {
  let der = input;
  let parts: { certificates: Uint8Array[]; crls: Uint8Array[]; other: number; signers: number; eContentType: string };
  try {
    der = berToDer(input, MAX_DEPTH);
    parts = readSignedData(der);
  } catch (err) {
    throw problemFor(err, der, 'pkcs7');
  }
  return {
    certificates: parts.certificates.map((c) => parseCertificate(c)),
    crls: parts.crls.map((c) => decodeCrl(c)),
    otherCertificates: parts.other,
    signerCount: parts.signers,
    encapsulatedContentType: parts.eContentType,
  };
}

function readSignedData(der: Uint8Array) {
  const top = readTop(der, TAG.SEQUENCE, 'ContentInfo');
  const [oid, explicit] = children(der, top);
  const contentType = readOid(der, oid ?? top);
  if (contentType !== SIGNED_DATA) throw new ProblemError('PKI-006', { detail: `PKCS#7 content of type ${contentType}: only SignedData is decoded` });
  if (explicit?.tag !== 0xa0) throw new DerError('ContentInfo without [0] content', top.start);
  const [signedData] = children(der, explicit);
  const fields = children(der, expectTag(signedData ?? explicit, TAG.SEQUENCE, 'SignedData'));
  const [version, digestAlgorithms, encap] = fields;
  expectTag(version ?? explicit, TAG.INTEGER, 'SignedData version');
  expectTag(digestAlgorithms ?? explicit, TAG.SET, 'digestAlgorithms');
  const [eContentTypeTlv] = children(der, expectTag(encap ?? explicit, TAG.SEQUENCE, 'encapContentInfo'));
  const eContentType = readOid(der, eContentTypeTlv ?? encap!);
  const out = { certificates: [] as Uint8Array[], crls: [] as Uint8Array[], other: 0, signers: 0, eContentType };
  const rest = fields.slice(3);
  let i = 0;
  if (rest[i]?.tag === 0xa0) {
    for (const choice of children(der, rest[i++]!)) {
      if (choice.tag === TAG.SEQUENCE) out.certificates.push(copy(der, choice));
      else out.other++;
    }
  }
  if (rest[i]?.tag === 0xa1) {
    // RevocationInfoChoice: a CRL, or [1] other formats (OCSP responses…), which are skipped.
    for (const choice of children(der, rest[i++]!)) if (choice.tag === TAG.SEQUENCE) out.crls.push(copy(der, choice));
  }
  const signerInfos = rest[i++];
  out.signers = children(der, expectTag(signerInfos ?? explicit, TAG.SET, 'signerInfos')).length;
  if (i !== rest.length) throw new DerError('unexpected field after signerInfos', rest[i]!.start);
  return out;
}

const copy = (der: Uint8Array, tlv: Tlv): Uint8Array => Uint8Array.from(whole(der, tlv));
