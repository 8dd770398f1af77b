import type { Knex } from 'knex';
import { lockingRead } from './input.js';

/**
 * Rows of security_memberships (who is in which role or team), in the format the principal resolver
 * reads: one row per (tenant, kind, group_name, identifier), `manager` meaningful for teams only.
 * Every function takes the caller's transaction (or knex) so multi-row changes commit as one.
 */
export type GroupKind = 'role' | 'team';
export type Db = Knex | Knex.Transaction;

const TABLE = 'security_memberships';

export interface Member {
  identifier: string;
  name?: string;
  email?: string;
  manager: boolean;
}

export interface MemberChange {
  identifier: string;
  /** undefined: a new member is a plain member, an existing one keeps its flag. */
  manager?: boolean;
}

interface MemberRow {
  identifier: string;
  manager: number | boolean;
  info_name: string | null;
  info_email: string | null;
  local_name: string | null;
  local_email: string | null;
}

/** Members of a group with their name and email (principal information first, else the local account). */
export async function listMembers(db: Db, tenant: string, kind: GroupKind, group: string): Promise<Member[]> {
  const rows = (await db(`${TABLE} as m`)
    .leftJoin('security_principal_infos as p', (j) => j.on('p.tenant', '=', 'm.tenant').andOn('p.identifier', '=', 'm.identifier'))
    .leftJoin('security_local_identities as l', (j) => j.on('l.tenant', '=', 'm.tenant').andOn('l.identifier', '=', 'm.identifier'))
    .where({ 'm.tenant': tenant, 'm.kind': kind, 'm.group_name': group })
    .select('m.identifier', 'm.manager', 'p.name as info_name', 'p.email as info_email', 'l.name as local_name', 'l.email as local_email')
    .orderBy('m.identifier')) as MemberRow[];
  return rows.map((r) => {
    const name = r.info_name ?? r.local_name;
    const email = r.info_email ?? r.local_email;
    return { identifier: r.identifier, ...(name ? { name } : {}), ...(email ? { email } : {}), manager: Boolean(r.manager) };
  });
}

/** identifier → manager flag, for the given identifiers that are members. */
export async function memberFlags(db: Db, tenant: string, kind: GroupKind, group: string, identifiers: string[]): Promise<Map<string, boolean>> {
  if (identifiers.length === 0) return new Map();
  const rows = (await db(TABLE)
    .where({ tenant, kind, group_name: group })
    .whereIn('identifier', identifiers)
    .select('identifier', 'manager')) as { identifier: string; manager: number | boolean }[];
  return new Map(rows.map((r) => [r.identifier, Boolean(r.manager)]));
}

export async function addMembers(db: Db, tenant: string, kind: GroupKind, group: string, changes: MemberChange[]): Promise<void> {
  const key = ['tenant', 'kind', 'group_name', 'identifier'];
  // granted_by null: a membership granted here is the administrator's, even one an identity provider's claims had
  // granted before (claim-memberships.ts drops only the memberships a provider still owns).
  const row = (c: MemberChange) => ({ tenant, kind, group_name: group, identifier: c.identifier, manager: kind === 'team' && c.manager === true, granted_by: null });
  const keepFlag = changes.filter((c) => c.manager === undefined || kind === 'role');
  const setFlag = changes.filter((c) => c.manager !== undefined && kind === 'team');
  if (keepFlag.length > 0) await db(TABLE).insert(keepFlag.map(row)).onConflict(key).merge(['granted_by']);
  if (setFlag.length > 0) await db(TABLE).insert(setFlag.map(row)).onConflict(key).merge(['manager', 'granted_by']);
}

export async function removeMembers(db: Db, tenant: string, kind: GroupKind, group: string, identifiers: string[]): Promise<number> {
  if (identifiers.length === 0) return 0;
  return db(TABLE).where({ tenant, kind, group_name: group }).whereIn('identifier', identifiers).delete();
}

export async function removeGroup(db: Db, tenant: string, kind: GroupKind, group: string): Promise<void> {
  await db(TABLE).where({ tenant, kind, group_name: group }).delete();
}

export async function removePrincipal(db: Db, tenant: string, identifier: string): Promise<number> {
  return db(TABLE).where({ tenant, identifier }).delete();
}

/**
 * Makes the principal's memberships of `kind` exactly `groups`: others removed, new ones added as plain
 * members, those that stay keep their manager flag.
 */
export async function setPrincipalGroups(db: Db, tenant: string, identifier: string, kind: GroupKind, groups: string[]): Promise<void> {
  const gone = db(TABLE).where({ tenant, kind, identifier });
  await (groups.length > 0 ? gone.whereNotIn('group_name', groups) : gone).delete();
  if (groups.length === 0) return;
  await db(TABLE)
    .insert(groups.map((group_name) => ({ tenant, kind, group_name, identifier, manager: false, granted_by: null })))
    .onConflict(['tenant', 'kind', 'group_name', 'identifier'])
    .merge(['granted_by']);
}

/**
 * identifier → names of the roles or teams it belongs to, only groups that exist (a membership a
 * deleted group left behind means nothing, as in the resolver), sorted.
 */
export async function groupsOf(db: Db, tenant: string, kind: GroupKind, identifiers: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(identifiers.map((i) => [i, []]));
  if (identifiers.length === 0) return out;
  const table = kind === 'role' ? 'security_roles' : 'security_teams';
  const rows = (await db(`${TABLE} as m`)
    .join(`${table} as g`, (j) => j.on('g.tenant', '=', 'm.tenant').andOn('g.name', '=', 'm.group_name'))
    .where({ 'm.tenant': tenant, 'm.kind': kind })
    .whereIn('m.identifier', identifiers)
    .select('m.identifier', 'm.group_name')
    .orderBy('m.group_name')) as { identifier: string; group_name: string }[];
  for (const r of rows) out.get(r.identifier)?.push(r.group_name);
  return out;
}

/**
 * The names among `names` that are not groups of this kind; those that are stay locked until the
 * transaction ends (MySQL), so none can be deleted before the memberships about to name them are written.
 */
export async function unknownGroups(trx: Knex.Transaction, tenant: string, kind: GroupKind, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const table = kind === 'role' ? 'security_roles' : 'security_teams';
  const query = trx(table).where({ tenant }).whereIn('name', names).select('name');
  const found = new Set(((await lockingRead(trx, query)) as { name: string }[]).map((r) => r.name));
  return names.filter((n) => !found.has(n));
}
