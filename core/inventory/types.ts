import type { SubjectAlternateName } from '../pki/x509/model.js';

/** `{key, value}` as labels and metadata travel (client-compat §3). */
export interface KeyValue {
  key: string;
  value: string;
}

export interface ThirdPartyData {
  connector: string;
  id: string;
  fingerprint?: string;
  pushDate?: number;
  removeDate?: number;
}

export interface TriggerResult {
  name: string;
  event: string;
  triggerType: string;
  lastExecutionDate: number;
  status: 'success' | 'failure' | 'warning';
  detail?: string;
  retryable: boolean;
}

export interface DiscoveryData {
  ip: string;
  hostnames: string[];
  operatingSystems: string[];
  paths: string[];
  usages: string[];
  sources: string[];
  tlsPorts: { port: number; version?: string }[];
}

export interface DiscoveryInfo {
  campaign: string;
  lastDiscoveryDate: number;
  identifier?: string;
}

/**
 * The certificate object of client-compat §3, exactly as the API answers it: epoch-ms dates, arrays
 * (never null) for subjectAlternateNames, labels and metadata. Keys with no value are left out.
 */
export interface CertificateObject {
  _id: string;
  module?: string;
  profile?: string;
  owner?: string;
  team?: string;
  contactEmail?: string;
  certificate: string;
  thumbprint: string;
  publicKeyThumbprint: string;
  selfSigned: boolean;
  dn: string;
  serial: string;
  issuer: string;
  notBefore: number;
  notAfter: number;
  revoked: boolean;
  revocationDate?: number;
  revocationReason?: string;
  keyType: string;
  signingAlgorithm: string;
  subjectAlternateNames: SubjectAlternateName[];
  labels: KeyValue[];
  metadata: KeyValue[];
  holderId?: string;
  escrowed: boolean;
  autoRenew?: boolean;
  crlSynchronized?: boolean;
  /** Horizon's [{key, value}] text list (pki/views/extension-list.ts). */
  extensions?: unknown;
  /** Every extension as the PKI toolkit decoded it. */
  decodedExtensions?: unknown;
  grades?: unknown[];
  /** The worst grade over the grading policies (HCQL `grade`). */
  grade?: string;
  thirdPartyData?: ThirdPartyData[];
  triggerResults?: TriggerResult[];
  discoveryData?: DiscoveryData[];
  discoveryInfo?: DiscoveryInfo[];
  discoveredTrusted?: boolean | null;
  requestedX509Data?: unknown;
  /** Derived: revoked, else expired when notAfter is past, else valid. */
  status?: 'valid' | 'expired' | 'revoked';
}

/** What a caller may set when a certificate enters the inventory (import, discovery, enrollment). */
export interface CertificateInput {
  /** PEM (or DER base64) of the certificate. */
  certificate: string;
  module?: string | null;
  profile?: string | null;
  owner?: string | null;
  team?: string | null;
  contactEmail?: string | null;
  labels?: KeyValue[] | null;
  metadata?: KeyValue[] | null;
  holderId?: string | null;
  escrowed?: boolean;
  autoRenew?: boolean;
  crlSynchronized?: boolean;
  revoked?: boolean;
  revocationDate?: number | null;
  revocationReason?: string | null;
  grades?: unknown[] | null;
  grade?: string | null;
  thirdPartyData?: ThirdPartyData[] | null;
  triggerResults?: TriggerResult[] | null;
  discoveryData?: DiscoveryData[] | null;
  discoveryInfo?: DiscoveryInfo[] | null;
  discoveredTrusted?: boolean | null;
  requestedX509Data?: unknown;
  archived?: boolean;
}

/**
 * What enrollment, revocation, triggers and discovery change on a certificate already in the inventory
 * (CertificateRepository.update). An absent key is left as it is; null clears it (lists: empties them).
 */
export type CertificatePatch = Omit<CertificateInput, 'certificate'>;
