import type { Knex } from 'knex';
import type { QueryLanguage } from '../../query/types.js';
import { descending, type SearchBody } from './body.js';
import { invalid, resolveElement } from './elements.js';

/** One ORDER BY key: a main-table column, its direction. The id always ends the list (stable pages). */
export interface SortKey {
  column: string;
  desc: boolean;
}

/**
 * `sortedBy` → ORDER BY keys. Only fields stored in a main-table column sort (a multi-valued field
 * such as a SAN or a label has no single value to sort by) → HQL-002 otherwise. Default: by id,
 * which is creation order and the primary key, so the default page is an index range read.
 */
export function sortKeysOf(language: QueryLanguage, sortedBy: SearchBody['sortedBy']): SortKey[] {
  const keys: SortKey[] = [];
  for (const entry of sortedBy ?? []) {
    const resolved = resolveElement(language, entry.element);
    if (!resolved) throw invalid(`Unknown sort element "${entry.element}"`);
    const { field } = resolved;
    if (field.storage.kind !== 'column' || !field.sortable) throw invalid(`Cannot sort by "${entry.element}"`);
    if (field.storage.column === language.idColumn) {
      keys.push({ column: language.idColumn, desc: descending(entry.order) });
      return keys;
    }
    if (!keys.some((k) => k.column === (field.storage as { column: string }).column)) keys.push({ column: field.storage.column, desc: descending(entry.order) });
  }
  keys.push({ column: language.idColumn, desc: false });
  return keys;
}

/** Whether the order is the id's alone (a page a side-table join can hand over in order: querySource). */
export const idOrdered = (language: QueryLanguage, keys: readonly SortKey[]): boolean => keys[0]?.column === language.idColumn;

/** How this query names its id column (querySource's idRef); `<table>.<column>` when absent. */
export interface IdRef {
  column: string;
  ref: string;
}

const refOf = (table: string, key: SortKey, id: IdRef | undefined): string => (id && key.column === id.column ? id.ref : `${table}.${key.column}`);

export function applySort(qb: Knex.QueryBuilder, table: string, keys: readonly SortKey[], idRef?: IdRef): void {
  for (const key of keys) qb.orderBy(refOf(table, key, idRef), key.desc ? 'desc' : 'asc');
}

/**
 * Rows strictly after `cursor` in the order of `keys` (keyset pagination for CSV exports: each batch
 * is an index range read, whatever its depth, and no connection is held between batches). NULL sorts
 * first ascending and last descending on both SQLite and MySQL, and the comparison follows that.
 */
export function applyAfter(qb: Knex.QueryBuilder, table: string, keys: readonly SortKey[], cursor: Record<string, unknown>, idRef?: IdRef): void {
  const after = (w: Knex.QueryBuilder, i: number): void => {
    const key = keys[i]!;
    const column = refOf(table, key, idRef);
    const value = cursor[key.column];
    const last = i === keys.length - 1;
    w.where((strict) => {
      if (value === null || value === undefined) {
        if (key.desc) strict.whereRaw('1 = 0');
        else strict.whereNotNull(column);
      } else if (key.desc) strict.where(column, '<', value as Knex.Value).orWhereNull(column);
      else strict.where(column, '>', value as Knex.Value);
    });
    if (last) return;
    w.orWhere((equal) => {
      if (value === null || value === undefined) equal.whereNull(column);
      else equal.where(column, value as Knex.Value);
      equal.andWhere((rest) => after(rest, i + 1));
    });
  };
  qb.andWhere((w) => after(w, 0));
}
