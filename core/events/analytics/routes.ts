import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { ProblemError } from '../../errors/index.js';
import { dimensionProperty, readAnalytics } from './reader.js';
import type { AnalyticsSource } from './sources.js';
import type { AnalyticsUpdater } from './updater.js';

/** Where each source's analytics live and who may read them. */
export interface AnalyticsRoute {
  source: AnalyticsSource;
  path: string;
  noun: string;
  readPermission: string;
}

const CAPABILITY = 'configuration' as const;
/** Forcing an update or flushing is system administration, whatever the source. */
const WRITE = { permission: 'configuration:system:write' } as const;

const counts = { type: 'object', additionalProperties: { type: 'integer' } } as const;

function answerSchema(source: AnalyticsSource) {
  return {
    type: 'object',
    required: ['total', 'byDay', 'lastUpdate', ...source.dimensions.map(dimensionProperty)],
    properties: {
      total: { type: 'integer' },
      byDay: {
        type: 'array',
        description: 'Counts per UTC day (day: its start, epoch ms), oldest first',
        items: { type: 'object', required: ['day', 'total'], properties: { day: { type: 'integer' }, total: { type: 'integer' } } },
      },
      ...Object.fromEntries(source.dimensions.map((d) => [dimensionProperty(d), { ...counts, description: `Counts per ${d}` }])),
      lastUpdate: { type: ['integer', 'null'], description: 'When the counts were last brought up to date (epoch ms); null before the first update' },
    },
  };
}

const rangeSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'integer', minimum: 0, description: 'Count from the UTC day containing this instant (epoch ms)' },
    to: { type: 'integer', minimum: 0, description: 'Count up to the UTC day containing this instant, inclusive (epoch ms)' },
  },
} as const;

/**
 * GET (read), PATCH (bring the counts up to date now, then read) and DELETE (flush: empty the counts
 * and rewind the cursor; the next update rebuilds them) on one source's analytics. The counts are the
 * request tenant's; an update or a flush covers every tenant (one cursor per source).
 */
export async function analyticsRoutes(app: FastifyInstance, deps: { knex: Knex; updater: AnalyticsUpdater; routes: readonly AnalyticsRoute[] }): Promise<void> {
  const { knex, updater } = deps;
  for (const { source, path, noun, readPermission } of deps.routes) {
    const tags = ['analytics'];
    const response = { 200: answerSchema(source) };
    const read = async (tenant: string, range: { from?: number; to?: number } = {}) => {
      if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
        throw new ProblemError('EVT-002', { message: '`from` must not be after `to`' });
      }
      return readAnalytics(knex, source, tenant, range, (await updater.cursor(source)).updatedAt);
    };

    app.get<{ Querystring: { from?: number; to?: number } }>(path, {
      config: { capability: CAPABILITY, access: { permission: readPermission } },
      schema: { tags, summary: `Analytics of ${noun}: totals by day, code and status`, querystring: rangeSchema, response },
      handler: async (request) => read(request.tenant, request.query),
    });

    app.patch(path, {
      config: { capability: CAPABILITY, access: WRITE },
      schema: { tags, summary: `Bring the ${noun} analytics up to date now and answer them`, response },
      handler: async (request) => {
        await updater.update(source);
        return read(request.tenant);
      },
    });

    app.delete(path, {
      config: { capability: CAPABILITY, access: WRITE },
      schema: { tags, summary: `Flush the ${noun} analytics (the next update rebuilds them)`, response },
      handler: async (request) => {
        await updater.flush(source);
        return read(request.tenant);
      },
    });
  }
}
