/** JSON schema of a decoded OpenSSH public key, certificate or private key (`kind` tells which fields apply). */
const str = { type: 'string' } as const;
const nullableMs = { type: ['integer', 'null'], description: 'epoch ms; null for no bound' } as const;
const option = { type: 'object', required: ['name', 'value'], properties: { name: str, value: str } } as const;

export const opensshSchema = {
  type: 'object',
  required: ['kind', 'type', 'keyType', 'bits', 'fingerprint', 'md5Fingerprint'],
  description: 'Every kind: type, keyType, bits, fingerprints. certificate: serial … signatureValid. privateKey: encrypted, cipher, kdf, rounds, comment (never key material).',
  properties: {
    kind: { type: 'string', enum: ['publicKey', 'certificate', 'privateKey'] },
    type: { type: 'string', description: 'ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa-cert-v01@openssh.com, …' },
    keyType: { type: 'string', description: 'rsa-2048, ec-secp256r1, ed-25519, …' },
    bits: { type: 'integer' },
    comment: { type: ['string', 'null'] },
    fingerprint: { type: 'string', description: 'SHA256:…, as ssh-keygen -l prints it' },
    md5Fingerprint: { type: 'string', description: 'MD5:…, as ssh-keygen -l -E md5 prints it' },
    serial: { type: 'string', description: 'decimal (uint64)' },
    keyId: str,
    certType: { type: 'string', enum: ['user', 'host'] },
    principals: { type: 'array', items: str },
    validAfter: nullableMs,
    validBefore: nullableMs,
    criticalOptions: { type: 'array', items: option },
    extensions: { type: 'array', items: option },
    signatureKey: { type: 'object', required: ['type', 'keyType', 'fingerprint'], properties: { type: str, keyType: str, fingerprint: str } },
    signatureAlgorithm: str,
    signatureValid: { type: ['boolean', 'null'] },
    encrypted: { type: 'boolean' },
    cipher: str,
    kdf: str,
    rounds: { type: 'integer' },
  },
} as const;
