/**
 * Object identifiers and algorithm tables of the SCEP codec (RFC 8894 §3.2.1 attributes, RFC 5652 CMS,
 * RFC 3370/5754 digests and signatures, RFC 3565/5084 AES). Names are node:crypto names so they can be
 * handed straight to createHash / createCipheriv.
 */

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  envelopedData: '1.2.840.113549.1.7.3',
  authEnvelopedData: '1.2.840.113549.1.9.16.1.23',
  rsaEncryption: '1.2.840.113549.1.1.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  challengePassword: '1.2.840.113549.1.9.7',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  // SCEP (id-VeriSign pki attributes, RFC 8894 §3.2.1)
  messageType: '2.16.840.1.113733.1.9.2',
  pkiStatus: '2.16.840.1.113733.1.9.3',
  failInfo: '2.16.840.1.113733.1.9.4',
  senderNonce: '2.16.840.1.113733.1.9.5',
  recipientNonce: '2.16.840.1.113733.1.9.6',
  transactionID: '2.16.840.1.113733.1.9.7',
  /** id-scep-failInfoText (RFC 8894 §3.2.1.4.5), a UTF8String. */
  failInfoText: '1.3.6.1.5.5.7.24.1',
} as const;

export type DigestName = 'sha1' | 'sha256' | 'sha512' | 'sha384' | 'sha224' | 'md5';

export const DIGEST_OIDS: Readonly<Record<DigestName, string>> = {
  md5: '1.2.840.113549.2.5',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  sha224: '2.16.840.1.101.3.4.2.4',
};

/** RSA PKCS#1 v1.5 signature algorithms, by digest. */
export const RSA_SIGNATURE_OIDS: Readonly<Record<DigestName, string>> = {
  md5: '1.2.840.113549.1.1.4',
  sha1: '1.2.840.113549.1.1.5',
  sha256: '1.2.840.113549.1.1.11',
  sha384: '1.2.840.113549.1.1.12',
  sha512: '1.2.840.113549.1.1.13',
  sha224: '1.2.840.113549.1.1.14',
};

/** ECDSA signature algorithms, by digest (an RA or CA with an EC signing key; not for key transport). */
export const ECDSA_SIGNATURE_OIDS: Readonly<Record<DigestName, string | undefined>> = {
  md5: undefined,
  sha1: '1.2.840.10045.4.1',
  sha224: '1.2.840.10045.4.3.1',
  sha256: '1.2.840.10045.4.3.2',
  sha384: '1.2.840.10045.4.3.3',
  sha512: '1.2.840.10045.4.3.4',
};

const invert = <K extends string>(table: Readonly<Record<K, string>>): ReadonlyMap<string, K> =>
  new Map(Object.entries(table).map(([k, v]) => [v as string, k as K]));

const DIGEST_BY_OID = invert(DIGEST_OIDS);
const RSA_SIGNATURE_BY_OID = invert(RSA_SIGNATURE_OIDS);

/** A digestAlgorithm OID; some clients wrongly put the signature OID there, which names the same digest. */
export function digestByOid(oid: string): DigestName | undefined {
  return DIGEST_BY_OID.get(oid) ?? RSA_SIGNATURE_BY_OID.get(oid);
}

const ECDSA_SIGNATURE_BY_OID = new Map(
  Object.entries(ECDSA_SIGNATURE_OIDS)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => [v, k as DigestName]),
);

/**
 * What a SignerInfo signatureAlgorithm means: sha*WithRSAEncryption and ecdsa-with-* name their digest,
 * plain rsaEncryption (older clients) uses the SignerInfo digestAlgorithm. undefined: unsupported.
 */
export function signatureScheme(oid: string, digestAlgorithm: DigestName): { keyType: 'rsa' | 'ec'; digest: DigestName } | undefined {
  if (oid === OID.rsaEncryption) return { keyType: 'rsa', digest: digestAlgorithm };
  const rsa = RSA_SIGNATURE_BY_OID.get(oid);
  if (rsa) return { keyType: 'rsa', digest: rsa };
  const ec = ECDSA_SIGNATURE_BY_OID.get(oid);
  return ec ? { keyType: 'ec', digest: ec } : undefined;
}

export type ContentCipher =
  | 'des-cbc'
  | 'des-ede3-cbc'
  | 'aes-128-cbc'
  | 'aes-192-cbc'
  | 'aes-256-cbc'
  | 'aes-128-gcm'
  | 'aes-192-gcm'
  | 'aes-256-gcm';

export interface CipherSpec {
  readonly oid: string;
  readonly keyLength: number;
  /** CBC IV length / block size; GCM: the default nonce length. */
  readonly ivLength: number;
  readonly mode: 'cbc' | 'gcm';
}

export const CIPHERS: Readonly<Record<ContentCipher, CipherSpec>> = {
  'des-cbc': { oid: '1.3.14.3.2.7', keyLength: 8, ivLength: 8, mode: 'cbc' },
  'des-ede3-cbc': { oid: '1.2.840.113549.3.7', keyLength: 24, ivLength: 8, mode: 'cbc' },
  'aes-128-cbc': { oid: '2.16.840.1.101.3.4.1.2', keyLength: 16, ivLength: 16, mode: 'cbc' },
  'aes-192-cbc': { oid: '2.16.840.1.101.3.4.1.22', keyLength: 24, ivLength: 16, mode: 'cbc' },
  'aes-256-cbc': { oid: '2.16.840.1.101.3.4.1.42', keyLength: 32, ivLength: 16, mode: 'cbc' },
  'aes-128-gcm': { oid: '2.16.840.1.101.3.4.1.6', keyLength: 16, ivLength: 12, mode: 'gcm' },
  'aes-192-gcm': { oid: '2.16.840.1.101.3.4.1.26', keyLength: 24, ivLength: 12, mode: 'gcm' },
  'aes-256-gcm': { oid: '2.16.840.1.101.3.4.1.46', keyLength: 32, ivLength: 12, mode: 'gcm' },
};

const CIPHER_BY_OID = invert(Object.fromEntries(Object.entries(CIPHERS).map(([k, v]) => [k, v.oid])) as Record<ContentCipher, string>);

export function cipherByOid(oid: string): ContentCipher | undefined {
  return CIPHER_BY_OID.get(oid);
}
