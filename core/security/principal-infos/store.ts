import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { lockingRead, parseJson } from '../groups/input.js';
import * as memberships from '../groups/memberships.js';
import type { Db } from '../groups/memberships.js';
import type { Permission } from '../permissions/permission-set.js';

/**
 * `email` and `contact` (the same field: Certwright's name and the one Horizon clients use) both sent with
 * different values. A read-modify-write client echoes both from a GET and edits one: the one that differs
 * from the stored email is the edit (on create nothing is stored: null). When neither equals it, SEC-PRINC-002.
 */
export interface EmailChoice {
  email: string | null;
  contact: string | null;
}

export interface PrincipalInfoInput {
  identifier: string;
  name: string | null;
  email: string | null | EmailChoice;
  permissions: Permission[];
  /** undefined (create only): the principal's memberships of that kind stay as they are. */
  roles: string[] | undefined;
  teams: string[] | undefined;
  /** Whether the principal may log in (see PrincipalResolver). undefined: true on create, unchanged on replace. */
  enabled: boolean | undefined;
}

export interface PrincipalInfo {
  id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  permissions: Permission[];
  roles: string[];
  teams: string[];
  enabled: boolean;
  /** created_at, epoch ms (horizon-go v2 PrincipalInfoResponse.creationDate, int64). */
  creationDate: number;
}

export interface InfoRow {
  id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  permissions: string;
  enabled: number | boolean;
  created_at: number | string;
}

const TABLE = 'security_principal_infos';

/** The email to store, given what was sent and what is stored (see EmailChoice). */
export function resolveEmail(given: PrincipalInfoInput['email'], stored: string | null): string | null {
  if (given === null || typeof given === 'string') return given;
  if (given.email === stored) return given.contact;
  if (given.contact === stored) return given.email;
  throw new ProblemError('SEC-PRINC-002', {
    message: `email and contact (the same field) differ: ${JSON.stringify(given.email)} and ${JSON.stringify(given.contact)}, and neither is the stored value; send one of them, or the same value in both`,
  });
}

export const INFO_COLUMNS = ['id', 'identifier', 'name', 'email', 'permissions', 'enabled', 'created_at'] as const;

/** Principal information rows with their role and team names (groups that exist), in row order. */
export async function withGroups(db: Db, tenant: string, rows: InfoRow[]): Promise<PrincipalInfo[]> {
  const ids = rows.map((r) => r.identifier);
  const [roles, teams] = await Promise.all([memberships.groupsOf(db, tenant, 'role', ids), memberships.groupsOf(db, tenant, 'team', ids)]);
  return rows.map((r) => ({
    id: r.id,
    identifier: r.identifier,
    name: r.name,
    email: r.email,
    permissions: parseJson<Permission[]>(r.permissions, []),
    roles: roles.get(r.identifier) ?? [],
    teams: teams.get(r.identifier) ?? [],
    enabled: Boolean(r.enabled),
    creationDate: Number(r.created_at),
  }));
}

/**
 * security_principal_infos (a principal's own permissions, name and email, whoever authenticates it)
 * and the principal's role and team memberships, written together in one transaction. Preferences
 * live in the same row but belong to the principal's self-service routes: never touched here.
 */
export class PrincipalInfoStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  private notFound(identifier: string): ProblemError {
    return new ProblemError('SEC-PRINC-003', { message: `No principal information for "${identifier}"` });
  }

  async get(tenant: string, identifier: string, db: Db = this.knex): Promise<PrincipalInfo> {
    const row = (await db(TABLE).where({ tenant, identifier }).first(...INFO_COLUMNS)) as InfoRow | undefined;
    if (!row) throw this.notFound(identifier);
    return (await withGroups(db, tenant, [row]))[0]!;
  }

  async create(tenant: string, input: PrincipalInfoInput): Promise<PrincipalInfo> {
    const now = this.clock();
    try {
      return await this.knex.transaction(async (trx) => {
        await trx(TABLE).insert({ id: newId(now), tenant, ...this.columns(input, null), enabled: input.enabled ?? true, preferences: '{}', created_at: now, updated_at: now });
        await this.setGroups(trx, tenant, input);
        return this.get(tenant, input.identifier, trx);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('SEC-PRINC-004', { message: `Principal information for "${input.identifier}" already exists` });
      throw err;
    }
  }

  /**
   * Replaces name, email, permissions, roles and teams (team memberships that stay keep their manager flag),
   * and `enabled` when given: a client that does not know the flag cannot re-enable a principal by mistake.
   */
  async replace(tenant: string, input: PrincipalInfoInput): Promise<PrincipalInfo> {
    return this.knex.transaction(async (trx) => {
      const where = { tenant, identifier: input.identifier };
      const current = (await lockingRead(trx, trx(TABLE).where(where).first('email'))) as { email: string | null } | undefined;
      if (!current) throw this.notFound(input.identifier);
      await trx(TABLE).where(where).update({ ...this.columns(input, current.email), updated_at: this.clock() });
      await this.setGroups(trx, tenant, { ...input, roles: input.roles ?? [], teams: input.teams ?? [] });
      return this.get(tenant, input.identifier, trx);
    });
  }

  /** Deletes the information and every membership of the identifier; 404 when there was neither. */
  async remove(tenant: string, identifier: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const rows = await trx(TABLE).where({ tenant, identifier }).delete();
      const groups = await memberships.removePrincipal(trx, tenant, identifier);
      if (rows + groups === 0) throw this.notFound(identifier);
    });
  }

  private columns(input: PrincipalInfoInput, storedEmail: string | null): Record<string, unknown> {
    const enabled = input.enabled === undefined ? {} : { enabled: input.enabled };
    return { identifier: input.identifier, name: input.name, email: resolveEmail(input.email, storedEmail), permissions: JSON.stringify(input.permissions), ...enabled };
  }

  /** Refuses unknown role and team names (naming them all) before writing the memberships. */
  private async setGroups(trx: Knex.Transaction, tenant: string, input: PrincipalInfoInput): Promise<void> {
    const [roles, teams] = [input.roles, input.teams];
    const unknownRoles = roles ? await memberships.unknownGroups(trx, tenant, 'role', roles) : [];
    const unknownTeams = teams ? await memberships.unknownGroups(trx, tenant, 'team', teams) : [];
    const problems = [
      ...(unknownRoles.length > 0 ? [`unknown roles: ${unknownRoles.join(', ')}`] : []),
      ...(unknownTeams.length > 0 ? [`unknown teams: ${unknownTeams.join(', ')}`] : []),
    ];
    if (problems.length > 0) throw new ProblemError('SEC-PRINC-002', { message: `The principal information is not valid: ${problems.join('; ')}` });
    if (roles) await memberships.setPrincipalGroups(trx, tenant, input.identifier, 'role', roles);
    if (teams) await memberships.setPrincipalGroups(trx, tenant, input.identifier, 'team', teams);
  }
}
