import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/unique.js';

const TABLE = 'automation_renewals';

export type ClaimStatus = 'claimed' | 'requested' | 'renewed' | 'failed' | 'revoking' | 'revoked' | 'given-up';

export interface RenewalRow {
  tenant: string;
  certificate_id: string;
  policy: string;
  status: ClaimStatus;
  attempts: number;
  next_attempt_at: number | null;
  request_id: string | null;
  new_certificate_id: string | null;
  renewed_at: number | null;
  revoke_after: number | null;
  last_error: string | null;
}

/**
 * The renewal claims (migration 0027): a node renews a certificate only once it holds its claim. Taking it is an
 * insert (the primary key makes one node win), or, for a failed attempt whose backoff has passed or a claim whose
 * holder died (lease passed), a conditional update that only one node's statement can match.
 */
export class RenewalClaims {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
    private readonly node: string,
  ) {}

  /** Takes the claim on a certificate; null when another node holds it or nothing is left to do. */
  async claim(tenant: string, certificateId: string, policy: string, leaseMs: number): Promise<{ attempts: number } | null> {
    const now = this.clock();
    const lease = { status: 'claimed', claimed_by: this.node, claimed_until: now + leaseMs, updated_at: now };
    try {
      await this.knex(TABLE).insert({ tenant, certificate_id: certificateId, policy, attempts: 0, created_at: now, ...lease });
      return { attempts: 0 };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const taken = await this.knex(TABLE)
      .where({ tenant, certificate_id: certificateId })
      .where((w) => w.where((f) => f.where('status', 'failed').where('next_attempt_at', '<=', now)).orWhere((c) => c.where('status', 'claimed').where('claimed_until', '<', now)))
      .update({ ...lease, policy });
    if (taken !== 1) return null;
    const row = (await this.knex(TABLE).where({ tenant, certificate_id: certificateId }).first('attempts')) as { attempts: number } | undefined;
    return { attempts: Number(row?.attempts ?? 0) };
  }

  /** The renewal was submitted: issued (renewed) or waiting for an approver (requested). */
  async submitted(tenant: string, certificateId: string, outcome: { requestId: string; newCertificateId: string | null; revokeAfter: number | null }): Promise<void> {
    const now = this.clock();
    await this.knex(TABLE)
      .where({ tenant, certificate_id: certificateId })
      .update({
        status: outcome.newCertificateId ? 'renewed' : 'requested',
        request_id: outcome.requestId,
        new_certificate_id: outcome.newCertificateId,
        renewed_at: outcome.newCertificateId ? now : null,
        revoke_after: outcome.newCertificateId ? outcome.revokeAfter : null,
        claimed_until: null,
        last_error: null,
        updated_at: now,
      });
  }

  /** The attempt failed: retried at `nextAttemptAt`, or given up when null. */
  async failed(tenant: string, certificateId: string, error: string, attempts: number, nextAttemptAt: number | null): Promise<void> {
    await this.knex(TABLE)
      .where({ tenant, certificate_id: certificateId })
      .update({ status: nextAttemptAt === null ? 'given-up' : 'failed', attempts, next_attempt_at: nextAttemptAt, claimed_until: null, last_error: error.slice(0, 4000), updated_at: this.clock() });
  }

  /** Renewed certificates of a policy whose grace has passed and whose predecessor is not revoked yet. */
  async dueRevocations(tenant: string, policy: string, now: number, limit: number): Promise<RenewalRow[]> {
    return (await this.knex(TABLE).where({ tenant, policy, status: 'renewed' }).whereNotNull('revoke_after').where('revoke_after', '<=', now).orderBy('revoke_after').limit(limit)) as RenewalRow[];
  }

  /** Takes the revocation of a superseded certificate (one node's update matches); false when another node has it. */
  async claimRevocation(tenant: string, certificateId: string, leaseMs: number): Promise<boolean> {
    const now = this.clock();
    const taken = await this.knex(TABLE)
      .where({ tenant, certificate_id: certificateId })
      .where((w) => w.where('status', 'renewed').orWhere((c) => c.where('status', 'revoking').where('claimed_until', '<', now)))
      .update({ status: 'revoking', claimed_by: this.node, claimed_until: now + leaseMs, updated_at: now });
    return taken === 1;
  }

  /** The superseded certificate is revoked (or was already). */
  async revoked(tenant: string, certificateId: string): Promise<void> {
    const now = this.clock();
    await this.knex(TABLE).where({ tenant, certificate_id: certificateId }).update({ status: 'revoked', revoked_at: now, claimed_until: null, updated_at: now });
  }

  /** The revocation failed: tried again after `retryAt`. */
  async revocationFailed(tenant: string, certificateId: string, error: string, retryAt: number): Promise<void> {
    await this.knex(TABLE)
      .where({ tenant, certificate_id: certificateId })
      .update({ status: 'renewed', revoke_after: retryAt, claimed_until: null, last_error: error.slice(0, 4000), updated_at: this.clock() });
  }

  async get(tenant: string, certificateId: string): Promise<RenewalRow | undefined> {
    return (await this.knex(TABLE).where({ tenant, certificate_id: certificateId }).first()) as RenewalRow | undefined;
  }

  /** Renewals of a policy submitted and not settled yet (waiting for an approver or the PKI queue). */
  async requested(tenant: string, policy: string, limit: number): Promise<RenewalRow[]> {
    return (await this.knex(TABLE).where({ tenant, policy, status: 'requested' }).orderBy('updated_at').limit(limit)) as RenewalRow[];
  }
}
