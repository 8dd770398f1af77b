import { certificateViewSchema } from '../views/x509.js';

/** JSON schema of a DecodedPkcs12 (route responses, OpenAPI); inline like x509/schema.ts. */
const str = { type: 'string' } as const;

export const decodedPkcs12Schema = {
  type: 'object',
  required: ['certificates', 'keys', 'friendlyNames', 'macAlgorithm', 'macIterations', 'encryption', 'encryptionAlgorithms'],
  properties: {
    certificates: { type: 'array', items: certificateViewSchema },
    keys: {
      type: 'array',
      description: 'Private keys, described only: key material is never returned',
      items: {
        type: 'object',
        required: ['keyType'],
        properties: {
          keyType: str,
          publicKeyThumbprint: { type: 'string', description: 'SHA-256 of the public key SPKI, as certificates.publicKeyThumbprint' },
          matchesCertificate: { type: 'string', description: 'SHA-1 thumbprint of the certificate holding this key' },
          friendlyName: str,
        },
      },
    },
    friendlyNames: { type: 'array', items: str },
    macAlgorithm: { type: ['string', 'null'], description: 'sha1, sha256…; null without MAC' },
    macIterations: { type: ['integer', 'null'] },
    encryption: { type: 'string', enum: ['legacy', 'modern'], description: 'legacy: PKCS#12 PBE (RC2, 3DES); modern: PBES2 or none' },
    encryptionAlgorithms: { type: 'array', items: str, description: 'as openssl pkcs12 -info names them' },
  },
} as const;
