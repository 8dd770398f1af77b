import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';
import { analyticsRoutes, type AnalyticsRoute } from './routes.js';
import { DISCOVERY_EVENTS_SOURCE, EVENTS_SOURCE } from './sources.js';
import { AnalyticsUpdater } from './updater.js';

/** How often the counts are brought up to date in the background (an Agenda interval). */
export const ANALYTICS_EVERY = '5 minutes';

export const ANALYTICS_ROUTES: readonly AnalyticsRoute[] = [
  { source: EVENTS_SOURCE, path: '/api/v1/analytics/events', noun: 'events', readPermission: 'search:events' },
  { source: DISCOVERY_EVENTS_SOURCE, path: '/api/v1/analytics/discovery/events', noun: 'discovery events', readPermission: 'search:discovery-events' },
];

export const analyticsJobName = (source: { name: string }): string => `analytics.${source.name}`;

/**
 * Event and discovery event analytics: counts precomputed into the tables of migration 0013 by a
 * repeating job per source (`analytics.events`, `analytics.discovery-events`), read by the routes.
 */
export async function registerEventAnalytics(app: FastifyInstance, services: CoreServices): Promise<AnalyticsUpdater> {
  const updater = new AnalyticsUpdater(services.knex, services.engine, services.clock);
  const logger = services.logger.child({ component: 'analytics' });
  for (const { source } of ANALYTICS_ROUTES) {
    const name = analyticsJobName(source);
    services.scheduler.define(
      name,
      async () => {
        const counted = await updater.update(source);
        if (counted > 0) logger.debug({ source: source.name, counted }, 'analytics updated');
      },
      { concurrency: 1 },
    );
    // Nodes that run no jobs (scheduler.enabled false, CLI commands) leave the schedule to those that do.
    if (services.runsJobs) await services.scheduler.every(ANALYTICS_EVERY, name);
  }
  await app.register(analyticsRoutes, { knex: services.knex, updater, routes: ANALYTICS_ROUTES });
  return updater;
}
