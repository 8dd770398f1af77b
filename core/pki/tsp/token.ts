import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ProblemError } from '../../errors/index.js';
import { hex } from '../der/reader.js';
import { bytesOf, embeddedCertificates, epochMs, fromTree, generalName, HASH_ALGORITHMS, hashName, integerHex, nameDn, parsePkijs, signatureName, type EmbeddedCertificate } from '../ocsp/asn1.js';
import { checkSignature } from '../ocsp/signature.js';
import type { CertificateInfo } from '../x509/model.js';
import { extensionOids, messageImprint, type MessageImprint } from './imprint.js';

const SIGNED_DATA = '1.2.840.113549.1.7.2';
const TST_INFO = '1.2.840.113549.1.9.16.1.4';
const MESSAGE_DIGEST = '1.2.840.113549.1.9.4';

/** Who signed the token: the SignerInfo's identifier, and the certificate it names when embedded. */
export interface TspSigner {
  /** Subject of the signer's certificate; without it, the TSA's directory name (RFC 3161 §2.4.2 ties them). */
  dn?: string;
  /** IssuerAndSerialNumber identifiers. */
  issuer?: string;
  serial?: string;
  /** SubjectKeyIdentifier identifiers (lower-case hex). */
  keyId?: string;
  certificate?: CertificateInfo;
}

export interface TspTokenInfo {
  version: number;
  policy: string;
  /** Lower-case hex. */
  serial: string;
  /** Epoch ms (milliseconds kept when the TSA gives them). */
  genTime: number;
  accuracy?: { seconds?: number; millis?: number; micros?: number };
  ordering: boolean;
  nonce?: string;
  messageImprint: MessageImprint;
  /** The TSA's name (a DN, or `label:value`). */
  tsa?: string;
  extensions?: string[];
  signer: TspSigner;
  digestAlgorithm: string;
  signingAlgorithm: string;
  certificates: CertificateInfo[];
  /**
   * The signed attributes' message digest matches the TSTInfo and the signature verifies with the
   * signer's embedded certificate; null when that certificate is not embedded (queries without certReq).
   */
  signatureValid: boolean | null;
}

function signerOf(info: pkijs.SignerInfo, certs: EmbeddedCertificate[]): { signer: TspSigner; cert?: EmbeddedCertificate } {
  if (info.sid instanceof pkijs.IssuerAndSerialNumber) {
    const issuer = nameDn(info.sid.issuer);
    const serial = integerHex(info.sid.serialNumber);
    return { signer: { issuer, serial }, cert: certs.find((c) => c.info.issuer === issuer && c.info.serial === serial) };
  }
  // subjectKeyIdentifier [0] IMPLICIT OCTET STRING (primitive, as DER has it)
  if (!(info.sid instanceof asn1js.Primitive)) throw new ProblemError('PKI-001', { detail: 'malformed signer identifier' });
  const keyId = hex(info.sid.valueBlock.valueHexView);
  return { signer: { keyId }, cert: certs.find((c) => c.info.extensions.subjectKeyIdentifier === keyId) };
}

/**
 * RFC 5652 §5.4: with signed attributes, the signature covers their DER (as a SET) and their message
 * digest must be the content's hash; without, it covers the content itself.
 */
function verifySigner(info: pkijs.SignerInfo, content: Uint8Array, cert: EmbeddedCertificate | undefined): boolean | null {
  if (!cert) return null;
  const digestOid = info.digestAlgorithm.algorithmId;
  let signed = content;
  if (info.signedAttrs) {
    const hash = HASH_ALGORITHMS[digestOid];
    if (!hash) return null;
    const digest = info.signedAttrs.attributes.find((a) => a.type === MESSAGE_DIGEST)?.values[0];
    if (!(digest instanceof asn1js.OctetString)) return false;
    if (!createHash(hash).update(content).digest().equals(digest.valueBlock.valueHexView)) return false;
    // pkijs keeps the attributes' original bytes with the [0] tag already turned into SET.
    signed = bytesOf(info.signedAttrs.encodedValue);
  }
  return checkSignature(info.signatureAlgorithm, cert.spki, signed, info.signature.valueBlock.valueHexView, digestOid);
}

/** A TimeStampToken (ContentInfo → SignedData → TSTInfo, RFC 3161 §2.4.2) as pkijs read it. */
export function decodeTspToken(contentInfo: pkijs.ContentInfo): TspTokenInfo {
  if (contentInfo.contentType !== SIGNED_DATA) throw new ProblemError('PKI-002', { detail: `a CMS ${contentInfo.contentType}, not a time-stamp token` });
  const signedData = fromTree((schema) => new pkijs.SignedData({ schema }), contentInfo.content, 'time-stamp token');
  const encap = signedData.encapContentInfo;
  if (encap.eContentType !== TST_INFO) throw new ProblemError('PKI-002', { detail: 'a signed message that is not a time-stamp token' });
  if (!(encap.eContent instanceof asn1js.OctetString)) throw new ProblemError('PKI-001', { detail: 'a time-stamp token without its TSTInfo' });
  const content = bytesOf(encap.eContent.getValue());
  const tst = parsePkijs(content, (schema) => new pkijs.TSTInfo({ schema }), 'TSTInfo');
  const [signerInfo, extra] = signedData.signerInfos;
  // RFC 3161 §2.4.2: exactly one signer, the TSA.
  if (!signerInfo || extra) throw new ProblemError('PKI-001', { detail: `${signedData.signerInfos.length} signers (a time-stamp token has one)` });
  const certs = embeddedCertificates(signedData.certificates);
  const { signer, cert } = signerOf(signerInfo, certs);
  const tsa = tst.tsa ? generalName(tst.tsa) : undefined;
  const dn = cert?.info.dn ?? (tst.tsa?.type === 4 ? tsa : undefined);
  const token: TspTokenInfo = {
    version: tst.version,
    policy: tst.policy,
    serial: integerHex(tst.serialNumber),
    genTime: epochMs(tst.genTime, 'genTime'),
    ordering: tst.ordering ?? false,
    messageImprint: messageImprint(tst.messageImprint),
    signer: { ...(dn !== undefined ? { dn } : {}), ...signer, ...(cert ? { certificate: cert.info } : {}) },
    digestAlgorithm: hashName(signerInfo.digestAlgorithm.algorithmId),
    signingAlgorithm: signatureName(signerInfo.signatureAlgorithm.algorithmId),
    certificates: certs.map((c) => c.info),
    signatureValid: verifySigner(signerInfo, content, cert),
  };
  if (tst.accuracy) {
    const { seconds, millis, micros } = tst.accuracy;
    token.accuracy = { ...(seconds !== undefined ? { seconds } : {}), ...(millis !== undefined ? { millis } : {}), ...(micros !== undefined ? { micros } : {}) };
  }
  if (tst.nonce) token.nonce = integerHex(tst.nonce);
  if (tsa !== undefined) token.tsa = tsa;
  const extensions = extensionOids(tst.extensions);
  if (extensions) token.extensions = extensions;
  return token;
}
