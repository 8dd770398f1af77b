const nullableString = { type: ['string', 'null'] } as const;

/** A CA as the API answers it (the CA routes and the trust chain trees both use it). */
export const caSchema = {
  $id: 'CertificateAuthority',
  type: 'object',
  required: ['_id', 'name', 'certificate', 'trusted', 'trustedForServerAuthentication', 'trustedForClientAuthentication', 'dn', 'issuer', 'serial', 'notBefore', 'notAfter', 'selfSigned'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    certificate: { type: 'string', description: 'PEM' },
    trusted: { type: 'boolean', description: 'Trust anchor for chain validation and discovery' },
    trustedForServerAuthentication: { type: 'boolean', description: 'Same as trusted (Horizon name)' },
    trustedForClientAuthentication: { type: 'boolean', description: 'Issues certificates accepted for X509 login' },
    crlUrl: { ...nullableString, description: 'CRL distribution point override' },
    responderUrl: { ...nullableString, description: 'OCSP responder URL' },
    outdatedRevocationStatusPolicy: { type: 'string' },
    public: { type: 'boolean' },
    downloadable: { type: 'boolean' },
    refresh: { ...nullableString, description: 'Longest wait between two CRL fetches' },
    timeout: { ...nullableString, description: 'CRL download timeout' },
    dn: { type: 'string' },
    issuer: { type: 'string' },
    serial: { type: 'string' },
    subjectKeyIdentifier: nullableString,
    authorityKeyIdentifier: nullableString,
    notBefore: { type: 'integer', description: 'epoch ms' },
    notAfter: { type: 'integer', description: 'epoch ms' },
    selfSigned: { type: 'boolean' },
    thumbprint: { type: 'string', description: 'SHA-1 of the DER' },
    publicKeyThumbprint: { type: 'string' },
  },
} as const;

