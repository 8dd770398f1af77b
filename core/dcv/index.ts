import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { CertwrightConfig } from '../config/index.js';
import type { EventStore } from '../events/store.js';
import type { ProvidedServices } from '../plugins/provided.js';
import type { ConfigRegistry } from '../config-objects/index.js';
import type { CoreServices } from '../services.js';
import { DCV_POLICY_TYPE, dcvInstanceType, dcvPolicyType, type DcvPolicy } from './config-types.js';
import { DnsFacts } from './dns-facts.js';
import { DcvJobs } from './jobs.js';
import { dcvLifecycleRoutes } from './routes.js';
import { DcvRunner } from './runner.js';
import { DcvStates } from './state.js';

/**
 * Domain control validation (DESIGN.md, issue 29): the collections (policies, providers, provisioners) on the
 * configuration registry, the kernel's DNS facts, the runner and its jobs, and the lifecycle routes.
 */
/** The runner, built before plugins load (they get its facade as ctx.dcv). */
export function createDcvRunner(deps: { config: CertwrightConfig; knex: Knex; clock: () => number; events: EventStore; logger: Logger; provided: ProvidedServices; registry: ConfigRegistry }): DcvRunner {
  const { config, knex, clock, events, logger, provided, registry } = deps;
  return new DcvRunner({
    registry,
    providers: provided.dcvProviders,
    provisioners: provided.dcvProvisioners,
    facts: new DnsFacts({ resolvers: config.dcv.resolvers, authoritativePort: config.dcv.authoritativePort, timeoutMs: config.dcv.queryTimeoutMs }),
    states: new DcvStates(knex, clock),
    events,
    logger: logger.child({ component: 'dcv' }),
    clock,
    settings: { propagationTimeoutMs: config.dcv.propagationTimeoutMs, propagationIntervalMs: config.dcv.propagationIntervalMs, leaseMs: config.dcv.leaseMs },
  });
}

/** The collections, the jobs and the lifecycle routes around the runner. */
export async function registerDcv(app: FastifyInstance, services: CoreServices, registry: ConfigRegistry, runner: DcvRunner): Promise<void> {
  const { knex, clock, events, logger, scheduler, provided, plugins } = services;
  const manifestOf = (id: string) => plugins.manifestOf(id);
  registry.declare(dcvInstanceType('provider', { registry: provided.dcvProviders, manifestOf }));
  registry.declare(dcvInstanceType('provisioner', { registry: provided.dcvProvisioners, manifestOf }));
  const states = new DcvStates(knex, clock);
  const policyType = dcvPolicyType();
  const jobs = new DcvJobs(scheduler, runner, states, clock, logger.child({ component: 'dcv' }));
  jobs.define();
  registry.declare({
    ...policyType,
    hooks: {
      ...policyType.hooks,
      // The schedule follows the stored policy; a deleted policy leaves no job and no state behind.
      async afterChange(change, context) {
        if (!services.runsJobs) return;
        await jobs.reschedule(context.tenant, change.op === 'delete' ? null : ((await runner.policy(context.tenant, change.name)) ?? null), change.name);
        if (change.op === 'delete') {
          await jobs.cancel(context.tenant, change.name);
          await states.forget(context.tenant, change.name);
        }
      },
    },
  });
  await app.register(dcvLifecycleRoutes, {
    runner,
    jobs,
    states,
    events,
    clock,
    policies: async (tenant: string) => (await registry.list(DCV_POLICY_TYPE, tenant)) as unknown as DcvPolicy[],
  });
}
