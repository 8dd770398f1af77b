import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { applyQuery, sideEqualityOf, sideMatchesOf } from './compile.js';
import type { CompileContext, QueryLanguage, QueryNode } from './types.js';

/** The rows of a language's main table matched by a query, and how its id is to be ordered. */
export interface QuerySource {
  /** Rows of the main table (named `ctx.table`) in the tenant, narrowed by the query: select from it. */
  qb: Knex.QueryBuilder;
  /** What ORDER BY / keyset conditions on the id must name: `<table>.<id>`, or the side table's key when driven. */
  idRef: string;
  /** Whether the rows are read by joining from a side table (see querySource). */
  driven: boolean;
}

const DRIVER = 'cwd';

/**
 * The main table's rows in `ctx.tenant` matched by `ast`, with the query applied (bound parameters only).
 *
 * When the caller orders by id alone (`idOrdered`) and the whole query is one equality on a `distinct`
 * side field (`label.env equals "prod"`), the rows are read by joining from the side table: its
 * `(tenant, key, value, id)` index hands the matching ids over in order, so a page stops after its rows
 * are found. The `id IN (…)` form makes MariaDB collect and sort every match first (170,000 of them for
 * a common label at 1M certificates). The join order is forced (STRAIGHT_JOIN on MySQL, CROSS JOIN on
 * SQLite), `distinct` guarantees one side row per main row, and the order must name `idRef`.
 */
export function querySource(ast: QueryNode, language: QueryLanguage, ctx: CompileContext & { tenant: string }, idOrdered: boolean): QuerySource {
  const { knex, table, tenant } = ctx;
  const main = table === language.table ? table : `${language.table} as ${table}`;
  const idRef = `${table}.${language.idColumn}`;
  const driver = idOrdered ? sideEqualityOf(ast, language, ctx) : undefined;
  if (!driver) {
    const qb = knex(main).where(`${table}.${language.tenantColumn}`, tenant);
    applyQuery(qb, ast, language, ctx);
    return { qb, idRef, driven: false };
  }
  const { storage, key, value } = driver;
  const at = (column: string): string => `${DRIVER}.${column}`;
  const tenantColumn = at(storage.tenantColumn ?? 'tenant');
  const qb = knex
    .from(`${storage.table} as ${DRIVER}`)
    .joinRaw(`${isMysql(knex) ? 'STRAIGHT_JOIN' : 'CROSS JOIN'} ${table === language.table ? '??' : '?? AS ??'} ON ?? = ?? AND ?? = ??`, [
      ...(table === language.table ? [table] : [language.table, table]),
      at(storage.foreignKey),
      idRef,
      tenantColumn,
      `${table}.${language.tenantColumn}`,
    ])
    .where(tenantColumn, tenant);
  if (storage.keyColumn) qb.where(at(storage.keyColumn), key!);
  for (const [column, fixed] of Object.entries(storage.fixed ?? {})) qb.where(at(column), fixed);
  qb.where(at(storage.valueColumn), value).where(`${table}.${language.tenantColumn}`, tenant);
  return { qb, idRef: at(storage.foreignKey), driven: true };
}

/**
 * Side matches from which a query ordered by id is cheaper read by walking the main table's id order
 * and probing each row (`EXISTS`, stopping after a page) than by collecting and sorting every match
 * (`id IN (…)`). A page costs about (offset + page) × rows / matches probes walking, and `matches`
 * reads plus a sort collecting: at 1,000,000 certificates and a 50-row page they cross near 7,000
 * matches, and below a few thousand the walk risks reading most of the table.
 */
export const DENSE_SIDE_MATCHES = 5000;

/**
 * Whether to compile `ast` with `walk` (CompileContext): the order is by id alone, the query is one
 * positive range condition on a side field that is not answered by a side-driven join (querySource),
 * and a count bounded to DENSE_SIDE_MATCHES rows of the side index says the matches are dense. The
 * count is one index range read of at most that many rows.
 */
export async function denseSideWalk(ast: QueryNode, language: QueryLanguage, ctx: CompileContext & { tenant: string }, idOrdered: boolean): Promise<boolean> {
  if (!idOrdered || sideEqualityOf(ast, language, ctx)) return false;
  const matches = sideMatchesOf(ast, language, ctx);
  if (!matches) return false;
  const row = (await ctx.knex.from(matches.limit(DENSE_SIDE_MATCHES).as('cwdense')).count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0) >= DENSE_SIDE_MATCHES;
}
