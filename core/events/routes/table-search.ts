import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { ID_PATTERN, isId } from '../../db/ids.js';
import type { ProblemError } from '../../errors/index.js';
import type { RouteCapability } from '../../http/route-config.js';
import { pageOf, searchBodySchema, searchPageSchema, type SearchBody } from '../../inventory/search/body.js';
import { csvObjectCell, keysetCsv } from '../../inventory/search/csv.js';
import { invalid, resolveElement } from '../../inventory/search/elements.js';
import { applyAfter, applySort, sortKeysOf, type SortKey } from '../../inventory/search/sort.js';
import { parseQuery, queryDictionary, querySource } from '../../query/index.js';
import { tableVisibility } from './table-visibility.js';
import type { QueryLanguage } from '../../query/types.js';

/** A raw row of the language's table, as knex reads it (column names, unconverted values). */
export type TableRow = Record<string, unknown>;

/**
 * One searchable table behind the four routes every event-like resource has (spec "Events"):
 * POST {base}/search, POST {base}/csv, GET {base}/:id, GET {base}/search/dictionary. Unlike
 * certificates (side tables, derived status, PEM documents), these are plain single-table rows: the
 * language says what is queried and sorted, `objectOf` what a result looks like.
 */
export interface TableSearchSpec {
  base: string;
  tags: string[];
  /** What the rows are, for summaries and messages: `events`, `discovery events`. */
  noun: string;
  capability: RouteCapability;
  /** The dictionary's, when the spec lists it under more capabilities than the other routes. */
  dictionaryCapability?: RouteCapability;
  /** The search permission; its filters (queries in `language`) narrow every route, as for certificates. */
  permission: string;
  language: QueryLanguage;
  /** Every property of a result, in CSV column order. */
  properties: readonly string[];
  /** Properties holding epoch ms: ISO 8601 in CSV, as certificate dates are. */
  dateProperties: readonly string[];
  /** A row → the full result object. */
  objectOf: (row: TableRow) => Record<string, unknown>;
  /**
   * CSV columns of a parametric field (`detail.actorId`): the member's text from the row. Without it a
   * parametric name in `fields` answers the field's whole property.
   */
  memberOf?: (row: TableRow, key: string) => string | undefined;
  /** JSON schema of a result object (GET :id answers it; search results are partial ones). */
  objectSchema: Record<string, unknown>;
  /** ORDER BY when the body has no sortedBy; must end in a unique key (stable pages, CSV keysets). */
  defaultSort: readonly SortKey[];
  csvFilename: string;
  notFound: (id: string) => ProblemError;
}

/** Rows per CSV batch: one keyset read each, so memory stays bounded whatever the export's size. */
const CSV_BATCH = 1000;

/**
 * `fields` → the properties to answer: absent/null = all, `[]` = `_id` only, else the named ones plus
 * `_id`. A name may be a property (`objectType`) or a query name (`object.type`); others are refused.
 */
export function projectionOf(spec: Pick<TableSearchSpec, 'language' | 'properties'>, fields: readonly string[] | null | undefined): string[] | null {
  if (fields === null || fields === undefined) return null;
  const out = new Set<string>(['_id']);
  for (const f of fields) {
    const property = spec.properties.includes(f) ? f : resolveElement(spec.language, f)?.field.property;
    if (!property || !spec.properties.includes(property)) throw invalid(`Unknown field "${f}"`);
    out.add(property);
  }
  return [...out];
}

/**
 * The CSV columns `fields` asks for: properties as for search results, and for a parametric field
 * with a key (`detail.actorId`) a column of that name holding the member's text, when the spec can read
 * members. Absent or empty: every property.
 */
function csvColumns(spec: Pick<TableSearchSpec, 'language' | 'properties' | 'memberOf'>, fields: readonly string[] | null | undefined): { name: string; member?: (row: TableRow) => string | undefined }[] {
  if (!fields || fields.length === 0) return spec.properties.map((name) => ({ name }));
  const memberOf = spec.memberOf;
  // `_id` first, as in search results.
  const columns: { name: string; member?: (row: TableRow) => string | undefined }[] = [{ name: '_id' }];
  for (const f of fields) {
    const resolved = spec.properties.includes(f) ? undefined : resolveElement(spec.language, f);
    if (memberOf && resolved?.field.parametric && resolved.key) {
      const key = resolved.key;
      columns.push({ name: `${resolved.field.name}.${key}`, member: (row) => memberOf(row, key) });
    } else {
      for (const name of projectionOf(spec, [f])!) if (!columns.some((c) => c.name === name)) columns.push({ name });
    }
  }
  return columns;
}

const pick = (object: Record<string, unknown>, properties: readonly string[] | null): Record<string, unknown> => {
  if (!properties) return object;
  const out: Record<string, unknown> = {};
  for (const p of properties) if (object[p] !== undefined) out[p] = object[p];
  return out;
};


