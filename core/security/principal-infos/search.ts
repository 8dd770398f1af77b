import type { Knex } from 'knex';
import { ProblemError } from '../../errors/index.js';
import { INFO_COLUMNS, withGroups, type InfoRow, type PrincipalInfo } from './store.js';

/** One `sortedBy` entry: horizon-go v2 SortElement {element, order}, both required there. */
export interface SortElement {
  element?: string | null;
  order?: string | null;
}

/**
 * A principal information search. Every criterion given narrows the results (AND); null, "" and [] are no
 * criterion. Two vocabularies: Certwright's (`query`, `roles`, `teams`) and Horizon's PrincipalInfoSearchQuery
 * (`identifier`, `contact`, `role`, `team`, `strictSearch`, `sortedBy`: horizon-go v2
 * docs/PrincipalInfoSearchQuery.md).
 */
export interface PrincipalSearch {
  /** A substring of the identifier, name or email (case-insensitive; ASCII only on SQLite). */
  query?: string | null;
  /** Members of at least one of these roles. */
  roles?: string[] | null;
  /** Members of at least one of these teams. */
  teams?: string[] | null;
  /** strictSearch: this identifier exactly (case-sensitive, as identifiers are); else a case-insensitive substring of it. */
  identifier?: string | null;
  /** A case-insensitive substring of the email, strictSearch or not (Horizon's strictSearch covers role, identifier and team only). */
  contact?: string | null;
  /** strictSearch: members of the role of exactly this name; else of a role whose name contains it (case-insensitive). */
  role?: string | null;
  /** As `role`, for teams. */
  team?: string | null;
  /** Horizon's default: false. */
  strictSearch?: boolean | null;
  /** Sort keys, first first; identifier always breaks ties. Default: by identifier. */
  sortedBy?: SortElement[] | null;
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
export const MAX_SORT_ELEMENTS = 8;

const TABLE = 'security_principal_infos';

/**
 * What `sortedBy[].element` may name: the answer's properties that have one value to sort by. Horizon's own
 * are `identifier` and `role` (horizon-mcp src/tools/config/principal-infos.ts SORTABLE); `role`/`team` sort
 * by a principal's first group name ascending and its last descending (a multi-valued field sorts as MongoDB
 * sorts an array), a principal with none first ascending and last descending (NULL's place on both engines).
 * Strings other than identifiers and group names sort case-insensitively (ASCII), identically on both engines.
 */
export const SORT_ELEMENTS = ['identifier', 'name', 'email', 'contact', 'role', 'team', 'enabled', 'creationDate'] as const;
type SortKey = { element: (typeof SORT_ELEMENTS)[number]; desc: boolean };

const invalid = (message: string): ProblemError => new ProblemError('SEC-PRINC-002', { message: `The principal information search is not valid: ${message}` });

/** LIKE with the user's text taken literally: `!` escapes `%`, `_` and itself on every engine. */
const containing = (text: string): string => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

/** Longest value each text criterion can match (the stored columns' lengths): a longer one is a mistake. */
const MAX_LENGTHS = { identifier: 191, contact: 320, role: 191, team: 191 } as const;

/** The sort keys of `sortedBy`, checked: a known element, an order Asc or Desc (any case; absent or null: Asc). */
export function sortKeysOf(sortedBy: SortElement[] | null | undefined): SortKey[] {
  const entries = sortedBy ?? [];
  if (entries.length > MAX_SORT_ELEMENTS) throw invalid(`sortedBy has ${entries.length} elements, at most ${MAX_SORT_ELEMENTS}`);
  const keys: SortKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const element = entry.element;
    if (!element) throw invalid(`sortedBy[${i}].element is missing`);
    if (!(SORT_ELEMENTS as readonly string[]).includes(element)) throw invalid(`sortedBy[${i}].element "${element}" is not one of ${SORT_ELEMENTS.join(', ')}`);
    const order = entry.order ?? 'Asc';
    if (/^key(asc|desc)$/i.test(order)) throw invalid(`sortedBy[${i}].order "${order}": ${element} is not a key-value element, use Asc or Desc`);
    if (!/^(asc|desc)$/i.test(order)) throw invalid(`sortedBy[${i}].order "${order}" is not Asc or Desc`);
    const el = element as SortKey['element'];
    // A repeated element (or contact after email, its other name) adds nothing: the first one sorts.
    const same = (k: SortKey) => k.element === el || (['email', 'contact'].includes(k.element) && ['email', 'contact'].includes(el));
    if (!keys.some(same)) keys.push({ element: el, desc: order.toLowerCase() === 'desc' });
  }
  return keys;
}

