import { randomBytes } from 'node:crypto';
import type { DcvChallenge, DcvContext, DcvFacade, DcvProvider, DcvProvisioner, DnsRecord, InstanceFactory } from '@certwright/sdk';
import type { Logger } from 'pino';
import type { ConfigRegistry } from '../config-objects/index.js';
import type { EventStore } from '../events/store.js';
import type { ProvidedRegistry } from '../plugins/provided.js';
import { DCV_POLICY_TYPE, DCV_PROVIDER_TYPE, DCV_PROVISIONER_TYPE, policyCovers, type DcvInstanceObject, type DcvPolicy } from './config-types.js';
import type { DnsFacts } from './dns-facts.js';
import type { DcvStates } from './state.js';

export interface DcvSettings {
  propagationTimeoutMs: number;
  propagationIntervalMs: number;
  /** How long a run may hold a domain before another node may take it over. */
  leaseMs: number;
}

export interface DcvRunnerDeps {
  registry: ConfigRegistry;
  providers: ProvidedRegistry<InstanceFactory<DcvProvider>>;
  provisioners: ProvidedRegistry<InstanceFactory<DcvProvisioner>>;
  facts: DnsFacts;
  states: DcvStates;
  events: EventStore;
  logger: Logger;
  clock: () => number;
  settings: DcvSettings;
}

export type RunOutcome = { status: 'validated'; validatedUntil: number } | { status: 'failed'; error: string; final: boolean } | { status: 'busy' };

const DAY_MS = 86_400_000;
const describe = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 2000);

/** A DCV step refused for a reason the administrator must fix (no retry helps). */
export class DcvConfigurationError extends Error {}

/** No retry helps: a missing object, or a plugin's ConfigurationError / PermanentError (a wrong key, an unknown zone). */
const isConfigurationProblem = (err: unknown): boolean =>
  err instanceof DcvConfigurationError || ['ConfigurationError', 'PermanentError', 'EgressDeniedError'].includes((err as Error | null)?.name ?? '');

/**
 * Runs one validation of one domain under a policy: takes the domain's lease (no other node validates it at the
 * same time), lends the provider the policy's provisioner behind the kernel's DNS facts, records the outcome and
 * an event for every step (DCV-RUN-STARTED, DCV-RECORD-PUBLISHED, DCV-RECORD-REMOVED, DCV-VALIDATED, DCV-FAILURE).
 */
export class DcvRunner {
  private readonly instances = new Map<string, { stamp: string; value: unknown }>();
  private readonly owner = randomBytes(12).toString('hex');

  constructor(private readonly deps: DcvRunnerDeps) {}

  async policy(tenant: string, name: string): Promise<DcvPolicy | null> {
    return (await this.deps.registry.resolve(DCV_POLICY_TYPE, tenant, name)) as unknown as DcvPolicy | null;
  }

  /** The plugin instance a configured provider or provisioner names, built again when its object changed. */
  private async instance<T>(tenant: string, kind: 'provider' | 'provisioner', name: string): Promise<T> {
    const object = (await this.deps.registry.resolve(kind === 'provider' ? DCV_PROVIDER_TYPE : DCV_PROVISIONER_TYPE, tenant, name)) as unknown as DcvInstanceObject | null;
    if (!object) throw new DcvConfigurationError(`the DCV ${kind} "${name}" does not exist`);
    const factory = (kind === 'provider' ? this.deps.providers : this.deps.provisioners).get(object.type);
    if (!factory) throw new DcvConfigurationError(`the DCV ${kind} "${name}" is of type "${object.type}", which no loaded plugin provides`);
    const key = `${tenant}\u0000${kind}\u0000${name}`;
    const stamp = JSON.stringify(object);
    const cached = this.instances.get(key);
    if (cached && cached.stamp === stamp) return cached.value as T;
    const value = await (factory as InstanceFactory<unknown>)({ name, config: object.configuration ?? {} });
    this.instances.set(key, { stamp, value });
    return value as T;
  }

  private async event(tenant: string, code: string, status: 'success' | 'failure', domain: string, payload: Record<string, unknown>): Promise<void> {
    try {
      await this.deps.events.append({ tenant, code, module: 'dcv', status, principal: null, objectType: 'domain', objectId: domain, payload });
    } catch (err) {
      this.deps.logger.error({ err, code, domain }, 'could not record a DCV event');
    }
  }

