import type { KeyUsage } from '../x509/extensions.js';
import type { SubjectAlternateName } from '../x509/model.js';
import type { NameAttribute } from './names.js';

/** What a certificate should say beyond its key; every field has a default. */
export interface CertificateTemplate {
  /** RFC 4514 string or attributes (first RDN first). Default: the CSR's subject, byte for byte. */
  subject?: string | NameAttribute[];
  /** Default: the SANs the CSR requests, byte for byte. An empty list issues none. */
  sans?: SubjectAlternateName[];
  /** Epoch ms (whole seconds are written). Default: now. */
  notBefore?: number;
  /** Epoch ms. Default: notBefore + validityDays. */
  notAfter?: number;
  /** Default 365. */
  validityDays?: number;
  /** Default: keyCertSign, cRLSign, digitalSignature for a CA; digitalSignature (+ keyEncipherment for RSA) otherwise. */
  keyUsage?: KeyUsage[];
  /** OpenSSL short names (serverAuth, clientAuth…) or OIDs. Absent: no EKU extension. */
  extendedKeyUsage?: string[];
  /** Default { ca: false }. Always written, critical. */
  basicConstraints?: { ca: boolean; pathLength?: number };
  /** CRL URLs (one distribution point each). */
  crlDistributionPoints?: string[];
  /** AIA OCSP responder URLs. */
  ocsp?: string[];
  /** AIA URLs of the issuer's certificate. */
  caIssuers?: string[];
  /** Certificate policy OIDs. */
  policies?: string[];
  /** Serial magnitude (big-endian). Default: 16 random bytes, positive. */
  serial?: Uint8Array;
  /** Refuse a CSR whose signature does not verify with its own key (PKI-007). Default true. */
  verifyCsrSignature?: boolean;
}
