import { certificateViewSchema } from '../views/x509.js';

/** JSON schema of a decoded time-stamp query, reply or bare token (`kind` tells which fields apply). */
const str = { type: 'string' } as const;
const strings = { type: 'array', items: str } as const;
const hex = { type: 'string', description: 'lower-case hex' } as const;
const imprint = { type: 'object', required: ['hashAlgorithm', 'hash'], properties: { hashAlgorithm: str, hash: hex } } as const;

const tokenSchema = {
  type: 'object',
  required: ['version', 'policy', 'serial', 'genTime', 'ordering', 'messageImprint', 'signer', 'certificates', 'signatureValid'],
  properties: {
    version: { type: 'integer' },
    policy: str,
    serial: hex,
    genTime: { type: 'integer', description: 'epoch ms' },
    accuracy: { type: 'object', properties: { seconds: { type: 'integer' }, millis: { type: 'integer' }, micros: { type: 'integer' } } },
    ordering: { type: 'boolean' },
    nonce: hex,
    messageImprint: imprint,
    tsa: str,
    extensions: strings,
    signer: {
      type: 'object',
      properties: { dn: str, issuer: str, serial: hex, keyId: hex, certificate: certificateViewSchema },
    },
    digestAlgorithm: str,
    signingAlgorithm: str,
    certificates: { type: 'array', items: certificateViewSchema },
    signatureValid: { type: ['boolean', 'null'], description: 'null when the signer certificate is not embedded' },
  },
} as const;

export const tspSchema = {
  type: 'object',
  required: ['kind'],
  description: 'kind query: version, messageImprint, policy, nonce, certReq. kind reply: status, statusText, failInfo, token. kind token: token.',
  properties: {
    kind: { type: 'string', enum: ['query', 'reply', 'token'] },
    version: { type: 'integer' },
    messageImprint: imprint,
    policy: str,
    nonce: hex,
    certReq: { type: 'boolean' },
    extensions: strings,
    status: { type: 'string', enum: ['granted', 'grantedWithMods', 'rejection', 'waiting', 'revocationWarning', 'revocationNotification'] },
    statusText: strings,
    failInfo: strings,
    token: tokenSchema,
  },
} as const;
