import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ConfigRegistry } from '../config-objects/registry.js';
import type { Enrollment } from '../enrollment/index.js';
import type { CoreServices } from '../services.js';
import { LifecycleRunner } from './lifecycle/runner.js';
import { mountLifecycleRoutes } from './lifecycle/routes.js';
import { LIFECYCLE_TASK, lifecycleTaskType } from './lifecycle/task-type.js';
import { automationPolicyType } from './policies/config-type.js';

/**
 * Automation (issue 30): automation policies on the configuration registry, the `lifecycle` task type that acts
 * on them, and the lifecycle routes automation clients read. Registered once enrollment is (renewals go through
 * its request workflows).
 */
export function registerAutomation(app: FastifyInstance, services: CoreServices, registry: ConfigRegistry, enrollment: Enrollment): LifecycleRunner {
  registry.declare(automationPolicyType());
  const runner = new LifecycleRunner({
    knex: services.knex,
    clock: services.clock,
    events: services.events,
    logger: services.logger.child({ component: 'automation' }),
    registry,
    workflows: () => enrollment.workflows,
    profiles: () => enrollment.profiles,
    // Which node holds a claim (informational: the database decides who wins).
    node: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  });
  services.provided.taskTypes.add('core', LIFECYCLE_TASK, lifecycleTaskType(runner, registry));
  mountLifecycleRoutes(app, { runner, registry, profiles: () => enrollment.profiles, inventory: services.inventory, clock: services.clock });
  return runner;
}