export async function registerTableSearch(app: FastifyInstance, spec: TableSearchSpec, deps: { knex: Knex; clock: () => number; logger: { warn: (o: object, m: string) => void } }): Promise<void> {
  const { knex, clock } = deps;
  const { language, base, tags, noun } = spec;
  const T = language.table;
  const config = { capability: spec.capability, access: { permission: spec.permission } };
  const dates = new Set(spec.dateProperties);

  const keysOf = (sortedBy: SearchBody['sortedBy']): SortKey[] => (sortedBy && sortedBy.length > 0 ? sortKeysOf(language, sortedBy) : [...spec.defaultSort]);

  /** The tenant's rows the query and the caller's permission filters match (bound parameters only). */
  const narrowed = (request: FastifyRequest, query: string | null | undefined, now: number): Knex.QueryBuilder => {
    const ast = parseQuery(query, language);
    const { qb } = querySource(ast, language, { knex, now, table: T, tenant: request.tenant }, false);
    tableVisibility(qb, request, { language, permission: spec.permission, knex, now, logger: deps.logger });
    return qb;
  };

  app.post<{ Body: SearchBody | null }>(`${base}/search`, {
    config,
    schema: { tags, summary: `Search ${noun} (${language.name})`, body: searchBodySchema, response: { 200: searchPageSchema } },
    handler: async (request) => {
      const body = request.body ?? {};
      const { pageIndex, pageSize } = pageOf(body);
      const projection = projectionOf(spec, body.fields);
      const keys = keysOf(body.sortedBy);
      const filtered = narrowed(request, body.query, clock());
      const pageQuery = filtered.clone().select(`${T}.*`);
      applySort(pageQuery, T, keys);
      const rows = (await pageQuery.limit(pageSize + 1).offset((pageIndex - 1) * pageSize)) as TableRow[];
      const hasMore = rows.length > pageSize;
      const results = rows.slice(0, pageSize).map((row) => pick(spec.objectOf(row), projection));
      const page: { results: unknown[]; pageIndex: number; pageSize: number; hasMore: boolean; count?: number } = { results, pageIndex, pageSize, hasMore };
      // A count scans every match: only on request.
      if (body.withCount) page.count = Number(((await filtered.clone().count({ n: '*' }).first()) as { n: number | string } | undefined)?.n ?? 0);
      return page;
    },
  });

  app.post<{ Body: SearchBody | null }>(`${base}/csv`, {
    config,
    schema: { tags, summary: `Export the ${noun} a search matches as CSV (streamed)`, body: searchBodySchema, produces: ['text/csv'] },
    handler: async (request, reply) => {
      const body = request.body ?? {};
      const columns = csvColumns(spec, body.fields);
      const keys = keysOf(body.sortedBy);
      const filtered = narrowed(request, body.query, clock());
      const batch = (cursor: TableRow | null): Promise<TableRow[]> => {
        const q = filtered.clone().select(`${T}.*`);
        if (cursor) applyAfter(q, T, keys, cursor);
        applySort(q, T, keys);
        return q.limit(CSV_BATCH) as Promise<TableRow[]>;
      };
      // Read before the answer starts: a bad query or a database failure is still a problem+json answer.
      const first = await batch(null);
      const lines = () =>
        keysetCsv(columns.map((c) => c.name), first, CSV_BATCH, batch, (rows) =>
          rows.map((row) => {
            const object = spec.objectOf(row);
            return `${columns.map((c) => (c.member ? csvObjectCell(c.member(row) ?? null, false) : csvObjectCell(object[c.name], dates.has(c.name)))).join(',')}\r\n`;
          }),
        );
      return reply
        .header('content-type', 'text/csv')
        .header('content-disposition', `attachment; filename="${spec.csvFilename}"`)
        .send(Readable.from(lines(), { objectMode: false }));
    },
  });

  app.get(`${base}/search/dictionary`, {
    config: { ...config, capability: spec.dictionaryCapability ?? spec.capability },
    schema: { tags, summary: `Fields and operators of the ${noun} query language (${language.name})` },
    handler: async () => queryDictionary(language),
  });

  // Static siblings (`search/dictionary`, `integrity/`) win over the parameter in fastify's router.
  app.get<{ Params: { id: string } }>(`${base}/:id`, {
    config,
    schema: {
      tags,
      summary: `Get one of the ${noun} by _id`,
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: ID_PATTERN, description: '_id (24 hex characters)' } } },
      response: { 200: spec.objectSchema },
    },
    handler: async (request) => {
      const id = request.params.id.toLowerCase();
      if (!isId(id)) throw spec.notFound(id);
      const qb = knex(T).where(`${T}.${language.tenantColumn}`, request.tenant).andWhere(`${T}.${language.idColumn}`, id).first();
      // Outside the caller's filters, the row does not exist for them (no hint that it does).
      tableVisibility(qb, request, { language, permission: spec.permission, knex, now: clock(), logger: deps.logger });
      const row = (await qb) as TableRow | undefined;
      if (!row) throw spec.notFound(id);
      return spec.objectOf(row);
    },
  });
}
