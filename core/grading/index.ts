import type { FastifyInstance } from 'fastify';
import type { InventoryContext } from '../inventory/index.js';
import type { CoreServices } from '../services.js';
import { GradingJobs } from './jobs.js';
import { gradingRoutes } from './routes.js';
import { GradeStore } from './store.js';

/**
 * Certificate grading (issue 30 item 4): built-in rulesets and policies, explain, and the run job that writes
 * grades onto the inventory.
 */
export async function registerGrading(app: FastifyInstance, services: CoreServices, inventory: InventoryContext): Promise<GradingJobs> {
  const { knex, clock, events, logger, scheduler } = services;
  const jobs = new GradingJobs(scheduler, new GradeStore(knex, clock), events, logger.child({ component: 'grading' }));
  jobs.define();
  await app.register(gradingRoutes, { inventory, jobs });
  return jobs;
}
