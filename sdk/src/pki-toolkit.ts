/**
 * The platform's PKI toolkit as plugins see it (ctx.pki): key generation, self-signed and CA-signed
 * certificates, CRLs and OCSP responses, built on core's lean DER writer with cached keys (the issuance fast
 * path), so a connector never builds a pkijs object graph per certificate. Failures throw PermanentError.
 */
import type { RevocationStatus, RevokedEntry } from './contracts/pki-connector.js';

/** Key types by their request-template names (client-compat §2.3). */
export type KeyTypeName = 'rsa-2048' | 'rsa-3072' | 'rsa-4096' | 'ec-secp256r1' | 'ec-secp384r1' | 'ec-secp521r1' | 'ed-25519';

/** What a certificate says beyond its key; every field has a default. */
export interface IssueTemplate {
  /** RFC 4514. Absent: the CSR's subject, byte for byte. */
  subject?: string;
  /** One entry per value (sanType DNSNAME, IPADDRESS, RFC822NAME, URI, …). Absent: the CSR's SANs; [] issues none. */
  sans?: { sanType: string; value: string }[];
  /** Epoch ms. Default: now. */
  notBefore?: number;
  /** Epoch ms. Default: notBefore + validityDays. */
  notAfter?: number;
  /** Default 365. */
  validityDays?: number;
  keyUsage?: string[];
  extendedKeyUsage?: string[];
  /** Default { ca: false }. */
  basicConstraints?: { ca: boolean; pathLength?: number };
  crlDistributionPoints?: string[];
  ocsp?: string[];
  caIssuers?: string[];
  policies?: string[];
}

export interface IssuedCertificate {
  certificatePem: string;
  /** Lower-case hex. */
  serial: string;
}

/** A CA ready to sign: its key is a cached KeyObject, its name and key identifier prepared once. */
export interface CaSigner {
  readonly certificatePem: string;
  /** Issues for the key of a CSR (PEM or DER), checking the CSR's own signature. */
  issue(csr: string | Uint8Array, template?: IssueTemplate): IssuedCertificate;
  /** Issues for a bare public key (SPKI PEM): subordinate CAs, centralized keys. */
  issueForPublicKey(publicKeyPem: string, template: IssueTemplate & { subject: string }): IssuedCertificate;
  /** A CRL (v2, DER) signed by this CA: CRL number and authority key identifier included. */
  crl(input: { entries: readonly RevokedEntry[]; thisUpdate: number; nextUpdate: number; crlNumber: number }): Uint8Array;
  /**
   * The signed OCSP response (DER) to an OCSP request (DER): `lookup` answers each serial's status. A request
   * that does not parse answers malformedRequest; a CertID naming another issuer answers unknown.
   */
  ocsp(requestDer: Uint8Array, lookup: (serial: string) => Promise<RevocationStatus>, options?: { now?: number; validitySeconds?: number }): Promise<Uint8Array>;
}

export interface PkiToolkitFacade {
  generateKey(type: KeyTypeName): { privateKeyPem: string; publicKeyPem: string };
  /** A self-signed certificate (a root CA when basicConstraints says so). */
  selfSigned(privateKeyPem: string, template: IssueTemplate & { subject: string }): IssuedCertificate;
  /** A signer for a CA certificate and its private key (PKCS#8 PEM). Build it once and keep it. */
  signer(caCertificatePem: string, caPrivateKeyPem: string): CaSigner;
}
