import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { applyQuery, parseQuery } from '../../query/index.js';
import type { QueryLanguage, QueryNode } from '../../query/types.js';

/**
 * What a search permission's filters let a principal see of one table (`search:events` filtered by
 * `module equals "pki"`, say): the filters of the covering permissions, parsed in the table's language,
 * OR-ed and AND-ed into every search, CSV and get, as the inventory does for certificates. No covering
 * filter → everything; a stored filter that does not parse admits nothing (fail closed) and is logged.
 */
export function tableVisibility(
  qb: Knex.QueryBuilder,
  request: FastifyRequest,
  ctx: { language: QueryLanguage; permission: string; knex: Knex; now: number; logger: { warn: (o: object, m: string) => void } },
): void {
  const filters = request.principal ? request.principal.permissions.filtersFor(ctx.permission) : [];
  if (filters === null) return;
  const parsed: QueryNode[] = [];
  for (const filter of filters) {
    try {
      parsed.push(parseQuery(filter, ctx.language));
    } catch (err) {
      ctx.logger.warn({ principal: request.principal?.identifier, permission: ctx.permission, err: (err as Error).message }, 'permission filter does not parse: it admits nothing');
    }
  }
  if (parsed.length === 0) {
    qb.whereRaw('1 = 0');
    return;
  }
  const table = ctx.language.table;
  qb.where((outer) => {
    for (const filter of parsed) outer.orWhere((inner) => void applyQuery(inner, filter, ctx.language, { knex: ctx.knex, now: ctx.now, table, tenant: request.tenant }));
  });
}
