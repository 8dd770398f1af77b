import * as asn1js from 'asn1js';
import { ProblemError } from '../../errors/index.js';
import { parseAsn1 } from './asn1.js';
import { decodeOcspRequest, type OcspRequestInfo } from './request.js';
import { decodeOcspResponse, type OcspResponseInfo } from './response.js';

export type { OcspCertId } from './cert-id.js';
export type { OcspRequestInfo } from './request.js';
export type { OcspResponseInfo, OcspSingleResponse } from './response.js';
export type OcspInfo = OcspRequestInfo | OcspResponseInfo;

/**
 * An OCSP request or response (RFC 6960), told apart by structure: a response starts with its ENUMERATED
 * status, a request with its tbsRequest SEQUENCE. Anything else is PKI-002.
 */
export function decodeOcsp(der: Uint8Array): OcspInfo {
  const tree = parseAsn1(der, 'OCSP object');
  const first = tree instanceof asn1js.Sequence ? tree.valueBlock.value[0] : undefined;
  if (first?.idBlock.tagClass === 1 && first.idBlock.tagNumber === 10) return decodeOcspResponse(tree);
  if (first?.idBlock.tagClass === 1 && first.idBlock.tagNumber === 16 && first.idBlock.isConstructed) return decodeOcspRequest(tree);
  throw new ProblemError('PKI-002', { detail: 'neither an OCSP request nor an OCSP response' });
}
