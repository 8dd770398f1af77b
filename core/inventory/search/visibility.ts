import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { applyQuery, parseQuery } from '../../query/index.js';
import type { QueryNode } from '../../query/types.js';
import type { InventoryContext } from '../index.js';
import { CERTIFICATE_LANGUAGE } from '../language.js';

export const SEARCH_CERTIFICATES = 'search:certificates';

/**
 * The certificates a principal may see (issue 6 item 4): the filters of the permissions covering
 * `search:certificates`, OR-ed together, AND-ed into every search, aggregate, CSV and get. `null` =
 * no filter (everything). A stored filter that no longer parses admits nothing (fail closed) and is
 * logged, so a broken filter never widens what someone sees.
 */
export function visibilityFilters(ctx: InventoryContext, request: FastifyRequest): QueryNode[] | null {
  const principal = request.principal;
  if (!principal) return [];
  const filters = principal.permissions.filtersFor(SEARCH_CERTIFICATES);
  if (filters === null) return null;
  const parsed: QueryNode[] = [];
  for (const filter of filters) {
    try {
      parsed.push(parseQuery(filter, CERTIFICATE_LANGUAGE));
    } catch (err) {
      ctx.logger.warn({ principal: request.principal?.identifier, err: (err as Error).message }, 'permission filter does not parse: it admits nothing');
    }
  }
  return parsed;
}

/** Narrows `qb` (on inv_certificates) to what `filters` admit; `[]` admits nothing. */
export function applyVisibility(qb: Knex.QueryBuilder, filters: QueryNode[] | null, ctx: { knex: Knex; now: number; tenant: string }): void {
  if (filters === null) return;
  if (filters.length === 0) {
    qb.whereRaw('1 = 0');
    return;
  }
  const table = CERTIFICATE_LANGUAGE.table;
  qb.where((outer) => {
    for (const filter of filters) outer.orWhere((inner) => void applyQuery(inner, filter, CERTIFICATE_LANGUAGE, { knex: ctx.knex, now: ctx.now, table, tenant: ctx.tenant }));
  });
}

/** Whether the caller's search filters admit one certificate (GET by id or PEM). */
export async function certificateVisible(ctx: InventoryContext, request: FastifyRequest, certificateId: string): Promise<boolean> {
  const filters = visibilityFilters(ctx, request);
  if (filters === null) return true;
  const table = CERTIFICATE_LANGUAGE.table;
  const qb = ctx.knex(table).select(`${table}.id`).where(`${table}.tenant`, request.tenant).andWhere(`${table}.id`, certificateId).first();
  applyVisibility(qb, filters, { knex: ctx.knex, now: ctx.clock(), tenant: request.tenant });
  return (await qb) !== undefined;
}
