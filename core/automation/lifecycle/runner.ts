import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ConfigRegistry } from '../../config-objects/registry.js';
import { ProblemError } from '../../errors/index.js';
import { LIFECYCLE_EVENT_CODES as L } from '../../events/codes.js';
import type { EventStore } from '../../events/store.js';
import type { ProfileService } from '../../profiles/types.js';
import type { RequestWorkflows } from '../../requests/workflow/service.js';
import { executionAllowed, type ExecutionPolicy } from '../executions/config-type.js';
import { EXECUTION_POLICY_TYPE } from '../executions/routes.js';
import { AUTOMATION_POLICY_TYPE } from '../policies/config-type.js';
import { dueCertificates } from '../policies/coverage.js';
import { DAY_MS, retryDelayMs, type AutomationPolicy, type RenewalCause } from '../policies/model.js';
import { automationPrincipal } from './principal.js';
import { RenewalClaims } from './claims.js';
import { issuingRequestPlan, stalePendingRequests } from './requests.js';

/** At most this many certificates renewed (and as many revoked) per run: the next run takes the rest. */
const BATCH = 200;
/** How long a claim holds before another node may take an abandoned one over. */
const LEASE_MS = 10 * 60_000;

export interface LifecycleDeps {
  knex: Knex;
  clock: () => number;
  events: EventStore;
  logger: Logger;
  registry: ConfigRegistry;
  /** The request workflows and profiles (registered after the task type: read at run time). */
  workflows: () => RequestWorkflows;
  profiles: () => ProfileService;
  node: string;
}

export interface LifecycleOutcome {
  status: 'success' | 'failure';
  summary: string;
  details: { renewed: number; requested: number; failed: number; revoked: number; expiredRequests: number; skipped: number; outsideExecutionPolicy?: boolean };
}

const describe = (err: unknown): string => (err instanceof ProblemError ? [err.code, err.message, err.detail].filter(Boolean).join(': ') : (err as Error).message || String(err));

/**
 * One run of the lifecycle task for one automation policy: renews the covered certificates that are due through
 * the request workflow (so approval, events, triggers and the PKI queue apply as for any request), follows the
 * renewals waiting for an approver, revokes superseded certificates once the policy's grace has passed, and
 * cancels requests of the profile pending for too long. Safe to run on several nodes at once: every action on a
 * certificate is taken under its claim (claims.ts).
 */
export class LifecycleRunner {
  private readonly claims: RenewalClaims;

  constructor(private readonly deps: LifecycleDeps) {
    this.claims = new RenewalClaims(deps.knex, deps.clock, deps.node);
  }

  async policy(tenant: string, name: string): Promise<AutomationPolicy | null> {
    return (await this.deps.registry.resolve(AUTOMATION_POLICY_TYPE, tenant, name)) as unknown as AutomationPolicy | null;
  }

  /** Whether the policy's execution policy lets automation act now (always without one). */
  async runnable(tenant: string, policy: AutomationPolicy, now: number): Promise<boolean> {
    if (!policy.executionPolicy) return true;
    const execution = (await this.deps.registry.resolve(EXECUTION_POLICY_TYPE, tenant, policy.executionPolicy)) as unknown as ExecutionPolicy | null;
    return execution ? executionAllowed(execution, now) : true;
  }

  async run(tenant: string, name: string): Promise<LifecycleOutcome> {
    const details: LifecycleOutcome['details'] = { renewed: 0, requested: 0, failed: 0, revoked: 0, expiredRequests: 0, skipped: 0 };
    const policy = await this.policy(tenant, name);
    if (!policy) return { status: 'failure', summary: `no automation policy "${name}"`, details };
    const now = this.deps.clock();
    if (!(await this.runnable(tenant, policy, now))) {
      return { status: 'success', summary: `outside the periods of execution policy ${policy.executionPolicy}: nothing done`, details: { ...details, outsideExecutionPolicy: true } };
    }
    await this.followApprovals(tenant, policy, details);
    for (const { certificate, cause } of await dueCertificates(this.deps.knex, tenant, policy, now, BATCH)) {
      const claim = await this.claims.claim(tenant, certificate._id, policy.name, LEASE_MS);
      if (!claim) {
        details.skipped++;
        continue;
      }
      await this.renew(tenant, policy, certificate._id, cause, claim.attempts, details);
    }
    await this.revokeSuperseded(tenant, policy, details);
    await this.expireStaleRequests(tenant, policy, details);
    const summary = `${details.renewed} renewed, ${details.requested} awaiting approval, ${details.failed} failed, ${details.revoked} superseded revoked, ${details.expiredRequests} stale request(s) canceled`;
    return { status: details.failed > 0 ? 'failure' : 'success', summary, details };
  }

