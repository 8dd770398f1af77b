import type { OcspInfo, OcspSingleResponse } from '../ocsp/decode.js';
import { ocspSchema } from '../ocsp/schema.js';
import { certificateView } from './x509.js';

/**
 * A decoded OCSP request or response. Responses use the names Horizon's clients read (the MCP server's
 * decode_ocsp, src/tools/assist/crypto.ts): `status` for the response status, `respID`, and per
 * certificate `{certID: {serial, hashAlg, issuerKeyHash, issuerNameHash}, status, thisUpdate,
 * nextUpdate}`; Certwright keeps the responder's kind (`responderId`), revocation details, nonce,
 * signer and signature check beside them. Requests are answered as decoded.
 */
function singleView(r: OcspSingleResponse) {
  const { hashAlgorithm, issuerNameHash, issuerKeyHash, serial, certStatus, ...rest } = r;
  return { certID: { serial, hashAlg: hashAlgorithm, issuerKeyHash, issuerNameHash }, status: certStatus, ...rest };
}

export function ocspView(info: OcspInfo): Record<string, unknown> {
  // Embedded signer certificates as the x509 decoder answers them.
  const certificates = info.certificates ? { certificates: info.certificates.map(certificateView) } : {};
  if (info.kind === 'request') return { ...info, ...certificates };
  const { responseStatus, responses, ...rest } = info;
  const view: Record<string, unknown> = { ...rest, ...certificates, status: responseStatus };
  if (info.responderId) view.respID = 'dn' in info.responderId ? info.responderId.dn : info.responderId.keyHash;
  if (responses) view.responses = responses.map(singleView);
  return view;
}

const { responseStatus, responses, ...properties } = ocspSchema.properties;
const single = responses.items.properties;
export const ocspViewSchema = {
  type: 'object',
  required: ['kind'],
  description: 'kind request: version, requests, nonce, requestor, signed (+ signingAlgorithm, certificates, signatureValid). kind response: status, then for successful basic responses respID, producedAt, responses and the rest.',
  properties: {
    ...properties,
    status: { ...responseStatus, description: 'responses: the OCSP response status' },
    respID: { type: 'string', description: "the responder: its DN (RFC 4514) or its key hash (hex); responderId says which" },
    responses: {
      type: 'array',
      items: {
        type: 'object',
        required: ['certID', 'status', 'thisUpdate'],
        properties: {
          certID: {
            type: 'object',
            required: ['serial', 'hashAlg', 'issuerKeyHash', 'issuerNameHash'],
            properties: { serial: single.serial, hashAlg: single.hashAlgorithm, issuerKeyHash: single.issuerKeyHash, issuerNameHash: single.issuerNameHash },
          },
          status: single.certStatus,
          revocationTime: single.revocationTime,
          revocationReason: single.revocationReason,
          thisUpdate: single.thisUpdate,
          nextUpdate: single.nextUpdate,
        },
      },
    },
  },
} as const;
