import type { Knex } from 'knex';
import { isObject, type Json } from './attributes.js';
import { badRequest } from './errors.js';
import type { GroupMapEntry, ScimProfile } from './profile-type.js';

/** The principal information a SCIM user becomes (core/security/principal-infos). */
export interface PrincipalFields {
  name: string | null;
  email: string | null;
  enabled: boolean;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim().length > 0 ? v.trim() : null);

/** The email the profile takes: the primary one (else work, else the first), the work one, or the first. */
export function emailOf(doc: Json, rule: ScimProfile['users']['email']): string | null {
  const emails = (Array.isArray(doc.emails) ? doc.emails : []).filter(isObject) as Json[];
  const valueOf = (e: Json | undefined) => text(e?.value);
  const work = emails.find((e) => typeof e.type === 'string' && e.type.toLowerCase() === 'work');
  if (rule === 'work') return valueOf(work);
  if (rule === 'first') return valueOf(emails[0]);
  return valueOf(emails.find((e) => e.primary === true)) ?? valueOf(work) ?? valueOf(emails[0]);
}

function nameOf(doc: Json, rule: ScimProfile['users']['name']): string | null {
  const name = isObject(doc.name) ? doc.name : {};
  const givenFamily = text([name.givenName, name.familyName].filter((p) => typeof p === 'string' && p.length > 0).join(' '));
  const candidates: Record<ScimProfile['users']['name'], (string | null)[]> = {
    displayName: [text(doc.displayName), text(name.formatted), givenFamily],
    'name.formatted': [text(name.formatted), text(doc.displayName), givenFamily],
    'name.givenFamily': [givenFamily, text(doc.displayName), text(name.formatted)],
    userName: [text(doc.userName)],
  };
  const found = candidates[rule].find((c) => c !== null) ?? null;
  return found === null ? null : found.slice(0, 255);
}

export function principalFields(doc: Json, profile: ScimProfile, currentEnabled: boolean | undefined): PrincipalFields {
  const email = emailOf(doc, profile.users.email);
  return {
    name: nameOf(doc, profile.users.name),
    email: email !== null && email.length <= 320 ? email : null,
    // `active` left out keeps the principal as it is (a new one is enabled).
    enabled: typeof doc.active === 'boolean' ? doc.active : (currentEnabled ?? true),
  };
}

/** The principal identifier of a new SCIM user (set once: the principal keeps it when the attribute changes). */
export function identifierOf(doc: Json, profile: ScimProfile): string {
  const rule = profile.users.identifier;
  const value = rule === 'userName' ? text(doc.userName) : rule === 'externalId' ? text(doc.externalId) : emailOf(doc, 'primary');
  if (value === null) throw badRequest('invalidValue', `${rule === 'email' ? 'emails' : rule}: is required (the profile makes it the principal identifier)`);
  if (value.length > 191 || /[\u0000-\u001f]/.test(value)) throw badRequest('invalidValue', `${rule}: must be 1 to 191 characters to be a principal identifier`);
  return value;
}

/** A SCIM group and the local team and/or role it is. */
export interface MappedGroup {
  /** The SCIM displayName, which is also its id. */
  name: string;
  team?: string;
  role?: string;
}

/** The kind and name whose memberships a group's members are read from (its team when it has one). */
export const primaryTarget = (g: MappedGroup): { kind: 'team' | 'role'; name: string } => (g.team !== undefined ? { kind: 'team', name: g.team } : { kind: 'role', name: g.role! });

const fromEntry = (entry: GroupMapEntry, profile: ScimProfile): MappedGroup => {
  if (entry.team === undefined && entry.role === undefined) {
    const local = `${profile.groups.prefix}${entry.group}`;
    return profile.groups.target === 'team' ? { name: entry.group, team: local } : { name: entry.group, role: local };
  }
  return { name: entry.group, ...(entry.team !== undefined ? { team: entry.team } : {}), ...(entry.role !== undefined ? { role: entry.role } : {}) };
};

type Db = Knex | Knex.Transaction;

const tableOf = (kind: 'team' | 'role') => (kind === 'team' ? 'security_teams' : 'security_roles');

/**
 * Every SCIM group of a profile: its `map` entries, then (unless mappedOnly) each team (or role) whose name
 * starts with the prefix, as its name without the prefix. A local group an entry maps is not listed again
 * under its own name. Only groups whose team or role exists are groups.
 */
export async function listGroups(db: Db, tenant: string, profile: ScimProfile): Promise<MappedGroup[]> {
  const { prefix, target, mappedOnly } = profile.groups;
  const entries = profile.groups.map.map((e) => fromEntry(e, profile));
  const [teams, roles] = await Promise.all(
    (['team', 'role'] as const).map(async (kind) => new Set(((await db(tableOf(kind)).where({ tenant }).select('name')) as { name: string }[]).map((r) => r.name))),
  );
  const exists = (g: MappedGroup) => (g.team === undefined || teams!.has(g.team)) && (g.role === undefined || roles!.has(g.role));
  const out = entries.filter(exists);
  if (!mappedOnly) {
    const taken = new Set(out.map((g) => g.name.toLowerCase()));
    const mapped = new Set(entries.map((g) => (target === 'team' ? g.team : g.role)).filter((n) => n !== undefined));
    for (const local of target === 'team' ? teams! : roles!) {
      if (!local.startsWith(prefix) || local.length === prefix.length || mapped.has(local)) continue;
      const name = local.slice(prefix.length);
      if (taken.has(name.toLowerCase())) continue;
      out.push(target === 'team' ? { name, team: local } : { name, role: local });
    }
  }
  const order = (g: MappedGroup) => g.name.toLowerCase();
  return out.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One group by its SCIM name (case-insensitive, as displayName is), or undefined. */
export async function findGroup(db: Db, tenant: string, profile: ScimProfile, name: string): Promise<MappedGroup | undefined> {
  const lower = name.toLowerCase();
  const groups = await listGroups(db, tenant, profile);
  return groups.find((g) => g.name === name) ?? groups.find((g) => g.name.toLowerCase() === lower);
}
