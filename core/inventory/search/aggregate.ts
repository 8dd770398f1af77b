import type { Knex } from 'knex';
import type { QueryLanguage } from '../../query/types.js';
import type { AggregateBody } from './body.js';
import { invalid, resolveElement } from './elements.js';

export interface AggregateItem {
  _id: Record<string, unknown>;
  count: number;
}

const HAVING: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '=', ne: '<>' };
export const DEFAULT_AGGREGATE_LIMIT = 1000;

/**
 * Adds the GROUP BY of an aggregate to `qb` (already narrowed by the query and visibility): each
 * groupBy element becomes a selected expression `g<i>`:
 * - a column field → the column;
 * - `status` → the derived status (revoked, else expired when not_after ≤ now, else valid);
 * - a parametric side field (`label.env`, `metadata.x`) → LEFT JOIN on its key, NULL when absent.
 * Returns the expressions' names in order (the `_id` keys are the elements as the client wrote them).
 */
export function applyGroupBy(qb: Knex.QueryBuilder, knex: Knex, language: QueryLanguage, body: AggregateBody, now: number): string[] {
  const table = language.table;
  const aliases: string[] = [];
  body.groupBy.forEach((element, i) => {
    const alias = `g${i}`;
    aliases.push(alias);
    if (element === 'status') {
      qb.select(
        knex.raw(`CASE WHEN ?? = ? THEN 'revoked' WHEN ?? <= ? THEN 'expired' ELSE 'valid' END AS ??`, [`${table}.revoked`, true, `${table}.not_after`, now, alias]),
      );
      return;
    }
    const resolved = resolveElement(language, element);
    if (!resolved || !resolved.field.groupable) throw invalid(`Cannot group by "${element}"`);
    const { field, key } = resolved;
    if (field.storage.kind === 'column') {
      qb.select(knex.raw('?? AS ??', [`${table}.${field.storage.column}`, alias]));
      return;
    }
    const storage = field.storage;
    if (storage.kind !== 'side') throw invalid(`Cannot group by "${element}"`);
    if (!field.parametric || key === undefined || !storage.keyColumn) throw invalid(`Cannot group by "${element}": name a key (e.g. ${field.name}.<key>)`);
    const side = `s${i}`;
    qb.leftJoin(`${storage.table} as ${side}`, (join) => {
      join.on(`${side}.${storage.foreignKey}`, '=', `${table}.${language.idColumn}`).andOn(`${side}.${storage.keyColumn}`, '=', knex.raw('?', [key]));
    });
    qb.select(knex.raw('?? AS ??', [`${side}.${storage.valueColumn}`, alias]));
  });
  qb.count({ count: '*' });
  qb.groupBy(aliases);
  if (body.having) qb.havingRaw(`COUNT(*) ${HAVING[body.having.operator]} ?`, [body.having.value]);
  return aliases;
}

export function applyAggregateOrder(qb: Knex.QueryBuilder, aliases: readonly string[], sortOrder: string | null | undefined): void {
  switch (sortOrder ?? 'Desc') {
    case 'Asc':
      qb.orderBy('count', 'asc');
      break;
    case 'KeyAsc':
    case 'KeyDesc':
      for (const a of aliases) qb.orderBy(a, sortOrder === 'KeyAsc' ? 'asc' : 'desc');
      return;
    default:
      qb.orderBy('count', 'desc');
  }
  for (const a of aliases) qb.orderBy(a, 'asc');
}

export function aggregateItems(rows: Record<string, unknown>[], body: AggregateBody, aliases: readonly string[]): AggregateItem[] {
  return rows.map((row) => {
    const id: Record<string, unknown> = {};
    aliases.forEach((alias, i) => {
      id[body.groupBy[i]!] = row[alias] ?? null;
    });
    return { _id: id, count: Number(row.count) };
  });
}