/** Checks the text criteria (SEC-PRINC-002 for one longer than any stored value). */
function checkCriteria(search: PrincipalSearch): void {
  for (const [key, max] of Object.entries(MAX_LENGTHS) as [keyof typeof MAX_LENGTHS, number][]) {
    const value = search[key];
    if (value && value.length > max) throw invalid(`${key} is ${value.length} characters long, at most ${max}`);
  }
}

function applySort(q: Knex.QueryBuilder, keys: SortKey[]): void {
  for (const { element, desc } of keys) {
    const direction = desc ? 'desc' : 'asc';
    switch (element) {
      case 'identifier':
        q.orderBy('identifier', direction);
        break;
      case 'name':
        q.orderByRaw(`LOWER(??) ${direction}`, ['name']);
        break;
      case 'email':
      case 'contact':
        q.orderByRaw(`LOWER(??) ${direction}`, ['email']);
        break;
      case 'enabled':
        q.orderBy('enabled', direction);
        break;
      case 'creationDate':
        q.orderBy('created_at', direction);
        break;
      case 'role':
      case 'team':
        q.orderByRaw(`(SELECT ${desc ? 'MAX' : 'MIN'}(??) FROM ?? WHERE ?? = ?? AND ?? = ? AND ?? = ??) ${direction}`, [
          'm.group_name',
          'security_memberships as m',
          'm.tenant',
          `${TABLE}.tenant`,
          'm.kind',
          element,
          'm.identifier',
          `${TABLE}.identifier`,
        ]);
        break;
    }
  }
  // Identifiers are unique in a tenant: stable pages.
  if (!keys.some((k) => k.element === 'identifier')) q.orderBy('identifier', 'asc');
}

/** Principal information matching the criteria, sorted, one page (+1 row to know hasMore). */
export async function searchPrincipalInfos(knex: Knex, tenant: string, search: PrincipalSearch): Promise<SearchPage> {
  checkCriteria(search);
  const keys = sortKeysOf(search.sortedBy);
  const pageIndex = search.pageIndex ?? 1;
  const pageSize = search.pageSize ?? DEFAULT_PAGE_SIZE;
  const strict = search.strictSearch === true;
  const members = (kind: 'role' | 'team', filter: (q: Knex.QueryBuilder) => void): Knex.QueryBuilder => {
    const q = knex('security_memberships').where({ tenant, kind }).select('identifier');
    filter(q);
    return q;
  };
  const filtered = (): Knex.QueryBuilder => {
    const q = knex(TABLE).where({ tenant });
    if (search.query) {
      const pattern = containing(search.query);
      q.where((w) => {
        for (const column of ['identifier', 'name', 'email']) w.orWhereRaw('LOWER(??) LIKE ? ESCAPE ?', [column, pattern, '!']);
      });
    }
    for (const [kind, names] of [['role', search.roles], ['team', search.teams]] as const) {
      if (!names || names.length === 0) continue;
      q.whereIn('identifier', members(kind, (m) => m.whereIn('group_name', names)));
    }
    if (search.identifier) {
      if (strict) q.where('identifier', search.identifier);
      else q.whereRaw('LOWER(??) LIKE ? ESCAPE ?', ['identifier', containing(search.identifier), '!']);
    }
    if (search.contact) q.whereRaw('LOWER(??) LIKE ? ESCAPE ?', ['email', containing(search.contact), '!']);
    for (const kind of ['role', 'team'] as const) {
      const name = search[kind];
      if (!name) continue;
      q.whereIn('identifier', members(kind, (m) => (strict ? m.where('group_name', name) : m.whereRaw('LOWER(??) LIKE ? ESCAPE ?', ['group_name', containing(name), '!']))));
    }
    return q;
  };
  const query = filtered()
    .select(...INFO_COLUMNS)
    .limit(pageSize + 1)
    .offset((pageIndex - 1) * pageSize);
  applySort(query, keys);
  const rows = (await query) as InfoRow[];
  const hasMore = rows.length > pageSize;
  const page: SearchPage = { results: await withGroups(knex, tenant, rows.slice(0, pageSize)), pageIndex, pageSize, hasMore };
  if (search.withCount) {
    const counted = (await filtered().count({ count: '*' }).first()) as { count: number | string } | undefined;
    page.count = Number(counted?.count ?? 0);
  }
  return page;
}
