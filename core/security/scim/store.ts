import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import type { EventStore, NewEventInput } from '../../events/store.js';
import * as memberships from '../groups/memberships.js';
import { lockingRead } from '../groups/input.js';
import type { Json } from './attributes.js';
import { ScimError, notFound, badRequest } from './errors.js';
import { matches } from './filter.js';
import { findGroup, identifierOf, listGroups, primaryTarget, principalFields, type MappedGroup } from './mapping.js';
import type { MemberStep } from './patch.js';
import type { ScimProfile } from './profile-type.js';
import { GROUP_ATTRIBUTES, findAttribute } from './schemas.js';

const USERS = 'security_scim_users';
const GRANTS = 'security_scim_grants';
const INFOS = 'security_principal_infos';

interface UserRow {
  id: string;
  identifier: string;
  user_name: string;
  external_id: string | null;
  resource: string;
  created_at: number | string;
  updated_at: number | string;
  enabled?: number | boolean | null;
}

/** A provisioned user: its SCIM attributes and the principal it is. */
export interface ScimUser {
  id: string;
  identifier: string;
  userName: string;
  /** The SCIM attributes kept (externalId included, `active` not: that is the principal's `enabled`). */
  doc: Json;
  /** The principal's `enabled` flag (false when its principal information was removed on the platform). */
  active: boolean;
  created: number;
  lastModified: number;
}

const fromRow = (r: UserRow): ScimUser => ({
  id: r.id,
  identifier: r.identifier,
  userName: r.user_name,
  doc: JSON.parse(r.resource) as Json,
  active: Boolean(r.enabled ?? false),
  created: Number(r.created_at),
  lastModified: Number(r.updated_at),
});

type Db = Knex | Knex.Transaction;

/** What a write changed, for the caller's cache invalidation. */
export interface Changed {
  identifiers: string[];
}

const uniqueness = (detail: string) => new ScimError(409, 'uniqueness', detail);

/**
 * SCIM users and group memberships on the database: security_scim_users (which principals a profile manages),
 * the principals' information (security_principal_infos) and memberships (security_memberships) with those a
 * profile granted (security_scim_grants). Every write is one transaction with its events (the principal
 * information and membership codes of the security core, payload `via: "scim"`), so a failure leaves nothing
 * half-written. A profile only ever reads and changes its own users.
 */
