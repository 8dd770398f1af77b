import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { pageOf, searchBodySchema, searchPageSchema, aggregateBodySchema, type AggregateBody, type SearchBody } from '../../inventory/search/body.js';
import { aggregateItems, applyAggregateOrder, applyGroupBy, DEFAULT_AGGREGATE_LIMIT } from '../../inventory/search/aggregate.js';
import { csvObjectCell, keysetCsv } from '../../inventory/search/csv.js';
import { applyAfter, applySort, sortKeysOf, type SortKey } from '../../inventory/search/sort.js';
import { projectionOf } from '../../events/routes/table-search.js';
import { applyQuery, parseQuery, queryDictionary, querySource } from '../../query/index.js';
import type { QueryNode } from '../../query/types.js';
import type { CoreServices } from '../../services.js';
import type { ProfileService } from '../../profiles/types.js';
import { REQUEST_LANGUAGE } from '../language.js';
import type { RequestStore } from '../store.js';

const LANGUAGE = REQUEST_LANGUAGE;
const T = LANGUAGE.table;
const BASE = '/api/v1/requests';
const tags = ['requests'];
const config = { capability: 'webra', access: 'authenticated' } as const;
export const SEARCH_REQUESTS = 'search:requests';

/** Every property of a request result, in CSV column order. */
const PROPERTIES = [
  '_id',
  'module',
  'workflow',
  'status',
  'profile',
  'requester',
  'approver',
  'contact',
  'team',
  'holderId',
  'certificateId',
  'dn',
  'requesterComment',
  'approverComment',
  'registrationDate',
  'lastModificationDate',
  'expirationDate',
  'removeAt',
  'retryAt',
  'retryCount',
  'error',
  'labels',
  'metadata',
] as const;
const DATES = new Set(['registrationDate', 'lastModificationDate', 'expirationDate', 'removeAt', 'retryAt']);
const CSV_BATCH = 1000;


/**
 * POST /api/v1/requests/search, /aggregate, /csv and GET /search/dictionary (HRQL). What a caller sees
 * depends on `scope`: `self` its own requests; `manage` the requests of profiles it may approve; `search`
 * (default) its own requests plus what its `search:requests` permission filters admit.
 */
