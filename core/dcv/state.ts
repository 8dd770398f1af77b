import type { Knex } from 'knex';

const TABLE = 'dcv_domains';

export type DomainStatus = 'never' | 'running' | 'validated' | 'failed' | 'cancelled';

/** A domain's validation state under a policy, as the lifecycle routes answer it. */
export interface DomainState {
  domain: string;
  status: DomainStatus;
  validatedUntil: number | null;
  lastRunAt: number | null;
  lastError: string | null;
  method: string | null;
  attempts: number;
}

interface Row {
  domain: string;
  status: string;
  validated_until: number | string | null;
  last_run_at: number | string | null;
  last_error: string | null;
  method: string | null;
  attempts: number | string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));
const view = (r: Row): DomainState => ({
  domain: r.domain,
  status: r.status as DomainStatus,
  validatedUntil: num(r.validated_until),
  lastRunAt: num(r.last_run_at),
  lastError: r.last_error,
  method: r.method,
  attempts: Number(r.attempts),
});

/**
 * The dcv_domains rows: state per (policy, domain), and the lease a run holds so that two nodes never validate
 * one domain at once (taken by a conditional UPDATE: whoever changes the row holds it).
 */
export class DcvStates {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string, policy: string): Promise<DomainState[]> {
    return ((await this.knex(TABLE).where({ tenant, policy }).orderBy('domain')) as Row[]).map(view);
  }

  async get(tenant: string, policy: string, domain: string): Promise<DomainState | null> {
    const row = (await this.knex(TABLE).where({ tenant, policy, domain }).first()) as Row | undefined;
    return row ? view(row) : null;
  }

  private async ensure(tenant: string, policy: string, domain: string): Promise<void> {
    await this.knex(TABLE)
      .insert({ tenant, policy, domain, status: 'never', attempts: 0, updated_at: this.clock() })
      .onConflict(['tenant', 'policy', 'domain'])
      .ignore();
  }

  /** Takes the domain's lease for `leaseMs`; false when another run holds it. */
  async lock(tenant: string, policy: string, domain: string, owner: string, leaseMs: number): Promise<boolean> {
    await this.ensure(tenant, policy, domain);
    const now = this.clock();
    const taken = await this.knex(TABLE)
      .where({ tenant, policy, domain })
      .andWhere((q) => q.whereNull('locked_until').orWhere('locked_until', '<', now))
      .update({ lock_owner: owner, locked_until: now + leaseMs, status: 'running', last_run_at: now, updated_at: now });
    return taken === 1;
  }

  /** Ends a run: its outcome, and the lease released. */
  async finish(
    tenant: string,
    policy: string,
    domain: string,
    owner: string,
    outcome: { status: DomainStatus; validatedUntil?: number | null; error?: string | null; method?: string | null; attempts?: number },
  ): Promise<void> {
    const now = this.clock();
    await this.knex(TABLE)
      .where({ tenant, policy, domain, lock_owner: owner })
      .update({
        status: outcome.status,
        ...(outcome.validatedUntil !== undefined ? { validated_until: outcome.validatedUntil } : {}),
        last_error: outcome.error ?? null,
        ...(outcome.method !== undefined ? { method: outcome.method } : {}),
        ...(outcome.attempts !== undefined ? { attempts: outcome.attempts } : {}),
        lock_owner: null,
        locked_until: null,
        updated_at: now,
      });
  }

  /** What an external system reports (lifecycle events route): no lease involved. */
  async report(tenant: string, policy: string, domain: string, outcome: { status: DomainStatus; validatedUntil: number | null; error: string | null; method: string | null }): Promise<void> {
    await this.ensure(tenant, policy, domain);
    await this.knex(TABLE)
      .where({ tenant, policy, domain })
      .update({ status: outcome.status, validated_until: outcome.validatedUntil, last_error: outcome.error, method: outcome.method, last_run_at: this.clock(), updated_at: this.clock() });
  }

  /** Marks the policy's domains that are not running as cancelled (their queued runs were dropped). */
  async cancelled(tenant: string, policy: string): Promise<void> {
    await this.knex(TABLE).where({ tenant, policy }).whereNull('lock_owner').whereNot('status', 'validated').update({ status: 'cancelled', updated_at: this.clock() });
  }

  /** A deleted policy leaves no state behind. */
  async forget(tenant: string, policy: string): Promise<void> {
    await this.knex(TABLE).where({ tenant, policy }).delete();
  }
}
