import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { denseSideWalk, parseQuery, queryDictionary, querySource } from '../../query/index.js';
import type { InventoryContext } from '../index.js';
import { CERTIFICATE_LANGUAGE } from '../language.js';
import { columnsFor, DOCUMENT_COLUMNS_FOR, type CertificateRow } from '../repository.js';
import { aggregateBodySchema, pageOf, searchBodySchema, searchPageSchema, type AggregateBody, type SearchBody } from './body.js';
import { aggregateItems, applyAggregateOrder, applyGroupBy, DEFAULT_AGGREGATE_LIMIT } from './aggregate.js';
import { csvLines, csvRow, DEFAULT_CSV_FIELDS, keysetCsv } from './csv.js';
import { permissionsOf } from '../permissions.js';
import type { CertificateObject } from '../types.js';
import { invalid } from './elements.js';
import { projectionOf } from './projection.js';
import { applyAfter, applySort, idOrdered, sortKeysOf, type IdRef, type SortKey } from './sort.js';
import { applyVisibility, SEARCH_CERTIFICATES, visibilityFilters } from './visibility.js';

const CAPABILITY = 'webra' as const;
const ACCESS = { permission: SEARCH_CERTIFICATES } as const;
const BASE = '/api/v1/certificates';
const tags = ['certificates'];
const LANGUAGE = CERTIFICATE_LANGUAGE;
const T = LANGUAGE.table;
/** Rows per CSV batch: one keyset read and one read per side table each. */
const CSV_BATCH = 1000;

/** What to load for a projection: `permissions` are computed from each result's module and profile. */
const loaded = (projection: ReadonlySet<string> | null): ReadonlySet<string> | null =>
  projection?.has('permissions') ? new Set([...projection, 'module', 'profile']) : projection;

/**
 * POST /api/v1/certificates/search, /aggregate, /csv and GET /search/dictionary: HCQL compiled by the
 * query engine (bound parameters only), AND-ed with the caller's permission filters.
 */