export async function requestSearchRoutes(app: FastifyInstance, services: CoreServices, ctx: { store: RequestStore; profiles: ProfileService }): Promise<void> {
  const { knex, clock } = services;

  const keysOf = (sortedBy: SearchBody['sortedBy']): SortKey[] => (sortedBy && sortedBy.length > 0 ? sortKeysOf(LANGUAGE, sortedBy) : sortKeysOf(LANGUAGE, [{ element: 'registration.date', order: 'Desc' }]));

  const approvable = async (request: FastifyRequest): Promise<string[]> => {
    const out: string[] = [];
    for (const profile of await ctx.profiles.list(request.tenant)) {
      const workflows = ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'] as const;
      if (workflows.some((w) => ctx.profiles.rightsOf(profile, request.principal!, w).approve)) out.push(profile.name);
    }
    return out;
  };

  // Answers `{qb}`: a query builder is a thenable, so an async function must not resolve to one directly.
  const narrowed = async (request: FastifyRequest, query: string | null | undefined, scope: string | null | undefined, now: number): Promise<{ qb: Knex.QueryBuilder }> => {
    const ast = parseQuery(query, LANGUAGE);
    const { qb } = querySource(ast, LANGUAGE, { knex, now, table: T, tenant: request.tenant }, false);
    const me = request.principal!.identifier;
    if (scope === 'self') {
      qb.where(`${T}.requester`, me);
    } else if (scope === 'manage') {
      const profiles = await approvable(request);
      if (profiles.length === 0) qb.whereRaw('1 = 0');
      else qb.whereIn(`${T}.profile`, profiles);
    } else {
      const filters = request.principal!.permissions.filtersFor(SEARCH_REQUESTS);
      if (filters !== null) {
        const parsed: QueryNode[] = [];
        for (const f of filters) {
          try {
            parsed.push(parseQuery(f, LANGUAGE));
          } catch (err) {
            services.logger.warn({ principal: me, err: (err as Error).message }, 'search:requests filter does not parse: it admits nothing');
          }
        }
        qb.where((outer) => {
          outer.where(`${T}.requester`, me);
          for (const filter of parsed) outer.orWhere((inner) => void applyQuery(inner, filter, LANGUAGE, { knex, now, table: T, tenant: request.tenant }));
        });
      }
    }
    return { qb };
  };

  app.post<{ Body: SearchBody | null }>(`${BASE}/search`, {
    config,
    schema: { tags, summary: 'Search requests (HRQL); scope search | manage | self', body: searchBodySchema, response: { 200: searchPageSchema } },
    handler: async (request) => {
      const body = request.body ?? {};
      const { pageIndex, pageSize } = pageOf(body);
      const projection = projectionOf({ language: LANGUAGE, properties: PROPERTIES }, body.fields);
      const keys = keysOf(body.sortedBy);
      const { qb: filtered } = await narrowed(request, body.query, body.scope, clock());
      const pageQuery = filtered.clone().select(`${T}.*`);
      applySort(pageQuery, T, keys);
      const rows = (await pageQuery.limit(pageSize + 1).offset((pageIndex - 1) * pageSize)) as Record<string, unknown>[];
      const hasMore = rows.length > pageSize;
      const objects = await ctx.store.objectsOfRows(request.tenant, rows.slice(0, pageSize));
      const results = objects.map((o) => pick(o as unknown as Record<string, unknown>, projection));
      const page: { results: unknown[]; pageIndex: number; pageSize: number; hasMore: boolean; count?: number } = { results, pageIndex, pageSize, hasMore };
      if (body.withCount) page.count = Number(((await filtered.clone().count({ n: '*' }).first()) as { n: number | string } | undefined)?.n ?? 0);
      return page;
    },
  });

  app.post<{ Body: AggregateBody & { scope?: string | null } }>(`${BASE}/aggregate`, {
    config,
    schema: {
      tags,
      summary: 'Count requests by group (HRQL)',
      body: { ...aggregateBodySchema, properties: { ...aggregateBodySchema.properties, scope: { type: ['string', 'null'], enum: ['search', 'manage', 'self', null] } } },
      response: {
        200: {
          type: 'object',
          required: ['items'],
          properties: { items: { type: 'array', items: { type: 'object', properties: { _id: { type: 'object', additionalProperties: true }, count: { type: 'integer' } } } }, count: { type: 'integer' } },
        },
      },
    },
    handler: async (request) => {
      const body = request.body;
      const now = clock();
      const { qb: grouped } = await narrowed(request, body.query, body.scope, now);
      // applyGroupBy reads a literal `status` as the certificates' derived status; a request's status is a
      // plain column, named here in a spelling that resolves to it (query names are case-insensitive).
      const aliases = applyGroupBy(grouped, knex, LANGUAGE, { ...body, groupBy: body.groupBy.map((g) => (g === 'status' ? 'STATUS' : g)) }, now);
      const ordered = grouped.clone();
      applyAggregateOrder(ordered, aliases, body.sortOrder);
      const rows = (await ordered.limit(body.limit ?? DEFAULT_AGGREGATE_LIMIT)) as Record<string, unknown>[];
      const answer: { items: ReturnType<typeof aggregateItems>; count?: number } = { items: aggregateItems(rows, body, aliases) };
      if (body.withCount) answer.count = Number(((await knex.from(grouped.as('groups')).count({ n: '*' }).first()) as { n: number | string } | undefined)?.n ?? 0);
      return answer;
    },
  });

  app.post<{ Body: SearchBody | null }>(`${BASE}/csv`, {
    config,
    schema: { tags, summary: 'Export the requests a search matches as CSV (streamed)', body: searchBodySchema, produces: ['text/csv'] },
    handler: async (request, reply) => {
      const body = request.body ?? {};
      const properties = body.fields && body.fields.length > 0 ? projectionOf({ language: LANGUAGE, properties: PROPERTIES }, body.fields)! : [...PROPERTIES];
      const keys = keysOf(body.sortedBy);
      const { qb: filtered } = await narrowed(request, body.query, body.scope, clock());
      const tenant = request.tenant;
      const batch = (cursor: Record<string, unknown> | null): Promise<Record<string, unknown>[]> => {
        const q = filtered.clone().select(`${T}.*`);
        if (cursor) applyAfter(q, T, keys, cursor);
        applySort(q, T, keys);
        return q.limit(CSV_BATCH) as Promise<Record<string, unknown>[]>;
      };
      const first = await batch(null);
      const lines = () =>
        keysetCsv(properties, first, CSV_BATCH, batch, async (rows) =>
          (await ctx.store.objectsOfRows(tenant, rows)).map((object) => {
            const o = object as unknown as Record<string, unknown>;
            return `${properties.map((p) => csvObjectCell(o[p], DATES.has(p))).join(',')}\r\n`;
          }),
        );
      return reply.header('content-type', 'text/csv').header('content-disposition', 'attachment; filename="requests.csv"').send(Readable.from(lines(), { objectMode: false }));
    },
  });

  app.get(`${BASE}/search/dictionary`, {
    config,
    schema: { tags, summary: 'Fields, operators and specials of the request query language (HRQL)' },
    handler: async () => queryDictionary(LANGUAGE),
  });
}

const pick = (object: Record<string, unknown>, properties: readonly string[] | null): Record<string, unknown> => {
  if (!properties) return object;
  const out: Record<string, unknown> = {};
  for (const p of properties) if (object[p] !== undefined) out[p] = object[p];
  return out;
};
