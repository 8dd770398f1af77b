/** What the request workflows share: the plan a request keeps, its answer type, and helpers on templates and certificates. */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import type { CertificateObject, KeyValue } from '../../inventory/types.js';
import { pemBlocks } from '../../pki/input.js';
import { parseCsrPemOffThread, type CsrInfo } from '../../pki/csr/parse.js';
import { dnElementsOf } from '../../profiles/template.js';
import type { ResolvedTemplate, Workflow } from '../../profiles/types.js';
import type { RequestObject } from '../types.js';

/** What the workflow needs later, kept in the request's requestedX509Data (nothing secret). */
export interface Plan {
  subject?: string;
  sans?: { sanType: string; value: string }[];
  keyType?: string;
  mode?: 'centralized' | 'decentralized';
  validityDays?: number;
  keyUsage?: string[];
  extendedKeyUsage?: string[];
  csr?: string;
  owner?: string;
  team?: string;
  contactEmail?: string;
  /** PKI connector of the profile at submission. */
  pkiConnector?: string;
  escrow?: boolean;
  /** Hand the PKCS#12 password back (generated mode and showP12PasswordOnEnroll). */
  showPassword?: boolean;
  showP12?: boolean;
  /** Revoke: reason names. */
  reason?: { rfc: string; upper: string };
  /** Migrate: target profile. */
  targetProfile?: string;
  /** Update / migrate: the certificate changes. */
  changes?: { labels?: KeyValue[]; metadata?: KeyValue[]; owner?: string | null; team?: string | null; contactEmail?: string | null; autoRenew?: boolean };
  /** Import: the certificate PEM. */
  certificatePem?: string;
  challengeMode?: boolean;
}

/** A request answer: the stored object plus what the routes add (client-compat §2.5). */
export type RequestAnswer = RequestObject & {
  certificate?: CertificateObject;
  certificatePem?: string;
  pkcs12?: { value: string };
  password?: { value: string };
  permissions?: Record<string, boolean>;
  /** GET only, when the request has a holder id: its currently valid certificates, in the tenant and in the profile. */
  globalHolderIdCount?: number;
  profileHolderIdCount?: number;
};

export const WORKFLOW_CODE: Record<Workflow, 'WEBRA-ENROLL-002' | 'WEBRA-RENEW-002' | 'WEBRA-REVOKE-002' | 'WEBRA-UPDATE-002' | 'WEBRA-MIGRATE-002' | 'WEBRA-RECOVER-002' | 'WEBRA-IMPORT-002'> = {
  enroll: 'WEBRA-ENROLL-002',
  renew: 'WEBRA-RENEW-002',
  revoke: 'WEBRA-REVOKE-002',
  update: 'WEBRA-UPDATE-002',
  migrate: 'WEBRA-MIGRATE-002',
  recover: 'WEBRA-RECOVER-002',
  import: 'WEBRA-IMPORT-002',
};

/** Protocols whose devices enroll with a one-time challenge an administrator submits for (spec: "EST, SCEP or WebRA challenge request"; MDM is Intune/Jamf SCEP). */
export const CHALLENGE_PROTOCOLS: readonly string[] = ['est', 'scep', 'mdm'];

export const CERTIFICATE_WORKFLOWS: readonly Workflow[] = ['renew', 'revoke', 'update', 'migrate', 'recover'];

export const invalid = (workflow: Workflow | undefined, message: string): ProblemError => new ProblemError(workflow ? WORKFLOW_CODE[workflow] : 'REQ-002', { message });

export const derOf = (pem: string): Uint8Array => {
  const block = pemBlocks(pem)[0];
  if (!block) throw new Error('not a PEM');
  return block.der;
};

/**
 * Label or metadata changes of an update template (elements named by `label` / `metadata`, or `key`): `value:
 * null` (or empty) deletes, an element left out is kept. undefined when the template has no such list.
 */
export function keyValuesAfter(current: KeyValue[], elements: unknown, nameKey: 'label' | 'metadata'): KeyValue[] | undefined {
  if (!Array.isArray(elements)) return undefined;
  const out = new Map(current.map((p) => [p.key, p.value]));
  for (const e of elements as Record<string, unknown>[]) {
    const named = e?.[nameKey] ?? e?.key;
    if (typeof named !== 'string' || !named) continue;
    if (e.value === null || e.value === undefined || e.value === '') out.delete(named);
    else out.set(named, String(e.value));
  }
  return [...out].map(([key, value]) => ({ key, value }));
}

/** `{value}` element of the template: undefined = absent (keep), null = delete. */
export function single(template: Record<string, unknown>, name: string): string | null | undefined {
  if (!(name in template)) return undefined;
  const v = template[name];
  if (v === null) return null;
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'object' && v !== null && 'value' in v) {
    const inner = (v as { value: unknown }).value;
    return inner === null || inner === undefined || inner === '' ? null : String(inner);
  }
  return undefined;
}

/** The key of an issuance a caller waits for (RequestWorkflows.written). */
export const waitKey = (tenant: string, requestId: string): string => `${tenant}\u0000${requestId}`;

/** The submitted CSR, decoded and checked (its signature on the worker thread); WEBRA-ENROLL-006 otherwise. */
export async function parseCsr(pem: string, workflow: Workflow): Promise<CsrInfo> {
  let csr: CsrInfo;
  try {
    csr = await parseCsrPemOffThread(pem);
  } catch (err) {
    throw new ProblemError('WEBRA-ENROLL-006', { detail: (err as Error).message });
  }
  if (!csr.signatureValid) throw new ProblemError('WEBRA-ENROLL-006', { message: 'The CSR is not signed by its own key', detail: workflow });
  return csr;
}

export function planOf(resolved: ResolvedTemplate): Plan {
  return {
    subject: resolved.subject,
    sans: resolved.sans,
    keyType: resolved.keyType,
    mode: resolved.mode,
    validityDays: resolved.validityDays,
    keyUsage: resolved.keyUsage,
    extendedKeyUsage: resolved.extendedKeyUsage,
    ...(resolved.owner ? { owner: resolved.owner } : {}),
    ...(resolved.team ? { team: resolved.team } : {}),
    ...(resolved.contactEmail ? { contactEmail: resolved.contactEmail } : {}),
  };
}

/** The holder id of a subject: its first CN, else the whole DN. */
export function holderOf(subject: string | undefined): string | undefined {
  if (!subject) return undefined;
  const cn = /(?:^|,)\s*CN=((?:\\.|[^,])*)/i.exec(subject);
  return (cn?.[1] ?? subject).slice(0, 191);
}

/** The subject of a certificate as template elements (`cn.1`, `ou.2`, … numbered in DER order, as profiles name them). */
export function subjectElementsOf(certificate: CertificateObject): { element: string; value: string }[] {
  return dnElementsOf(certificate.dn).map(({ element, value }) => ({ element, value }));
}

export function sansElementsOf(certificate: CertificateObject): { type: string; value: string[] }[] {
  const byType = new Map<string, string[]>();
  for (const s of certificate.subjectAlternateNames ?? []) byType.set(s.sanType, [...(byType.get(s.sanType) ?? []), s.value]);
  return [...byType].map(([type, value]) => ({ type, value }));
}

export function createPublicKeyDer(key: KeyObject): Buffer {
  return Buffer.from(createPublicKey(key).export({ type: 'spki', format: 'der' }));
}

export function publicSpkiOfCertificate(pem: string): Buffer {
  return Buffer.from(createPublicKey(pem).export({ type: 'spki', format: 'der' }));
}
