import * as pkijs from 'pkijs';
import type * as asn1js from 'asn1js';
import type { CertificateInfo } from '../x509/model.js';
import { bytesOf, embeddedCertificates, fromTree, generalName, nonceHex, signatureName } from './asn1.js';
import { certId, OCSP_NONCE, type OcspCertId } from './cert-id.js';
import { checkSignature } from './signature.js';

export interface OcspRequestInfo {
  kind: 'request';
  /** 1 for v1, as openssl prints it. */
  version: number;
  requests: OcspCertId[];
  /** Lower-case hex of the nonce bytes. */
  nonce?: string;
  /** The requestor name of a signed request (a DN, or `label:value`). */
  requestor?: string;
  signed: boolean;
  signingAlgorithm?: string;
  certificates?: CertificateInfo[];
  /** Signed requests: checked with the embedded certificate of the requestor; null without one. */
  signatureValid?: boolean | null;
}

/**
 * The optionalSignature's algorithm, read from the tree: pkijs' Signature names it `signatureAlgorithm`
 * in its schema, as Certificate names its own, so with certificates included pkijs reports the last
 * certificate's algorithm instead (pkijs 4.0.0).
 */
function signatureAlgorithm(tree: asn1js.AsnType): pkijs.AlgorithmIdentifier {
  const tagged = (tree as asn1js.Sequence).valueBlock.value[1] as asn1js.Constructed;
  const signature = tagged.valueBlock.value[0] as asn1js.Sequence;
  return new pkijs.AlgorithmIdentifier({ schema: signature.valueBlock.value[0] });
}

/** An OCSPRequest (RFC 6960 §4.1.1) from its parsed tree. */
export function decodeOcspRequest(tree: asn1js.AsnType): OcspRequestInfo {
  const request = fromTree((schema) => new pkijs.OCSPRequest({ schema }), tree, 'OCSP request');
  const tbs = request.tbsRequest;
  const info: OcspRequestInfo = {
    kind: 'request',
    version: (tbs.version ?? 0) + 1,
    requests: tbs.requestList.map((r) => certId(r.reqCert)),
    signed: request.optionalSignature !== undefined,
  };
  const nonce = nonceHex(tbs.requestExtensions, OCSP_NONCE);
  if (nonce !== undefined) info.nonce = nonce;
  if (tbs.requestorName) info.requestor = generalName(tbs.requestorName);
  const signature = request.optionalSignature;
  if (signature) {
    const certs = embeddedCertificates(signature.certs);
    const algorithm = signatureAlgorithm(tree);
    info.signingAlgorithm = signatureName(algorithm.algorithmId);
    info.certificates = certs.map((c) => c.info);
    // The signer names itself in requestorName (RFC 6960 §4.1.2); else its certificate is the likely first.
    const signer = certs.find((c) => c.info.dn === info.requestor) ?? certs[0];
    info.signatureValid = signer
      ? checkSignature(algorithm, signer.spki, bytesOf(tbs.tbsView), signature.signature.valueBlock.valueHexView)
      : null;
  }
  return info;
}
