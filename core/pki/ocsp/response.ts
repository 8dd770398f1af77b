import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ProblemError } from '../../errors/index.js';
import { children, hex, readSmallInt, readTime, readTlv, TAG } from '../der/reader.js';
import type { CertificateInfo } from '../x509/model.js';
import { bytesOf, embeddedCertificates, epochMs, fromTree, nameDn, nonceHex, parsePkijs, readDer, signatureName } from './asn1.js';
import { certId, OCSP_NONCE, type OcspCertId } from './cert-id.js';
import { checkSignature } from './signature.js';

/** OCSPResponseStatus (RFC 6960 §4.2.1); 4 is not used. */
const RESPONSE_STATUSES = ['successful', 'malformedRequest', 'internalError', 'tryLater', undefined, 'sigRequired', 'unauthorized'] as const;
/** CRLReason (RFC 5280 §5.3.1); 7 is not used. */
const REVOCATION_REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', undefined, 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise'] as const;
const BASIC_RESPONSE = '1.3.6.1.5.5.7.48.1.1';

export type OcspResponseStatus = Exclude<(typeof RESPONSE_STATUSES)[number], undefined>;

export interface OcspSingleResponse extends OcspCertId {
  certStatus: 'good' | 'revoked' | 'unknown';
  /** Epoch ms. */
  revocationTime?: number;
  revocationReason?: string;
  thisUpdate: number;
  nextUpdate?: number;
}

export interface OcspResponseInfo {
  kind: 'response';
  responseStatus: OcspResponseStatus;
  /** `basic`, or the OID of a response type not decoded here. Absent when the status is not successful. */
  responseType?: string;
  version?: number;
  responderId?: { dn: string } | { keyHash: string };
  producedAt?: number;
  responses?: OcspSingleResponse[];
  nonce?: string;
  signingAlgorithm?: string;
  certificates?: CertificateInfo[];
  /** Checked with the embedded certificate the responder id names; null when none is embedded. */
  signatureValid?: boolean | null;
}

type Status = Pick<OcspSingleResponse, 'certStatus' | 'revocationTime' | 'revocationReason'>;

/** CertStatus: good [0] NULL, revoked [1] RevokedInfo {revocationTime, [0] EXPLICIT CRLReason}, unknown [2] NULL. */
function certStatus(status: asn1js.BaseBlock): Status {
  const tag = status.idBlock.tagNumber;
  if (status.idBlock.tagClass !== 3 || tag > 2) throw new ProblemError('PKI-001', { detail: `certificate status with tag [${tag}]` });
  if (tag !== 1) return { certStatus: tag === 0 ? 'good' : 'unknown' };
  const der = status.valueBeforeDecodeView;
  return readDer('revoked info', () => {
    const [time, reason] = children(der, readTlv(der, 0));
    if (!time) throw new ProblemError('PKI-001', { detail: 'revoked status without a revocation time' });
    const out: Status = { certStatus: 'revoked', revocationTime: readTime(der, time) };
    if (reason) {
      const [value] = children(der, reason);
      if (reason.tag !== 0xa0 || value?.tag !== TAG.ENUMERATED) throw new ProblemError('PKI-001', { detail: 'malformed revocation reason' });
      const code = readSmallInt(der, value);
      out.revocationReason = REVOCATION_REASONS[code] ?? String(code);
    }
    return out;
  });
}

function singleResponse(single: pkijs.SingleResponse): OcspSingleResponse {
  const out: OcspSingleResponse = { ...certId(single.certID), ...certStatus(single.certStatus as asn1js.BaseBlock), thisUpdate: epochMs(single.thisUpdate, 'thisUpdate') };
  if (single.nextUpdate) out.nextUpdate = epochMs(single.nextUpdate, 'nextUpdate');
  return out;
}

/** An OCSPResponse (RFC 6960 §4.2.1) from its parsed tree; a basic response is decoded in full. */
export function decodeOcspResponse(tree: asn1js.AsnType): OcspResponseInfo {
  const response = fromTree((schema) => new pkijs.OCSPResponse({ schema }), tree, 'OCSP response');
  const code = response.responseStatus.valueBlock.valueDec;
  const responseStatus = RESPONSE_STATUSES[code];
  if (responseStatus === undefined) throw new ProblemError('PKI-001', { detail: `unknown OCSP response status ${code}` });
  const info: OcspResponseInfo = { kind: 'response', responseStatus };
  const bytes = response.responseBytes;
  if (!bytes) {
    if (responseStatus === 'successful') throw new ProblemError('PKI-001', { detail: 'a successful response without a response' });
    return info;
  }
  if (bytes.responseType !== BASIC_RESPONSE) return { ...info, responseType: bytes.responseType };
  const basic = parsePkijs(bytesOf(bytes.response.getValue()), (schema) => new pkijs.BasicOCSPResponse({ schema }), 'basic OCSP response');
  const tbs = basic.tbsResponseData;
  const responder = tbs.responderID;
  if (!(responder instanceof pkijs.RelativeDistinguishedNames) && !(responder instanceof asn1js.OctetString)) throw new ProblemError('PKI-001', { detail: 'malformed responder id' });
  const responderId = responder instanceof pkijs.RelativeDistinguishedNames ? { dn: nameDn(responder) } : { keyHash: hex(responder.valueBlock.valueHexView) };
  const certs = embeddedCertificates(basic.certs);
  // RFC 6960 §4.2.2.3: byKey is the SHA-1 of the responder's public key (the BIT STRING's content).
  const signer = certs.find((c) => ('dn' in responderId ? c.info.dn === responderId.dn : createHash('sha1').update(c.publicKey).digest('hex') === responderId.keyHash));
  const nonce = nonceHex(tbs.responseExtensions, OCSP_NONCE);
  return {
    ...info,
    responseType: 'basic',
    version: (tbs.version ?? 0) + 1,
    responderId,
    producedAt: epochMs(tbs.producedAt, 'producedAt'),
    responses: tbs.responses.map(singleResponse),
    ...(nonce !== undefined ? { nonce } : {}),
    signingAlgorithm: signatureName(basic.signatureAlgorithm.algorithmId),
    certificates: certs.map((c) => c.info),
    signatureValid: signer ? checkSignature(basic.signatureAlgorithm, signer.spki, bytesOf(tbs.tbsView), basic.signature.valueBlock.valueHexView) : null,
  };
}