export class ScimStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
    private readonly events: EventStore,
  ) {}

  private users(db: Db, tenant: string, profile: string) {
    return db(`${USERS} as u`)
      .leftJoin(`${INFOS} as p`, (j) => j.on('p.tenant', '=', 'u.tenant').andOn('p.identifier', '=', 'u.identifier'))
      .where({ 'u.tenant': tenant, 'u.profile': profile })
      .select('u.id', 'u.identifier', 'u.user_name', 'u.external_id', 'u.resource', 'u.created_at', 'u.updated_at', 'p.enabled');
  }

  /** Every user of the profile, oldest first (lists filter and page them in memory). */
  async listUsers(tenant: string, profile: ScimProfile): Promise<ScimUser[]> {
    const rows = (await this.users(this.knex, tenant, profile.name).orderBy('u.created_at').orderBy('u.id')) as UserRow[];
    return rows.map(fromRow);
  }

  /** One user of the profile by its SCIM id, else by its userName (case-insensitive), or undefined. */
  async findUser(tenant: string, profile: ScimProfile, key: string, db: Db = this.knex): Promise<ScimUser | undefined> {
    const byId = (await this.users(db, tenant, profile.name).andWhere('u.id', key).first()) as UserRow | undefined;
    const row = byId ?? ((await this.users(db, tenant, profile.name).andWhere('u.user_name_key', key.toLowerCase()).first()) as UserRow | undefined);
    return row ? fromRow(row) : undefined;
  }

  private async lockUser(trx: Knex.Transaction, tenant: string, profile: ScimProfile, key: string): Promise<ScimUser> {
    const found = await this.findUser(tenant, profile, key, trx);
    if (!found) throw notFound(`No user "${key}" in this SCIM profile`);
    // Deleted by a concurrent request between the read and the lock (MySQL): gone.
    if (!(await lockingRead(trx, trx(USERS).where({ tenant, id: found.id }).first('id')))) throw notFound(`No user "${key}" in this SCIM profile`);
    return found;
  }

  /** The SCIM groups (of the profile's mapping) each of the given principals is a member of. */
  async groupsOf(tenant: string, profile: ScimProfile, identifiers: string[], db: Db = this.knex): Promise<Map<string, MappedGroup[]>> {
    const out = new Map<string, MappedGroup[]>(identifiers.map((i) => [i, []]));
    if (identifiers.length === 0) return out;
    const groups = await listGroups(db, tenant, profile);
    const byTarget = new Map(groups.map((g) => [`${primaryTarget(g).kind}:${primaryTarget(g).name}`, g]));
    const rows = (await db('security_memberships as m')
      .join(`${USERS} as u`, (j) => j.on('u.tenant', '=', 'm.tenant').andOn('u.identifier', '=', 'm.identifier'))
      .where({ 'm.tenant': tenant, 'u.profile': profile.name })
      .select('m.identifier', 'm.kind', 'm.group_name')) as { identifier: string; kind: string; group_name: string }[];
    for (const r of rows) {
      const g = byTarget.get(`${r.kind}:${r.group_name}`);
      if (g) out.get(r.identifier)?.push(g);
    }
    for (const list of out.values()) list.sort((a, b) => a.name.localeCompare(b.name));
    return out;
  }

  /** The profile's users who are members of the group (of its team, else its role). */
  async membersOf(tenant: string, profile: ScimProfile, group: MappedGroup, db: Db = this.knex): Promise<ScimUser[]> {
    const { kind, name } = primaryTarget(group);
    const rows = (await this.users(db, tenant, profile.name)
      .join('security_memberships as m', (j) => j.on('m.tenant', '=', 'u.tenant').andOn('m.identifier', '=', 'u.identifier'))
      .andWhere({ 'm.kind': kind, 'm.group_name': name })
      .orderBy('u.user_name')) as UserRow[];
    return rows.map(fromRow);
  }

  private event(tenant: string, profile: ScimProfile, code: string, objectType: string, objectId: string, payload: Json): NewEventInput {
    return { tenant, code, module: 'security', status: 'success', principal: `scim:${profile.name}`, objectType, objectId, payload: { ...payload, via: 'scim', profile: profile.name } };
  }

  /** POST /Users: a new principal (information, default roles) managed by the profile. */
  async createUser(tenant: string, profile: ScimProfile, doc: Json): Promise<ScimUser> {
    const identifier = identifierOf(doc, profile);
    const userName = doc.userName as string;
    const fields = principalFields(doc, profile, undefined);
    const now = this.clock();
    const id = randomUUID();
    const { active: _active, ...kept } = doc;
    try {
      await this.knex.transaction(async (trx) => {
        const taken = await trx(USERS).where({ tenant, profile: profile.name, user_name_key: userName.toLowerCase() }).first('id');
        if (taken) throw uniqueness(`userName "${userName}" is taken in this SCIM profile`);
        const managed = await trx(USERS).where({ tenant, identifier }).first('profile');
        if (managed) throw uniqueness(`The principal "${identifier}" is managed by ${managed.profile === profile.name ? 'another user of this profile' : 'another SCIM profile'}`);
        if ((await trx(INFOS).where({ tenant, identifier }).first('id')) || (await trx('security_local_identities').where({ tenant, identifier }).first('identifier'))) {
          throw uniqueness(`A principal "${identifier}" already exists on the platform and is not managed by this SCIM profile`);
        }
        await trx(USERS).insert({
          tenant,
          profile: profile.name,
          id,
          identifier,
          user_name: userName,
          user_name_key: userName.toLowerCase(),
          external_id: (kept.externalId as string | undefined) ?? null,
          resource: JSON.stringify(kept),
          created_at: now,
          updated_at: now,
        });
        await trx(INFOS).insert({ id: newId(now), tenant, identifier, name: fields.name, email: fields.email, enabled: fields.enabled, permissions: '[]', preferences: '{}', created_at: now, updated_at: now });
        const roles = await this.existing(trx, tenant, 'role', profile.defaultRoles);
        await this.grant(trx, tenant, profile, 'role', roles, [identifier]);
        await this.events.appendAll(
          [this.event(tenant, profile, 'SEC-PRINC-CREATED', 'principal', identifier, { scimId: id, userName, enabled: fields.enabled, permissions: [], roles, teams: [] })],
          { trx, written: true },
        );
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw uniqueness(`userName "${userName}" or the principal "${identifier}" is taken`);
      throw err;
    }
    return (await this.findUser(tenant, profile, id))!;
  }

  /**
   * PUT and PATCH /Users/:id: `next` computes the new attributes from the current ones (`active` included);
   * the principal keeps its identifier, its information follows name, email and active.
   */
  async updateUser(tenant: string, profile: ScimProfile, key: string, next: (current: Json) => Json): Promise<ScimUser> {
    let id = '';
    try {
      await this.knex.transaction(async (trx) => {
        const user = await this.lockUser(trx, tenant, profile, key);
        id = user.id;
        const doc = next({ ...user.doc, active: user.active });
        const userName = doc.userName as string;
        if (userName.toLowerCase() !== user.userName.toLowerCase()) {
          const taken = await trx(USERS).where({ tenant, profile: profile.name, user_name_key: userName.toLowerCase() }).first('id');
          if (taken) throw uniqueness(`userName "${userName}" is taken in this SCIM profile`);
        }
        const fields = principalFields(doc, profile, user.active);
        const { active: _active, ...kept } = doc;
        const now = this.clock();
        await trx(USERS)
          .where({ tenant, id: user.id })
          .update({ user_name: userName, user_name_key: userName.toLowerCase(), external_id: (kept.externalId as string | undefined) ?? null, resource: JSON.stringify(kept), updated_at: now });
        const changedInfo = await trx(INFOS).where({ tenant, identifier: user.identifier }).update({ name: fields.name, email: fields.email, enabled: fields.enabled, updated_at: now });
        // Its information was removed on the platform meanwhile: the SCIM user brings it back.
        if (changedInfo === 0) {
          await trx(INFOS).insert({ id: newId(now), tenant, identifier: user.identifier, name: fields.name, email: fields.email, enabled: fields.enabled, permissions: '[]', preferences: '{}', created_at: now, updated_at: now });
        }
        const changed = Object.keys({ ...user.doc, ...kept }).filter((k) => JSON.stringify(user.doc[k]) !== JSON.stringify(kept[k]));
        if (fields.enabled !== user.active) changed.push('active');
        await this.events.appendAll(
          [this.event(tenant, profile, 'SEC-PRINC-UPDATED', 'principal', user.identifier, { scimId: user.id, userName, enabled: fields.enabled, changed: changed.sort() })],
          { trx, written: true },
        );
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw uniqueness('userName is taken in this SCIM profile');
      throw err;
    }
    return (await this.findUser(tenant, profile, id))!;
  }

  /**
   * DELETE /Users/:id: the SCIM record, the memberships the profile granted and the principal information go;
   * memberships granted on the platform by other means stay.
   */
  async deleteUser(tenant: string, profile: ScimProfile, key: string): Promise<ScimUser> {
    return this.knex.transaction(async (trx) => {
      const user = await this.lockUser(trx, tenant, profile, key);
      const grants = (await trx(GRANTS).where({ tenant, identifier: user.identifier }).select('kind', 'group_name')) as { kind: 'team' | 'role'; group_name: string }[];
      for (const g of grants) await memberships.removeMembers(trx, tenant, g.kind, g.group_name, [user.identifier]);
      await trx(GRANTS).where({ tenant, identifier: user.identifier }).delete();
      await trx(INFOS).where({ tenant, identifier: user.identifier }).delete();
      await trx(USERS).where({ tenant, id: user.id }).delete();
      const names = (kind: string) => grants.filter((g) => g.kind === kind).map((g) => g.group_name).sort();
      await this.events.appendAll(
        [this.event(tenant, profile, 'SEC-PRINC-DELETED', 'principal', user.identifier, { scimId: user.id, userName: user.userName, roles: names('role'), teams: names('team') })],
        { trx, written: true },
      );
      return user;
    });
  }

  private async existing(trx: Knex.Transaction, tenant: string, kind: 'team' | 'role', names: string[]): Promise<string[]> {
    const unknown = new Set(await memberships.unknownGroups(trx, tenant, kind, names));
    return names.filter((n) => !unknown.has(n));
  }

  private async grant(trx: Knex.Transaction, tenant: string, profile: ScimProfile, kind: 'team' | 'role', groups: string[], identifiers: string[]): Promise<void> {
    for (const group of groups) {
      if (identifiers.length === 0) continue;
      await memberships.addMembers(trx, tenant, kind, group, identifiers.map((identifier) => ({ identifier })));
      await trx(GRANTS)
        .insert(identifiers.map((identifier) => ({ tenant, identifier, kind, group_name: group, profile: profile.name })))
        .onConflict(['tenant', 'identifier', 'kind', 'group_name'])
        .ignore();
    }
  }

  /**
   * PATCH /Groups/:name: the steps applied to the group's members among the profile's users, then the
   * difference written to the team and/or role it maps (a team becomes externallyManaged), with their
   * membership events. Members to add must be users of the profile (400 invalidValue otherwise).
   */
  async patchGroup(tenant: string, profile: ScimProfile, groupName: string, steps: MemberStep[]): Promise<Changed> {
    return this.knex.transaction(async (trx) => {
      const group = await findGroup(trx, tenant, profile, groupName);
      if (!group) throw notFound(`No group "${groupName}" in this SCIM profile`);
      const users = (await this.users(trx, tenant, profile.name)) as UserRow[];
      const byId = new Map(users.map((u) => [u.id, u]));
      const byName = new Map(users.map((u) => [u.user_name.toLowerCase(), u]));
      const resolve = (ref: string) => byId.get(ref) ?? byName.get(ref.toLowerCase());
      const initial = new Set((await this.membersOf(tenant, profile, group, trx)).map((u) => u.id));
      const members = new Set(initial);
      const scope = { attributes: findAttribute(GROUP_ATTRIBUTES, 'members')!.subAttributes!, extensions: new Map() };
      for (const step of steps) {
        if (step.kind === 'clear') members.clear();
        else if (step.kind === 'removeWhere') {
          for (const id of [...members]) if (matches(step.filter, { value: id, display: byId.get(id)?.user_name, type: 'User' }, scope)) members.delete(id);
        } else if (step.kind === 'remove') {
          for (const ref of step.ids) {
            const u = resolve(ref);
            if (u) members.delete(u.id);
          }
        } else {
          const unknown = step.ids.filter((ref) => !resolve(ref));
          if (unknown.length > 0) throw badRequest('invalidValue', `members: not users of this SCIM profile: ${unknown.slice(0, 10).join(', ')}`);
          if (step.kind === 'set') members.clear();
          for (const ref of step.ids) members.add(resolve(ref)!.id);
        }
      }
      const added = [...members].filter((id) => !initial.has(id)).map((id) => byId.get(id)!.identifier).sort();
      const removed = [...initial].filter((id) => !members.has(id)).map((id) => byId.get(id)!.identifier).sort();
      const events: NewEventInput[] = [];
      const targets: ['team' | 'role', string][] = [
        ...(group.team !== undefined ? [['team', group.team] as ['team', string]] : []),
        ...(group.role !== undefined ? [['role', group.role] as ['role', string]] : []),
      ];
      for (const [kind, name] of targets) {
        const table = kind === 'team' ? 'security_teams' : 'security_roles';
        if (!(await lockingRead(trx, trx(table).where({ tenant, name }).first('id')))) throw notFound(`The ${kind} "${name}" of group "${group.name}" no longer exists`);
        if (added.length > 0) {
          await this.grant(trx, tenant, profile, kind, [name], added);
          events.push(this.event(tenant, profile, kind === 'team' ? 'SEC-TEAM-MEMBERS-ADDED' : 'SEC-ROLE-MEMBERS-ADDED', kind, name, { identifiers: added, group: group.name }));
        }
        if (removed.length > 0) {
          await memberships.removeMembers(trx, tenant, kind, name, removed);
          await trx(GRANTS).where({ tenant, kind, group_name: name }).whereIn('identifier', removed).delete();
          events.push(this.event(tenant, profile, kind === 'team' ? 'SEC-TEAM-MEMBERS-REMOVED' : 'SEC-ROLE-MEMBERS-REMOVED', kind, name, { identifiers: removed, group: group.name }));
        }
        // A team whose members a directory provisions is externally managed (RA team managers leave it alone).
        if (kind === 'team' && (added.length > 0 || removed.length > 0)) await trx(table).where({ tenant, name, externally_managed: false }).update({ externally_managed: true, updated_at: this.clock() });
      }
      if (events.length > 0) await this.events.appendAll(events, { trx, written: true });
      return { identifiers: [...added, ...removed] };
    });
  }
}
