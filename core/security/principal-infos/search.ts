import type { Knex } from 'knex';
import { INFO_COLUMNS, withGroups, type InfoRow, type PrincipalInfo } from './store.js';

export interface PrincipalSearch {
  /** A substring of the identifier, name or email (case-insensitive; ASCII only on SQLite). */
  query?: string | null;
  /** Members of at least one of these roles. */
  roles?: string[] | null;
  /** Members of at least one of these teams. */
  teams?: string[] | null;
  /** 1-based (client-compat §4). */
  pageIndex?: number | null;
  pageSize?: number | null;
  withCount?: boolean | null;
}

export interface SearchPage {
  results: PrincipalInfo[];
  pageIndex: number;
  pageSize: number;
  hasMore: boolean;
  count?: number;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** LIKE with the user's text taken literally: `!` escapes `%`, `_` and itself on every engine. */
const containing = (text: string): string => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

/** Principal information matching the criteria, ordered by identifier, one page (+1 row to know hasMore). */
export async function searchPrincipalInfos(knex: Knex, tenant: string, search: PrincipalSearch): Promise<SearchPage> {
  const pageIndex = search.pageIndex ?? 1;
  const pageSize = search.pageSize ?? DEFAULT_PAGE_SIZE;
  const filtered = (): Knex.QueryBuilder => {
    const q = knex('security_principal_infos').where({ tenant });
    if (search.query) {
      const pattern = containing(search.query);
      q.where((w) => {
        for (const column of ['identifier', 'name', 'email']) w.orWhereRaw('LOWER(??) LIKE ? ESCAPE ?', [column, pattern, '!']);
      });
    }
    for (const [kind, names] of [['role', search.roles], ['team', search.teams]] as const) {
      if (!names || names.length === 0) continue;
      q.whereIn('identifier', knex('security_memberships').where({ tenant, kind }).whereIn('group_name', names).select('identifier'));
    }
    return q;
  };
  const rows = (await filtered()
    .select(...INFO_COLUMNS)
    .orderBy('identifier')
    .limit(pageSize + 1)
    .offset((pageIndex - 1) * pageSize)) as InfoRow[];
  const hasMore = rows.length > pageSize;
  const page: SearchPage = { results: await withGroups(knex, tenant, rows.slice(0, pageSize)), pageIndex, pageSize, hasMore };
  if (search.withCount) {
    const counted = (await filtered().count({ count: '*' }).first()) as { count: number | string } | undefined;
    page.count = Number(counted?.count ?? 0);
  }
  return page;
}