  private async renew(tenant: string, policy: AutomationPolicy, certificateId: string, cause: RenewalCause, attempts: number, details: LifecycleOutcome['details']): Promise<void> {
    const workflows = this.deps.workflows();
    try {
      const profile = await this.profile(tenant, policy.profile);
      const template: Record<string, unknown> = {};
      // The holder's key stays the holder's: a certificate issued from the holder's CSR is renewed with that CSR
      // (when the profile still takes CSRs); otherwise the platform makes the key, when the profile lets it.
      const issued = await issuingRequestPlan(this.deps.knex, tenant, certificateId);
      if (issued?.mode === 'decentralized' && issued.csr && profile.keyPolicy.decentralized) template.csr = issued.csr;
      else if (!profile.keyPolicy.centralized) throw new Error(`profile ${profile.name} takes no server-side key and no CSR of the holder is known: the holder must renew`);
      else if (profile.keyPolicy.p12passwordMode === 'manual') throw new Error(`profile ${profile.name} asks the requester for the PKCS#12 password: a renewal nobody attends cannot give one`);
      const principal = automationPrincipal(tenant, policy, profile);
      const answer = await workflows.submit({ tenant, principal }, { workflow: 'renew', certificateId, profile: policy.profile, template, requesterComment: `automation policy ${policy.name} (${cause})` });
      if (answer.status === 'completed' && answer.certificate) {
        const revokeAfter = policy.revokeSupersededAfterDays === null ? null : this.deps.clock() + policy.revokeSupersededAfterDays * DAY_MS;
        await this.claims.submitted(tenant, certificateId, { requestId: answer._id, newCertificateId: answer.certificate._id, revokeAfter });
        details.renewed++;
      } else if (answer.status === 'pending' || answer.status === 'approved') {
        // Waiting for an approver, or queued at the PKI: followApprovals picks the outcome up.
        await this.claims.submitted(tenant, certificateId, { requestId: answer._id, newCertificateId: null, revokeAfter: null });
        details.requested++;
      } else {
        throw new Error(`the renewal request ended ${answer.status}${(answer as { error?: string }).error ? `: ${(answer as { error?: string }).error}` : ''}`);
      }
    } catch (err) {
      await this.failure(tenant, policy, certificateId, 'renew', describe(err), attempts + 1);
      details.failed++;
    }
  }

  /** Renewals submitted earlier that were waiting: completed ones count as renewed, refused ones as failures. */
  private async followApprovals(tenant: string, policy: AutomationPolicy, details: LifecycleOutcome['details']): Promise<void> {
    const store = this.deps.workflows().store;
    for (const row of await this.claims.requested(tenant, policy.name, BATCH)) {
      if (!row.request_id) continue;
      const stored = await store.get(tenant, row.request_id);
      const request = stored?.request;
      if (request?.status === 'completed' && request.certificateId) {
        const revokeAfter = policy.revokeSupersededAfterDays === null ? null : this.deps.clock() + policy.revokeSupersededAfterDays * DAY_MS;
        await this.claims.submitted(tenant, row.certificate_id, { requestId: row.request_id, newCertificateId: request.certificateId, revokeAfter });
        details.renewed++;
      } else if (!request || request.status === 'denied' || request.status === 'canceled') {
        await this.failure(tenant, policy, row.certificate_id, 'renew', `the renewal request ${row.request_id} was ${request?.status ?? 'removed'}`, Number(row.attempts) + 1);
        details.failed++;
      }
    }
  }

