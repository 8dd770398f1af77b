/** A PKI back-end that issues and revokes certificates (DESIGN.md §1). A connector never sleeps: it answers pending. */

/** Where Certwright publishes what a connector signs (CRL, OCSP, the CA certificate), for its AIA / CDP extensions. */
export interface PublicationUrls {
  /** GET: the connector's current CRL (DER). */
  crlUrl: string;
  /** OCSP responder (RFC 6960: POST, or GET with the base64 request appended). */
  ocspUrl: string;
  /** GET: the issuing CA certificate (DER), for AIA caIssuers. */
  caIssuersUrl: string;
}

export interface IssueRequest {
  /** Request id (24 hex), stable across retries so the back-end can deduplicate. */
  requestId: string;
  csrPem: string;
  profile: string;
  /** RFC 4514 subject the profile computed; absent: the CSR's. */
  subject?: string;
  /** SANs the profile computed (one entry per value, client-compat §3 types); absent: the CSR's. */
  sans?: { type: string; value: string }[];
  validityDays?: number;
  /** Key usages (RFC 5280 names: digitalSignature, keyEncipherment, …); absent: the connector's default. */
  keyUsage?: string[];
  /** Extended key usages (OpenSSL short names serverAuth, clientAuth, … or OIDs); absent: none. */
  extendedKeyUsage?: string[];
  /** Where Certwright serves this connector's CRL and OCSP (connectors that sign them write these URLs in certificates). */
  publication?: PublicationUrls;
  extensions?: Record<string, unknown>;
}

export type IssueOutcome =
  | { status: 'issued'; certificatePem: string; chainPem: string[] }
  | { status: 'pending'; pollToken: string; retryAfterSeconds: number }
  | { status: 'rejected'; reason: string };

export interface RevokeRequest {
  certificatePem: string;
  serial: string;
  reason: string;
}

/** What Certwright knows of a serial a connector issued (from the inventory): what OCSP and CRLs say. */
export interface RevocationStatus {
  status: 'good' | 'revoked' | 'unknown';
  /** Epoch ms, when revoked. */
  revokedAt?: number;
  /** RFC 5280 reason name (keyCompromise, …), when revoked. */
  reason?: string;
}

export interface RevokedEntry {
  /** Serial, lower-case hex. */
  serial: string;
  revokedAt: number;
  reason?: string;
}

/** The inventory's view of the certificates a connector issued: the source of its CRL and OCSP answers. */
export interface RevocationSource {
  /** One serial (lower-case hex, no leading zeros needed). */
  status(serial: string): Promise<RevocationStatus>;
  /** Every revoked certificate of this connector that has not expired. */
  revoked(): Promise<RevokedEntry[]>;
}

export interface PkiConnector {
  getCaChain(): Promise<string[]>;
  issue(request: IssueRequest): Promise<IssueOutcome>;
  poll(pollToken: string): Promise<IssueOutcome>;
  revoke(request: RevokeRequest): Promise<void>;
  testConnection(): Promise<{ ok: boolean; detail?: string }>;
  /** Optional: a connector that signs CRLs (the local CA) answers its current CRL (DER); Certwright serves it. */
  crl?(source: RevocationSource): Promise<Uint8Array>;
  /** Optional: a connector that answers OCSP signs the response (DER) to an OCSP request (DER). */
  ocsp?(requestDer: Uint8Array, source: RevocationSource): Promise<Uint8Array>;
}
