import type { DnElement } from '../names.js';

/** A subject alternative name, one entry per value (client-compat §3). */
export interface SubjectAlternateName {
  sanType: 'DNSNAME' | 'IPADDRESS' | 'RFC822NAME' | 'URI' | 'OTHERNAME_UPN' | 'OTHERNAME_GUID' | 'OTHERNAME' | 'REGISTERED_ID' | 'DIRECTORYNAME';
  value: string;
}

/** Decoded extensions, named as a CLM user reads them. Absent extensions are absent keys. */
export interface DecodedExtensions {
  keyUsage?: { critical: boolean; usages: string[] };
  extendedKeyUsage?: { critical: boolean; usages: string[] };
  basicConstraints?: { critical: boolean; ca: boolean; pathLength?: number };
  subjectKeyIdentifier?: string;
  authorityKeyIdentifier?: { keyIdentifier?: string; issuer?: string[]; serial?: string };
  crlDistributionPoints?: string[];
  authorityInfoAccess?: { ocsp: string[]; caIssuers: string[] };
  certificatePolicies?: { oid: string; cps?: string[] }[];
  nameConstraints?: { critical: boolean; permitted: SubjectAlternateName[]; excluded: SubjectAlternateName[] };
  /** Number of embedded Certificate Transparency SCTs. */
  sctCount?: number;
  /**
   * Every extension as {oid, critical}, decoded or not; `malformed` when its value could not be read;
   * `hex` (the extnValue octets) for an extension this reader does not interpret.
   */
  all: { oid: string; critical: boolean; malformed?: boolean; hex?: string }[];
}

/**
 * What the decoders answer for a certificate, and what the inventory stores: field names as the
 * compat note names them (dn, issuer, serial hex, notBefore/notAfter epoch ms, keyType,
 * signingAlgorithm, subjectAlternateNames, thumbprints, publicKeyThumbprint, selfSigned).
 */
export interface CertificateInfo {
  pem: string;
  version: number;
  dn: string;
  dnElements: DnElement[];
  issuer: string;
  issuerElements: DnElement[];
  /** Lower-case hex of the serial number's value. */
  serial: string;
  notBefore: number;
  notAfter: number;
  /** rsa-2048, ec-secp256r1, ed-25519, … */
  keyType: string;
  signingAlgorithm: string;
  subjectAlternateNames: SubjectAlternateName[];
  extensions: DecodedExtensions;
  /** SHA-1 of the DER, lower-case hex (the inventory's `thumbprint`). */
  thumbprint: string;
  thumbprints: { sha1: string; sha256: string };
  /** SHA-256 of the SubjectPublicKeyInfo DER, lower-case hex. */
  publicKeyThumbprint: string;
  /** Subject equals issuer and the signature verifies with the certificate's own key. */
  selfSigned: boolean;
}
