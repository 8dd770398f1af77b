import { createHash } from 'node:crypto';
import { ariSuggestedWindow } from '@certwright/sdk';

/** What prompts the lifecycle task to renew a covered certificate. */
export const RENEWAL_CAUSES = ['expiry', 'revocation', 'noncompliance'] as const;
export type RenewalCause = (typeof RENEWAL_CAUSES)[number];

/** An automation policy as stored (config-type.ts normalize fills every default in). */
export interface AutomationPolicy {
  name: string;
  description?: string | null;
  profile: string;
  query?: string | null;
  executionPolicy?: string | null;
  compliancePolicy?: { authorizedSigningAlgorithms?: string[] | null; authorizedCas?: string[] | null } | null;
  trustChains?: string[] | null;
  renewal: { mode: 'daysBeforeExpiry' | 'lifetimeShare' | 'ari'; daysBeforeExpiry?: number; lifetimeShare?: number };
  renewOn: RenewalCause[];
  revokeSupersededAfterDays: number | null;
  expireRequestsAfterDays: number | null;
  requireApproval: boolean;
  retries: { max: number; backoffMinutes: number };
}

/** The facts of a certificate the policy's rules read. */
export interface CertificateFacts {
  _id: string;
  notBefore: number;
  notAfter: number;
  revoked: boolean;
  signingAlgorithm: string;
  issuer: string;
}

export const DAY_MS = 86_400_000;

/**
 * When the policy's window opens for a certificate (epoch ms). In the ARI mode, a point inside the RFC 9773
 * window chosen from the certificate's id (RFC 9773 §4.2 asks clients to pick a random time in the window, so
 * a fleet issued at once does not renew at once; derived from the id, every node computes the same time).
 */
export function renewalDueAt(policy: Pick<AutomationPolicy, 'renewal'>, cert: Pick<CertificateFacts, '_id' | 'notBefore' | 'notAfter'>): number {
  const lifetime = cert.notAfter - cert.notBefore;
  switch (policy.renewal.mode) {
    case 'lifetimeShare':
      return cert.notAfter - Math.floor(lifetime * (policy.renewal.lifetimeShare ?? 1 / 3));
    case 'ari': {
      const { start, end } = ariSuggestedWindow(cert.notBefore, cert.notAfter);
      const spread = createHash('sha256').update(cert._id).digest().readUInt32BE(0) / 0x1_0000_0000;
      return start + Math.floor((end - start) * spread);
    }
    default:
      return cert.notAfter - (policy.renewal.daysBeforeExpiry ?? 30) * DAY_MS;
  }
}

/**
 * The earliest the window can open for any certificate (a bound the database filters on before renewalDueAt
 * decides): `notAfter - share × lifetime <= now` with the share of the lifetime that remains at the earliest.
 */
export function earliestRemainingShare(policy: Pick<AutomationPolicy, 'renewal'>): number | null {
  if (policy.renewal.mode === 'lifetimeShare') return policy.renewal.lifetimeShare ?? 1 / 3;
  if (policy.renewal.mode === 'ari') return 1 / 3;
  return null;
}

/** Why a certificate breaks the policy's compliance rules, or null. */
export function complianceProblem(policy: Pick<AutomationPolicy, 'compliancePolicy'>, cert: Pick<CertificateFacts, 'signingAlgorithm' | 'issuer'>): string | null {
  const rules = policy.compliancePolicy;
  if (!rules) return null;
  const algorithms = rules.authorizedSigningAlgorithms ?? [];
  if (algorithms.length > 0 && !algorithms.some((a) => a.toLowerCase() === cert.signingAlgorithm.toLowerCase())) return `signing algorithm ${cert.signingAlgorithm} is not authorized`;
  const cas = rules.authorizedCas ?? [];
  if (cas.length > 0 && !cas.includes(cert.issuer)) return `issuer ${cert.issuer} is not an authorized CA`;
  return null;
}

/** Why the policy would renew a certificate now (its first cause), or null when nothing is due. */
export function renewalCause(policy: AutomationPolicy, cert: CertificateFacts, now: number): RenewalCause | null {
  if (cert.revoked) return policy.renewOn.includes('revocation') ? 'revocation' : null;
  if (policy.renewOn.includes('expiry') && renewalDueAt(policy, cert) <= now) return 'expiry';
  if (policy.renewOn.includes('noncompliance') && complianceProblem(policy, cert)) return 'noncompliance';
  return null;
}

/** The delay before retry n (1-based) of a failed renewal: the policy's backoff, doubled each time, at most a week. */
export function retryDelayMs(policy: Pick<AutomationPolicy, 'retries'>, attempt: number): number {
  return Math.min(policy.retries.backoffMinutes * 60_000 * 2 ** Math.max(0, attempt - 1), 7 * DAY_MS);
}
