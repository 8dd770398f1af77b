import { dnElementSchema, extensionsSchema, sanSchema } from '../x509/schema.js';

/** JSON schema of a decoded CSR (client-compat §7 `{dn, sans, dnElements, keyType, pem}` and more). */
export const csrInfoSchema = {
  type: 'object',
  required: ['pem', 'dn', 'dnElements', 'sans', 'keyType'],
  properties: {
    pem: { type: 'string' },
    dn: { type: 'string' },
    dnElements: { type: 'array', items: dnElementSchema },
    sans: { type: 'array', items: sanSchema },
    keyType: { type: 'string' },
    publicKeyThumbprint: { type: 'string', description: 'SHA-256 of the SubjectPublicKeyInfo DER, lower-case hex' },
    signingAlgorithm: { type: 'string' },
    signatureValid: { type: 'boolean', description: 'the request is signed by the key it carries' },
    attributes: {
      type: 'object',
      properties: {
        challengePassword: { type: 'string' },
        unstructuredName: { type: 'string' },
        extensionRequest: extensionsSchema,
        other: { type: 'array', items: { type: 'object', properties: { oid: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } } } },
      },
    },
  },
} as const;
