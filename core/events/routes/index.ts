import type { FastifyInstance } from 'fastify';
import { registerDiscoveryEventRoutes } from '../../discovery/routes/index.js';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import { registerEventAnalytics } from '../analytics/index.js';
import { EVENT_LANGUAGE } from '../language.js';
import { detailMember, EVENT_PROPERTIES, eventObjectOf, eventObjectSchema } from './event-object.js';
import { registerTableSearch } from './table-search.js';

/** The events capability's routes: events and discovery events search / CSV / get / dictionary, analytics. */
export async function registerEventRoutes(app: FastifyInstance, services: CoreServices): Promise<void> {
  // Default order: newest first, by chain position (seq is unique and strictly increasing).
  await registerTableSearch(
    app,
    {
      base: '/api/v1/events',
      tags: ['events'],
      noun: 'events',
      capability: 'events',
      permission: 'search:events',
      language: EVENT_LANGUAGE,
      properties: EVENT_PROPERTIES,
      dateProperties: ['timestamp', 'removeAt'],
      objectOf: eventObjectOf,
      memberOf: (row, key) => detailMember(row.payload, key),
      objectSchema: eventObjectSchema,
      defaultSort: [{ column: 'seq', desc: true }],
      csvFilename: 'events.csv',
      notFound: (id) => new ProblemError('EVT-003', { detail: `No event ${id.slice(0, 64)}` }),
    },
    services,
  );
  await registerDiscoveryEventRoutes(app, services);
  await registerEventAnalytics(app, services);
}
