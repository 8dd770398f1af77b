/**
 * Object identifiers the toolkit names. Attribute names are OpenSSL's short names (what
 * `openssl x509 -nameopt RFC2253` prints), so decoded DNs compare equal to openssl's output.
 */
export const DN_ATTRIBUTES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.4': 'SN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'street',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.12': 'title',
  '2.5.4.13': 'description',
  '2.5.4.15': 'businessCategory',
  '2.5.4.17': 'postalCode',
  '2.5.4.42': 'GN',
  '2.5.4.43': 'initials',
  '2.5.4.44': 'generationQualifier',
  '2.5.4.46': 'dnQualifier',
  '2.5.4.65': 'pseudonym',
  '2.5.4.97': 'organizationIdentifier',
  '0.9.2342.19200300.100.1.1': 'UID',
  '0.9.2342.19200300.100.1.25': 'DC',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '1.3.6.1.4.1.311.60.2.1.1': 'jurisdictionL',
  '1.3.6.1.4.1.311.60.2.1.2': 'jurisdictionST',
  '1.3.6.1.4.1.311.60.2.1.3': 'jurisdictionC',
};

/**
 * The element names of client-compat §2.3 (`cn.1`, `ou.2`, `e`, `t`, …): lower-case, the index added by
 * the caller. Attributes without a short element name use their OpenSSL name.
 */
export const DN_ELEMENTS: Record<string, string> = {
  '2.5.4.3': 'cn',
  '2.5.4.4': 'surname',
  '2.5.4.5': 'serialnumber',
  '2.5.4.6': 'c',
  '2.5.4.7': 'l',
  '2.5.4.8': 'st',
  '2.5.4.9': 'street',
  '2.5.4.10': 'o',
  '2.5.4.11': 'ou',
  '2.5.4.12': 't',
  '2.5.4.42': 'givenname',
  '0.9.2342.19200300.100.1.1': 'uid',
  '0.9.2342.19200300.100.1.25': 'dc',
  '1.2.840.113549.1.9.1': 'e',
};

/** Signature algorithms, named as CLM users read them (and as openssl's "Signature Algorithm"). */
export const SIGNATURE_ALGORITHMS: Record<string, string> = {
  '1.2.840.113549.1.1.4': 'md5WithRSAEncryption',
  '1.2.840.113549.1.1.5': 'sha1WithRSAEncryption',
  '1.2.840.113549.1.1.11': 'sha256WithRSAEncryption',
  '1.2.840.113549.1.1.12': 'sha384WithRSAEncryption',
  '1.2.840.113549.1.1.13': 'sha512WithRSAEncryption',
  '1.2.840.113549.1.1.14': 'sha224WithRSAEncryption',
  '1.2.840.113549.1.1.10': 'rsassaPss',
  '1.2.840.10045.4.1': 'ecdsa-with-SHA1',
  '1.2.840.10045.4.3.1': 'ecdsa-with-SHA224',
  '1.2.840.10045.4.3.2': 'ecdsa-with-SHA256',
  '1.2.840.10045.4.3.3': 'ecdsa-with-SHA384',
  '1.2.840.10045.4.3.4': 'ecdsa-with-SHA512',
  '1.3.101.112': 'ED25519',
  '1.3.101.113': 'ED448',
  '2.16.840.1.101.3.4.3.17': 'ML-DSA-44',
  '2.16.840.1.101.3.4.3.18': 'ML-DSA-65',
  '2.16.840.1.101.3.4.3.19': 'ML-DSA-87',
};

/** Public key algorithms (SubjectPublicKeyInfo). */
export const KEY_ALGORITHMS = {
  rsa: '1.2.840.113549.1.1.1',
  rsaPss: '1.2.840.113549.1.1.10',
  ec: '1.2.840.10045.2.1',
  ed25519: '1.3.101.112',
  ed448: '1.3.101.113',
  x25519: '1.3.101.110',
  x448: '1.3.101.111',
  dsa: '1.2.840.10040.4.1',
} as const;

/** Named curves → the suffix of keyType (`ec-secp256r1`, …; client-compat §2.3). */
export const CURVES: Record<string, string> = {
  '1.2.840.10045.3.1.7': 'secp256r1',
  '1.3.132.0.34': 'secp384r1',
  '1.3.132.0.35': 'secp521r1',
  '1.3.132.0.10': 'secp256k1',
  '1.3.36.3.3.2.8.1.1.7': 'brainpoolp256r1',
  '1.3.36.3.3.2.8.1.1.11': 'brainpoolp384r1',
  '1.3.36.3.3.2.8.1.1.13': 'brainpoolp512r1',
};

export const EXTENSIONS = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  crlNumber: '2.5.29.20',
  crlReason: '2.5.29.21',
  invalidityDate: '2.5.29.24',
  deltaCrlIndicator: '2.5.29.27',
  issuingDistributionPoint: '2.5.29.28',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  certificatePolicies: '2.5.29.32',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  freshestCrl: '2.5.29.46',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  ctPrecertificateScts: '1.3.6.1.4.1.11129.2.4.2',
  ctPoison: '1.3.6.1.4.1.11129.2.4.3',
} as const;

/** Extended key usages by OpenSSL's short names. */
export const EXTENDED_KEY_USAGES: Record<string, string> = {
  '1.3.6.1.5.5.7.3.1': 'serverAuth',
  '1.3.6.1.5.5.7.3.2': 'clientAuth',
  '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection',
  '1.3.6.1.5.5.7.3.8': 'timeStamping',
  '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
  '1.3.6.1.4.1.311.20.2.2': 'msSmartcardLogin',
  '1.3.6.1.5.2.3.5': 'pkInitKDC',
  '1.3.6.1.5.5.7.3.17': 'ipsecIKE',
  '2.5.29.37.0': 'anyExtendedKeyUsage',
};

/** Access methods of AIA. */
export const ACCESS_METHODS: Record<string, string> = {
  '1.3.6.1.5.5.7.48.1': 'OCSP',
  '1.3.6.1.5.5.7.48.2': 'caIssuers',
};

/** Other-name types of SANs (client-compat §2.3 OTHERNAME_UPN / OTHERNAME_GUID). */
export const OTHER_NAMES = {
  upn: '1.3.6.1.4.1.311.20.2.3',
  guid: '1.3.6.1.4.1.311.25.1',
} as const;

/** Digest algorithms by OID, named as OpenSSL prints them and as node:crypto accepts them. */
export const DIGEST_ALGORITHMS: Record<string, string> = {
  '1.2.840.113549.2.5': 'md5',
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
  '2.16.840.1.101.3.4.2.5': 'sha512-224',
  '2.16.840.1.101.3.4.2.6': 'sha512-256',
  '2.16.840.1.101.3.4.2.7': 'sha3-224',
  '2.16.840.1.101.3.4.2.8': 'sha3-256',
  '2.16.840.1.101.3.4.2.9': 'sha3-384',
  '2.16.840.1.101.3.4.2.10': 'sha3-512',
};
