import type { Knex } from 'knex';
import type { Engine } from './engine.js';

export type SortDir = 'asc' | 'desc';

/** Agenda's SortDirection: 'asc' is ascending, anything else descending (as the PostgreSQL backend reads it). */
export const sortDir = (dir: string | undefined, fallback: SortDir): SortDir => (dir === undefined ? fallback : dir === 'asc' ? 'asc' : 'desc');

/**
 * Job names (and other keys) compare exactly on every engine, as on PostgreSQL. MySQL/MariaDB compare with
 * the column's collation, typically case-insensitive (utf8mb4_general_ci): 'Report' would match 'report'. So
 * on MySQL an equality keeps the plain comparison (it can use the index) and adds a binary-collation one.
 */
const mysqlExact = (placeholder: string): string => `CAST(${placeholder} AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_bin`;

export function whereTextEquals(qb: Knex.QueryBuilder, engine: Engine, column: string, value: string): void {
  qb.where(column, value);
  if (engine === 'mysql') qb.whereRaw(`?? = ${mysqlExact('?')}`, [column, value]);
}

export function whereTextIn(qb: Knex.QueryBuilder, engine: Engine, column: string, values: readonly string[]): void {
  qb.whereIn(column, [...values]);
  if (engine === 'mysql' && values.length > 0) {
    qb.whereRaw(`?? IN (${values.map(() => mysqlExact('?')).join(', ')})`, [column, ...values]);
  }
}

export function whereTextNotIn(qb: Knex.QueryBuilder, engine: Engine, column: string, values: readonly string[]): void {
  if (engine === 'mysql' && values.length > 0) {
    qb.whereRaw(`?? NOT IN (${values.map(() => mysqlExact('?')).join(', ')})`, [column, ...values]);
  } else {
    qb.whereNotIn(column, [...values]);
  }
}

/** A column as an exact (binary) string, for DISTINCT and ORDER BY: byte order everywhere, like SQLite and PostgreSQL's C collation. */
export function exactColumn(knex: Knex, engine: Engine, column: string): Knex.Raw {
  return engine === 'mysql' ? knex.raw('CONVERT(?? USING utf8mb4) COLLATE utf8mb4_bin', [column]) : knex.raw('??', [column]);
}

/**
 * ORDER BY column dir NULLS LAST on every engine (MySQL has no NULLS LAST; SQLite and MySQL sort NULLs
 * first ascending): order by "is null" first, false before true.
 */
export function orderNullsLast(qb: Knex.QueryBuilder, column: string, dir: SortDir): void {
  qb.orderByRaw('(?? IS NULL)', [column]).orderBy(column, dir);
}

/** LIKE with the search text taken literally (its % and _ escaped) and case-insensitively on every engine. */
export function whereContainsText(qb: Knex.QueryBuilder, column: string, text: string): void {
  const escaped = text.replace(/[!%_]/g, (c) => `!${c}`);
  qb.whereRaw("LOWER(??) LIKE LOWER(?) ESCAPE '!'", [column, `%${escaped}%`]);
}

/** Rows affected by an UPDATE/DELETE, as knex reports them (a number on every supported client). */
export const affected = (result: unknown): number => (typeof result === 'number' ? result : Number(result) || 0);
