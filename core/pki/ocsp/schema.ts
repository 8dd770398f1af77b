import { certificateViewSchema } from '../views/x509.js';

/** JSON schema of a decoded OCSP request or response (one object, `kind` tells which fields apply). */
const str = { type: 'string' } as const;
const ms = { type: 'integer', description: 'epoch ms' } as const;
const hex = { type: 'string', description: 'lower-case hex' } as const;

const certIdProperties = { hashAlgorithm: str, issuerNameHash: hex, issuerKeyHash: hex, serial: hex } as const;
const certIdSchema = { type: 'object', required: Object.keys(certIdProperties), properties: certIdProperties } as const;

export const ocspSchema = {
  type: 'object',
  required: ['kind'],
  description: 'kind request: version, requests, nonce, requestor, signed (+ signingAlgorithm, certificates, signatureValid). kind response: responseStatus, then for successful basic responses the rest.',
  properties: {
    kind: { type: 'string', enum: ['request', 'response'] },
    version: { type: 'integer' },
    requests: { type: 'array', items: certIdSchema },
    requestor: str,
    signed: { type: 'boolean' },
    responseStatus: { type: 'string', enum: ['successful', 'malformedRequest', 'internalError', 'tryLater', 'sigRequired', 'unauthorized'] },
    responseType: { type: 'string', description: 'basic, or the OID of another response type' },
    responderId: { type: 'object', properties: { dn: str, keyHash: hex } },
    producedAt: ms,
    responses: {
      type: 'array',
      items: {
        type: 'object',
        required: [...Object.keys(certIdProperties), 'certStatus', 'thisUpdate'],
        properties: {
          ...certIdProperties,
          certStatus: { type: 'string', enum: ['good', 'revoked', 'unknown'] },
          revocationTime: ms,
          revocationReason: str,
          thisUpdate: ms,
          nextUpdate: ms,
        },
      },
    },
    nonce: hex,
    signingAlgorithm: str,
    certificates: { type: 'array', items: certificateViewSchema },
    signatureValid: { type: ['boolean', 'null'], description: 'null when no signer certificate is embedded or the algorithm cannot be checked' },
  },
} as const;