export async function searchRoutes(app: FastifyInstance, ctx: InventoryContext): Promise<void> {
  const { knex, repository } = ctx;

  /**
   * inv_certificates narrowed by the query and by what the caller may see; `keys`: the order the rows
   * will be read in (pages, CSV), which the source's `id` must name; absent for aggregates.
   */
  const narrowed = async (
    request: FastifyRequest,
    query: string | null | undefined,
    now: number,
    keys?: readonly SortKey[],
  ): Promise<{ qb: Knex.QueryBuilder; id: IdRef; everything: boolean }> => {
    const ast = parseQuery(query, LANGUAGE);
    const filters = visibilityFilters(ctx, request);
    const byId = keys !== undefined && idOrdered(LANGUAGE, keys);
    const base = { knex, now, table: T, tenant: request.tenant };
    const source = querySource(ast, LANGUAGE, { ...base, walk: await denseSideWalk(ast, LANGUAGE, base, byId) }, byId);
    applyVisibility(source.qb, filters, { knex, now, tenant: request.tenant });
    // Every certificate of the tenant: neither the query nor a permission filter narrows it.
    const everything = ast.kind === 'all' && filters === null;
    return { qb: source.qb, id: { column: LANGUAGE.idColumn, ref: source.idRef }, everything };
  };

  app.post<{ Body: SearchBody | null }>(`${BASE}/search`, {
    config: { capability: CAPABILITY, access: ACCESS },
    schema: { tags, summary: 'Search certificates (HCQL)', body: searchBodySchema, response: { 200: searchPageSchema } },
    handler: async (request) => {
      const body = request.body ?? {};
      const { pageIndex, pageSize } = pageOf(body);
      const projection = projectionOf(body.fields);
      const keys = sortKeysOf(LANGUAGE, body.sortedBy);
      const now = ctx.clock();
      const { qb: filtered, id } = await narrowed(request, body.query, now, keys);
      const pageQuery = filtered.clone().select(columnsFor(loaded(projection)).map((c) => `${T}.${c}`));
      applySort(pageQuery, T, keys, id);
      const rows = (await pageQuery.limit(pageSize + 1).offset((pageIndex - 1) * pageSize)) as CertificateRow[];
      const hasMore = rows.length > pageSize;
      const results = await repository.objectsOf(request.tenant, rows.slice(0, pageSize), loaded(projection));
      if (projection?.has('permissions')) {
        for (const r of results as (CertificateObject & { permissions?: unknown })[]) {
          r.permissions = permissionsOf(request, r);
          if (!projection.has('module')) delete r.module;
          if (!projection.has('profile')) delete r.profile;
        }
      }
      const page: { results: unknown[]; pageIndex: number; pageSize: number; hasMore: boolean; count?: number } = { results, pageIndex, pageSize, hasMore };
      // Counting is a scan of everything matched: only on request (withCount), never for a plain page.
      // Read without an order (no `keys`): never the per-row walk, which suits a page, not a count of all.
      if (body.withCount) {
        const counted = (await narrowed(request, body.query, now)).qb;
        page.count = Number(((await counted.count({ n: '*' }).first()) as { n: number | string } | undefined)?.n ?? 0);
      }
      return page;
    },
  });

  app.post<{ Body: AggregateBody }>(`${BASE}/aggregate`, {
    config: { capability: CAPABILITY, access: ACCESS },
    schema: {
      tags,
      summary: 'Count certificates by group (HCQL)',
      body: aggregateBodySchema,
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
      const now = ctx.clock();
      const grouped = (await narrowed(request, body.query, now)).qb;
      const aliases = applyGroupBy(grouped, knex, LANGUAGE, body, now);
      const ordered = grouped.clone();
      applyAggregateOrder(ordered, aliases, body.sortOrder);
      const rows = (await ordered.limit(body.limit ?? DEFAULT_AGGREGATE_LIMIT)) as Record<string, unknown>[];
      const answer: { items: ReturnType<typeof aggregateItems>; count?: number } = { items: aggregateItems(rows, body, aliases) };
      if (body.withCount) {
        const counted = (await knex.from(grouped.as('groups')).count({ n: '*' }).first()) as { n: number | string } | undefined;
        answer.count = Number(counted?.n ?? 0);
      }
      return answer;
    },
  });

  app.post<{ Body: SearchBody | null }>(`${BASE}/csv`, {
    config: { capability: CAPABILITY, access: ACCESS },
    schema: { tags, summary: 'Export the certificates a search matches as CSV (streamed)', body: searchBodySchema, produces: ['text/csv'] },
    handler: async (request, reply) => {
      const body = request.body ?? {};
      const properties = body.fields && body.fields.length > 0 ? [...projectionOf(body.fields)!] : [...DEFAULT_CSV_FIELDS];
      if (properties.includes('permissions')) throw invalid('permissions are answered by searches, not in CSV exports');
      const projection = new Set<string>(properties);
      const keys = sortKeysOf(LANGUAGE, body.sortedBy);
      const now = ctx.clock();
      const { qb: filtered, id, everything } = await narrowed(request, body.query, now, keys);
      // Unfiltered and in id order, a batch is every certificate between its first and last id: side rows
      // are then read as one index range (objectsOf `contiguous`) rather than one lookup per id.
      const contiguous = everything && idOrdered(LANGUAGE, keys);
      // Without the PEM or a JSON list (the default columns), lines are written straight from the rows.
      const direct = DOCUMENT_COLUMNS_FOR(projection).length === 0;
      const columns = [...new Set([...columnsFor(projection), ...keys.map((k) => k.column)])].map((c) => `${T}.${c}`);
      const batch = (cursor: CertificateRow | null): Promise<CertificateRow[]> => {
        const q = filtered.clone().select(columns);
        if (cursor) applyAfter(q, T, keys, cursor as unknown as Record<string, unknown>, id);
        applySort(q, T, keys, id);
        return q.limit(CSV_BATCH) as Promise<CertificateRow[]>;
      };
      // The first batch is read before the answer starts, so a bad query or a database failure is
      // still a problem+json answer; later failures can only cut the stream.
      const first = await batch(null);
      const tenant = request.tenant;
      const linesOf = async (rows: CertificateRow[]): Promise<Iterable<string>> => {
        if (direct) return csvLines(properties, rows, await repository.sideTextsOf(tenant, rows.map((r) => r.id), projection, knex, { contiguous }), ctx.clock());
        return (await repository.objectsOf(tenant, rows, projection, knex, { contiguous })).map((o) => csvRow(properties, o));
      };
      const lines = () => keysetCsv(properties, first, CSV_BATCH, batch, linesOf);
      return reply
        .header('content-type', 'text/csv')
        .header('content-disposition', 'attachment; filename="certificates.csv"')
        .send(Readable.from(lines(), { objectMode: false }));
    },
  });

  app.get(`${BASE}/search/dictionary`, {
    config: { capability: CAPABILITY, access: ACCESS },
    schema: { tags, summary: 'Fields, operators and specials of the certificate query language (HCQL)' },
    handler: async () => queryDictionary(LANGUAGE),
  });
}

export type { SortKey };
