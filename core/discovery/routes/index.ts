import type { FastifyInstance } from 'fastify';
import { discoveryEventFromRow } from '../event-store.js';
import { ProblemError } from '../../errors/index.js';
import { registerTableSearch, type TableRow } from '../../events/routes/table-search.js';
import type { CoreServices } from '../../services.js';
import { DISCOVERY_EVENT_LANGUAGE } from '../language.js';
import { DISCOVERY_EVENT_STATUSES, type StoredDiscoveryEvent } from '../types.js';

/** Every key of a stored discovery event (client-compat §5), in CSV column order. */
export const DISCOVERY_EVENT_PROPERTIES = [
  '_id',
  'timestamp',
  'campaign',
  'sessionId',
  'code',
  'status',
  'errorCode',
  'errorMessage',
  'hostname',
  'ip',
  'port',
  'source',
  'clientVersion',
  'clientIp',
  'clientId',
  'certificateId',
] as const satisfies readonly (keyof StoredDiscoveryEvent)[];

const nullableString = { type: ['string', 'null'] };

const discoveryEventSchema = {
  type: 'object',
  required: [...DISCOVERY_EVENT_PROPERTIES],
  properties: {
    _id: { type: 'string' },
    timestamp: { type: 'integer', description: 'Epoch ms, when the service recorded the event' },
    campaign: { type: 'string' },
    sessionId: nullableString,
    code: { type: 'string' },
    status: { type: 'string', enum: [...DISCOVERY_EVENT_STATUSES] },
    errorCode: nullableString,
    errorMessage: nullableString,
    hostname: nullableString,
    ip: nullableString,
    port: { type: ['integer', 'null'] },
    source: nullableString,
    clientVersion: nullableString,
    clientIp: nullableString,
    clientId: nullableString,
    certificateId: nullableString,
  },
} as const;

type DiscoveryEventRow = Parameters<typeof discoveryEventFromRow>[0];

/**
 * POST /api/v1/discovery/events/search and /csv, GET /api/v1/discovery/events/:id and
 * /search/dictionary (HDQL, events capability — the dictionary also on webra hosts —,
 * search:discovery-events). Default order: newest first
 * (timestamp, then _id, both descending: the (tenant, created_at) index read backwards).
 */
export async function registerDiscoveryEventRoutes(app: FastifyInstance, services: CoreServices): Promise<void> {
  await registerTableSearch(
    app,
    {
      base: '/api/v1/discovery/events',
      tags: ['discovery events'],
      noun: 'discovery events',
      capability: 'events',
      // The spec lists this dictionary under the webra capability too: the routes common to webra, events
      // and configuration are the one capability set covering both.
      dictionaryCapability: 'common',
      permission: 'search:discovery-events',
      language: DISCOVERY_EVENT_LANGUAGE,
      properties: DISCOVERY_EVENT_PROPERTIES,
      dateProperties: ['timestamp'],
      objectOf: (row: TableRow) => ({ ...discoveryEventFromRow(row as unknown as DiscoveryEventRow) }),
      objectSchema: discoveryEventSchema,
      defaultSort: [
        { column: 'created_at', desc: true },
        { column: 'id', desc: true },
      ],
      csvFilename: 'discovery-events.csv',
      notFound: (id) => new ProblemError('EVT-DSC-003', { detail: `No discovery event ${id.slice(0, 64)}` }),
    },
    services,
  );
}
