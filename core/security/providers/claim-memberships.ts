import type { Knex } from 'knex';
import type { FastifyBaseLogger } from 'fastify';
import type { GroupKind } from '../groups/memberships.js';

const TABLE = 'security_memberships';
const KEY = ['tenant', 'kind', 'group_name', 'identifier'];

/** The `granted_by` of the memberships an identity provider granted (migration 0024). */
export const grantedByProvider = (providerName: string): string => `idp:${providerName}`;

export interface ClaimedGroups {
  roles?: string[] | undefined;
  teams?: string[] | undefined;
}

export interface ClaimMembershipChange {
  added: { roles: string[]; teams: string[] };
  removed: { roles: string[]; teams: string[] };
  /** Names the claims gave that are no role or team of the tenant (ignored). */
  unknown: { roles: string[]; teams: string[] };
}

const distinct = (names: readonly string[]): string[] => [...new Set(names.filter((n) => typeof n === 'string' && n.length > 0 && n.length <= 191))].sort();

/**
 * Makes the memberships a provider granted a principal match what its claims name at this login (SDK 1.10,
 * Principal.roles/teams):
 *
 * - a role or team the claims name and that exists becomes a membership recorded as granted by this provider,
 *   unless the principal already holds it otherwise (by hand, by SCIM, by another provider): that membership is
 *   left exactly as it is, owner included, so a later login never takes away what it did not give;
 * - a membership this provider granted earlier that the claims no longer name is removed;
 * - names that are no role or team of the tenant are logged and ignored (nothing is created from a claim).
 *
 * A kind the principal carries no list of (`undefined`: the provider maps no such claim) is left alone. One
 * transaction; the caller invalidates the principal afterwards.
 */
export async function syncClaimMemberships(
  knex: Knex,
  logger: FastifyBaseLogger,
  who: { tenant: string; identifier: string; providerName: string },
  claimed: ClaimedGroups,
): Promise<ClaimMembershipChange> {
  const { tenant, identifier, providerName } = who;
  const grantedBy = grantedByProvider(providerName);
  const change: ClaimMembershipChange = { added: { roles: [], teams: [] }, removed: { roles: [], teams: [] }, unknown: { roles: [], teams: [] } };
  const kinds: [GroupKind, 'roles' | 'teams', string[] | undefined][] = [
    ['role', 'roles', claimed.roles],
    ['team', 'teams', claimed.teams],
  ];
  await knex.transaction(async (trx) => {
    for (const [kind, plural, names] of kinds) {
      if (names === undefined) continue;
      const wanted = distinct(names);
      const groupTable = kind === 'role' ? 'security_roles' : 'security_teams';
      const existing =
        wanted.length === 0 ? [] : ((await trx(groupTable).where({ tenant }).whereIn('name', wanted).pluck('name')) as string[]);
      const exists = new Set(existing);
      change.unknown[plural] = wanted.filter((n) => !exists.has(n));
      const granted = [...exists].sort();

      const held = (await trx(TABLE).where({ tenant, kind, identifier }).select('group_name', 'granted_by')) as { group_name: string; granted_by: string | null }[];
      const heldNames = new Set(held.map((h) => h.group_name));
      const toRemove = held.filter((h) => h.granted_by === grantedBy && !exists.has(h.group_name)).map((h) => h.group_name);
      const toAdd = granted.filter((n) => !heldNames.has(n));
      if (toRemove.length > 0) {
        // granted_by in the WHERE: a row re-granted otherwise between the read and here is not this provider's.
        await trx(TABLE).where({ tenant, kind, identifier, granted_by: grantedBy }).whereIn('group_name', toRemove).delete();
      }
      if (toAdd.length > 0) {
        // Ignore on conflict: a membership granted otherwise meanwhile keeps its owner.
        await trx(TABLE)
          .insert(toAdd.map((group_name) => ({ tenant, kind, group_name, identifier, manager: false, granted_by: grantedBy })))
          .onConflict(KEY)
          .ignore();
      }
      change.added[plural] = toAdd;
      change.removed[plural] = toRemove.sort();
    }
  });
  if (change.unknown.roles.length > 0 || change.unknown.teams.length > 0) {
    logger.warn({ provider: providerName, identifier, unknownRoles: change.unknown.roles, unknownTeams: change.unknown.teams }, 'login claims name roles or teams that do not exist; ignored');
  }
  return change;
}