  private async revokeSuperseded(tenant: string, policy: AutomationPolicy, details: LifecycleOutcome['details']): Promise<void> {
    if (policy.revokeSupersededAfterDays === null) return;
    const now = this.deps.clock();
    for (const row of await this.claims.dueRevocations(tenant, policy.name, now, BATCH)) {
      if (!(await this.claims.claimRevocation(tenant, row.certificate_id, LEASE_MS))) continue;
      try {
        const profile = await this.profile(tenant, policy.profile);
        const answer = await this.deps.workflows().submit(
          { tenant, principal: automationPrincipal(tenant, policy, profile) },
          { workflow: 'revoke', certificateId: row.certificate_id, revocationReason: 'superseded', requesterComment: `automation policy ${policy.name}: replaced by ${row.new_certificate_id}` },
        );
        if (answer.status === 'pending') throw new Error('the revocation waits for an approver');
        await this.claims.revoked(tenant, row.certificate_id);
        details.revoked++;
      } catch (err) {
        // Revoked by someone else meanwhile: nothing left to do.
        if (err instanceof ProblemError && err.code === 'WEBRA-REVOKE-005') {
          await this.claims.revoked(tenant, row.certificate_id);
          continue;
        }
        const retryAt = now + retryDelayMs(policy, 1);
        await this.claims.revocationFailed(tenant, row.certificate_id, describe(err), retryAt);
        await this.event(tenant, policy, row.certificate_id, { step: 'revoke-superseded', error: describe(err), attempt: 1, final: false, nextAttemptAt: retryAt });
        details.failed++;
      }
    }
  }

  private async expireStaleRequests(tenant: string, policy: AutomationPolicy, details: LifecycleOutcome['details']): Promise<void> {
    if (policy.expireRequestsAfterDays === null) return;
    const before = this.deps.clock() - policy.expireRequestsAfterDays * DAY_MS;
    const profile = await this.profile(tenant, policy.profile).catch(() => null);
    if (!profile) return;
    const principal = automationPrincipal(tenant, policy, profile);
    for (const id of await stalePendingRequests(this.deps.knex, tenant, policy.profile, before, BATCH)) {
      try {
        await this.deps.workflows().cancel({ tenant, principal } as FastifyRequest, { _id: id });
        details.expiredRequests++;
      } catch (err) {
        // Decided by someone else meanwhile (REQ-009: no longer pending): nothing to expire.
        if (!(err instanceof ProblemError && err.code === 'REQ-009')) this.deps.logger.warn({ request: id, err: describe(err) }, 'stale request not canceled');
      }
    }
  }

  private async profile(tenant: string, name: string) {
    const profile = await this.deps.profiles().get(tenant, name);
    if (!profile) throw new Error(`profile ${name} does not exist`);
    if (!profile.enabled) throw new Error(`profile ${name} is disabled`);
    return profile;
  }

  private async failure(tenant: string, policy: AutomationPolicy, certificateId: string, step: 'renew', error: string, attempt: number): Promise<void> {
    const final = attempt > policy.retries.max;
    const nextAttemptAt = final ? null : this.deps.clock() + retryDelayMs(policy, attempt);
    await this.claims.failed(tenant, certificateId, error, attempt, nextAttemptAt);
    await this.event(tenant, policy, certificateId, { step, error, attempt, final, nextAttemptAt });
    this.deps.logger.warn({ policy: policy.name, certificate: certificateId, attempt, error }, 'automated renewal failed');
  }

  private async event(tenant: string, policy: AutomationPolicy, certificateId: string, payload: Record<string, unknown>): Promise<void> {
    await this.deps.events.append({ tenant, code: L.automationFailure, module: 'automation', status: 'failure', principal: `automation:${policy.name}`, objectType: 'certificate', objectId: certificateId, payload: { policy: policy.name, ...payload } });
  }
}
