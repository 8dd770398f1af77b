import type { Logger } from 'pino';
import type { Scheduler } from '../scheduler/scheduler.js';
import { validatedName, type DcvPolicy } from './config-types.js';
import type { DcvRunner } from './runner.js';
import type { DcvStates } from './state.js';

/** One validation of one domain (data: tenant, policy, domain, attempt, force). */
export const VALIDATE_JOB = 'dcv-validate';
/** A policy's scheduled run (data: tenant, policy): queues a validation per domain that needs one. */
export const POLICY_JOB = 'dcv-policy-run';

interface ValidateData extends Record<string, unknown> {
  tenant: string;
  policy: string;
  domain: string;
  attempt?: number;
}

/**
 * DCV runs as Agenda jobs in the platform database: a node that dies mid-run leaves its lease to expire and the
 * job to another node; a failure is queued again after the policy's backoff (doubled per attempt) until its
 * retries run out or the failure is one no retry fixes.
 */
export class DcvJobs {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly runner: DcvRunner,
    private readonly states: DcvStates,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {}

  define(): void {
    this.scheduler.define<ValidateData>(VALIDATE_JOB, async ({ data }) => {
      const attempt = data.attempt ?? 0;
      const outcome = await this.runner.run(data.tenant, data.policy, data.domain, attempt);
      if (outcome.status === 'busy') {
        this.logger.info({ policy: data.policy, domain: data.domain }, 'DCV run skipped: another run holds the domain');
        return;
      }
      if (outcome.status !== 'failed' || outcome.final) return;
      const policy = await this.runner.policy(data.tenant, data.policy);
      if (!policy) return;
      const delay = this.runner.retryDelay(policy, attempt);
      await this.scheduler.schedule(new Date(this.clock() + delay), VALIDATE_JOB, { ...data, attempt: attempt + 1 }, { tenant: data.tenant });
    });
    this.scheduler.define<{ tenant: string; policy: string }>(POLICY_JOB, async ({ data }) => {
      const policy = await this.runner.policy(data.tenant, data.policy);
      if (!policy || !policy.enabled) return;
      await this.queue(data.tenant, policy, { onlyStale: true });
    });
  }

  /**
   * Queues a validation of each of the policy's domains (or of `domains`); `onlyStale`: not those whose validation
   * is still reusable. Answers the domains queued.
   */
  async queue(tenant: string, policy: DcvPolicy, options: { domains?: string[]; onlyStale?: boolean } = {}): Promise<string[]> {
    const names = options.domains ?? [...new Set(policy.domains.map(validatedName))];
    const queued: string[] = [];
    const now = this.clock();
    for (const domain of names) {
      if (options.onlyStale) {
        const state = await this.states.get(tenant, policy.name, domain);
        if (state?.status === 'validated' && (state.validatedUntil ?? 0) > now) continue;
      }
      await this.scheduler.now(VALIDATE_JOB, { tenant, policy: policy.name, domain, attempt: 0 }, { tenant });
      queued.push(domain);
    }
    return queued;
  }

  /** Drops the policy's queued validations (a running one finishes); answers how many. */
  async cancel(tenant: string, policy: string): Promise<number> {
    const dropped = await this.scheduler.cancel(VALIDATE_JOB, { tenant, policy });
    await this.states.cancelled(tenant, policy);
    return dropped;
  }

  /** The policy's schedule, after each change: a repeating job on its CRON, or none. */
  async reschedule(tenant: string, policy: DcvPolicy | null, name: string): Promise<void> {
    await this.scheduler.cancel(POLICY_JOB, { tenant, policy: name });
    if (policy && policy.enabled && policy.schedule) await this.scheduler.every(policy.schedule, POLICY_JOB, { tenant, policy: name }, { tenant });
  }
}
