import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';
import { CHECKPOINT_JOB, defineIntegrityJobs } from './jobs.js';
import { integrityRoutes } from './routes.js';
import { createIntegrityServices, type IntegrityServices } from './services.js';

/** A running check with no progress for this long lost its node: at least twice a job's lock lifetime (a takeover comes first). */
export const abandonedAfterMs = (lockLifetimeMs: number): number => Math.max(2 * lockLifetimeMs, 60_000);

/** The integrity check of the event chain (job + routes) and the signed checkpoints. */
export async function registerIntegrity(app: FastifyInstance, services: CoreServices): Promise<IntegrityServices> {
  const { config, scheduler, events } = services;
  const integrity = createIntegrityServices({
    knex: services.knex,
    events,
    secrets: services.secrets,
    clock: services.clock,
    abandonedAfterMs: abandonedAfterMs(config.scheduler.lockLifetimeMs),
  });
  defineIntegrityJobs(scheduler, integrity, services.logger.child({ component: 'events-integrity' }));
  const { everyEvents, everyMinutes } = config.events.checkpoint;
  // Time-based checkpoints (the job signs only when the head moved since the last one)…
  // (Nodes that run no jobs — scheduler.enabled false, CLI commands — leave the schedule to those that do.)
  if (services.runsJobs) await scheduler.every(everyMinutes * 60_000, CHECKPOINT_JOB);
  // …and count-based ones: the node whose append crosses a multiple of everyEvents asks for one now. A hint
  // only: a lost nudge is covered by the timer.
  events.appended.add((event) => {
    if (event.seq % everyEvents !== 0) return;
    scheduler.now(CHECKPOINT_JOB).catch((err: unknown) => services.logger.warn({ err }, 'could not schedule an event chain checkpoint'));
  });
  await integrityRoutes(app, { runs: integrity.runs, scheduler, keys: integrity.keys });
  return integrity;
}
