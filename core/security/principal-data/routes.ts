import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';
import { dashboardRoutes } from './dashboard-routes.js';
import { dictionaryRoutes } from './dictionary.js';
import { preferenceRoutes } from './preferences.js';
import { savedQueryRoutes } from './query-routes.js';

/**
 * A principal's self-service data: saved queries, preferences, dashboards, and the dictionary of
 * principals to pick from. Each principal reads and changes only its own.
 */
export async function principalDataRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  await savedQueryRoutes(app, ctx);
  await preferenceRoutes(app, ctx);
  await dictionaryRoutes(app, ctx);
  await dashboardRoutes(app, ctx);
}
