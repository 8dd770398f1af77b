import { invalid } from './elements.js';

/**
 * Search, CSV and aggregate bodies (client-compat §4). Tolerant where clients differ (`query: null`,
 * pageIndex 0 from clients that omit it, `scope` sent by request searches), strict elsewhere: unknown
 * members are refused by the route schemas, so a typo is not silently ignored.
 */
export interface SearchBody {
  query?: string | null;
  fields?: string[] | null;
  sortedBy?: { element: string; order?: string | null }[] | null;
  pageIndex?: number | null;
  pageSize?: number | null;
  withCount?: boolean | null;
  scope?: string | null;
}

export interface AggregateBody {
  query?: string | null;
  groupBy: string[];
  having?: { operator: string; value: number } | null;
  sortOrder?: string | null;
  withCount?: boolean | null;
  limit?: number | null;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
export const MAX_QUERY_LENGTH = 1_000_000;

const sortedBy = {
  type: ['array', 'null'],
  maxItems: 8,
  items: {
    type: 'object',
    required: ['element'],
    additionalProperties: false,
    properties: { element: { type: 'string', minLength: 1, maxLength: 512 }, order: { type: ['string', 'null'], enum: ['Asc', 'Desc', 'asc', 'desc', 'ASC', 'DESC', null] } },
  },
} as const;

export const searchBodySchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    query: { type: ['string', 'null'], maxLength: MAX_QUERY_LENGTH },
    fields: { type: ['array', 'null'], maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 512 } },
    sortedBy,
    pageIndex: { type: ['integer', 'null'], minimum: 0, maximum: 10_000_000 },
    pageSize: { type: ['integer', 'null'], minimum: 1, maximum: MAX_PAGE_SIZE },
    withCount: { type: ['boolean', 'null'] },
    scope: { type: ['string', 'null'], enum: ['search', 'manage', 'self', null] },
  },
} as const;

export const aggregateBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['groupBy'],
  properties: {
    query: { type: ['string', 'null'], maxLength: MAX_QUERY_LENGTH },
    groupBy: { type: 'array', minItems: 1, maxItems: 4, items: { type: 'string', minLength: 1, maxLength: 512 } },
    having: {
      type: ['object', 'null'],
      required: ['operator', 'value'],
      additionalProperties: false,
      properties: { operator: { type: 'string', enum: ['gt', 'gte', 'lt', 'lte', 'eq', 'ne'] }, value: { type: 'integer' } },
    },
    sortOrder: { type: ['string', 'null'], enum: ['Asc', 'Desc', 'KeyAsc', 'KeyDesc', null] },
    withCount: { type: ['boolean', 'null'] },
    limit: { type: ['integer', 'null'], minimum: 1, maximum: 10_000 },
  },
} as const;

/** Page parameters: 1-based pageIndex (0 or absent → 1), pageSize 1..1000 (absent → 50). */
export function pageOf(body: SearchBody): { pageIndex: number; pageSize: number } {
  const pageIndex = body.pageIndex && body.pageIndex > 0 ? body.pageIndex : 1;
  const pageSize = body.pageSize ?? DEFAULT_PAGE_SIZE;
  if (pageSize > MAX_PAGE_SIZE) throw invalid(`pageSize is at most ${MAX_PAGE_SIZE}`);
  return { pageIndex, pageSize };
}

export const descending = (order: string | null | undefined): boolean => (order ?? 'Asc').toLowerCase() === 'desc';

/** The answer of every search route (client-compat §4): `count` only when the body asked `withCount`. */
export const searchPageSchema = {
  type: 'object',
  required: ['results', 'pageIndex', 'pageSize', 'hasMore'],
  properties: {
    results: { type: 'array', items: { type: 'object', additionalProperties: true } },
    pageIndex: { type: 'integer' },
    pageSize: { type: 'integer' },
    hasMore: { type: 'boolean' },
    count: { type: 'integer' },
  },
} as const;