  /** The kernel's DNS facts around the policy's provisioner, as the provider sees them. */
  private context(tenant: string, policy: DcvPolicy, domain: string): DcvContext {
    const { facts, settings } = this.deps;
    const provisioner = async (): Promise<DcvProvisioner> => {
      if (!policy.provisioner) throw new DcvConfigurationError(`the policy "${policy.name}" names no provisioner, and its provider writes DNS records`);
      return this.instance<DcvProvisioner>(tenant, 'provisioner', policy.provisioner);
    };
    return {
      publish: async (record) => {
        const writer = await provisioner();
        const fqdn = await facts.delegated(record.fqdn);
        let zone: string;
        try {
          zone = await facts.zoneOf(fqdn);
        } catch (err) {
          const known = await writer.findZone?.(fqdn);
          if (!known) throw err;
          zone = known;
        }
        const written: DnsRecord = { ...record, fqdn, zone };
        await writer.present(written);
        await this.event(tenant, 'DCV-RECORD-PUBLISHED', 'success', domain, { policy: policy.name, fqdn, zone, delegatedFrom: fqdn === record.fqdn ? null : record.fqdn, type: record.type });
        const timing = writer.propagation?.();
        try {
          await facts.waitFor(fqdn, zone, record.value, true, timing ? timing.timeoutSeconds * 1000 : settings.propagationTimeoutMs, timing ? timing.intervalSeconds * 1000 : settings.propagationIntervalMs);
        } catch (err) {
          // The provider never learns of a record whose propagation failed: it goes here, not left behind.
          await writer.cleanUp(written).then(
            () => this.event(tenant, 'DCV-RECORD-REMOVED', 'success', domain, { policy: policy.name, fqdn, zone, type: record.type }),
            (cleanErr: unknown) => this.deps.logger.warn({ err: cleanErr, fqdn }, 'could not remove a record whose propagation failed'),
          );
          throw err;
        }
        return written;
      },
      unpublish: async (record) => {
        const writer = await provisioner();
        await writer.cleanUp(record);
        await this.event(tenant, 'DCV-RECORD-REMOVED', 'success', domain, { policy: policy.name, fqdn: record.fqdn, zone: record.zone ?? null, type: record.type });
      },
      lookupTxt: async (fqdn) => facts.authoritativeTxt(await facts.delegated(fqdn)),
      ...(policy.mode === 'persist' && policy.persist ? { persist: policy.persist } : {}),
    };
  }

  /** What plugins get as ctx.dcv: records through a policy's provisioner, with the same DNS facts and events. */
  facade(): DcvFacade {
    const contextFor = async (tenant: string, policyName: string, domain: string): Promise<DcvContext> => {
      const policy = await this.policy(tenant, policyName);
      if (!policy) throw new DcvConfigurationError(`the DCV policy "${policyName}" does not exist`);
      if (!policyCovers(policy, domain)) throw new DcvConfigurationError(`the DCV policy "${policyName}" does not cover ${domain}`);
      return this.context(tenant, policy, domain);
    };
    return {
      publish: async (policy, domain, record, tenant = 'default') => (await contextFor(tenant, policy, domain)).publish(record),
      unpublish: async (policy, domain, record, tenant = 'default') => (await contextFor(tenant, policy, domain)).unpublish(record),
    };
  }

  /** One validation of `domain` under `policyName`; `attempt` counts from 0. */
  async run(tenant: string, policyName: string, domain: string, attempt = 0): Promise<RunOutcome> {
    const { states, clock, settings } = this.deps;
    const policy = await this.policy(tenant, policyName);
    if (!policy) return { status: 'failed', error: `the DCV policy "${policyName}" does not exist`, final: true };
    if (!(await states.lock(tenant, policy.name, domain, this.owner, settings.leaseMs))) return { status: 'busy' };
    await this.event(tenant, 'DCV-RUN-STARTED', 'success', domain, { policy: policy.name, provider: policy.provider, attempt });
    let provider: DcvProvider | null = null;
    let challenge: DcvChallenge | null = null;
    const context = this.context(tenant, policy, domain);
    try {
      provider = await this.instance<DcvProvider>(tenant, 'provider', policy.provider);
      challenge = await provider.prepare(domain, context);
      let verdict = await provider.verify(challenge, context);
      const deadline = clock() + settings.propagationTimeoutMs;
      while (verdict === 'pending' && clock() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, settings.propagationIntervalMs));
        verdict = await provider.verify(challenge, context);
      }
      if (verdict !== 'valid') throw new Error(verdict === 'pending' ? 'still pending when the validation window closed' : `the ${challenge.method} validation was refused`);
      const validatedUntil = clock() + policy.reuseDays * DAY_MS;
      await this.cleanUp(provider, challenge, context, tenant, policy, domain);
      // The event before the state: whoever sees the outcome in the state finds its event already written.
      await this.event(tenant, 'DCV-VALIDATED', 'success', domain, { policy: policy.name, method: challenge.method, validatedUntil });
      await states.finish(tenant, policy.name, domain, this.owner, { status: 'validated', validatedUntil, method: challenge.method, attempts: attempt + 1 });
      return { status: 'validated', validatedUntil };
    } catch (err) {
      const error = describe(err);
      if (provider && challenge) await this.cleanUp(provider, challenge, context, tenant, policy, domain);
      const final = isConfigurationProblem(err) || attempt >= policy.retries.max;
      await this.event(tenant, 'DCV-FAILURE', 'failure', domain, { policy: policy.name, error, attempt, final });
      await states.finish(tenant, policy.name, domain, this.owner, { status: 'failed', error, ...(challenge ? { method: challenge.method } : {}), attempts: attempt + 1 });
      return { status: 'failed', error, final };
    }
  }

  /** Whatever the validation left in DNS goes, except a persistent record (dns-persist-01 keeps it on purpose). */
  private async cleanUp(provider: DcvProvider, challenge: DcvChallenge, context: DcvContext, tenant: string, policy: DcvPolicy, domain: string): Promise<void> {
    if (policy.mode === 'persist' || !provider.cleanUp) return;
    try {
      await provider.cleanUp(challenge, context);
    } catch (err) {
      await this.event(tenant, 'DCV-FAILURE', 'failure', domain, { policy: policy.name, error: `clean-up: ${describe(err)}`, attempt: null, final: false });
    }
  }

  /** When to try a failed run again (ms from now): the policy's backoff, doubled per attempt. */
  retryDelay(policy: DcvPolicy, attempt: number): number {
    return policy.retries.backoffSeconds * 1000 * 2 ** attempt;
  }

}
