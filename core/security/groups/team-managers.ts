import type { Knex } from 'knex';
import * as memberships from './memberships.js';
import type { Db } from './memberships.js';

/**
 * A team's `managers` (horizon-go v2 TeamResponse.managers, []string, required; the MCP's create_team and
 * update_team send it): the identifiers of the members whose membership carries the manager flag, the flag
 * the RA team routes (/api/v1/teams/:name/members, spec "RA team: team-member management for team
 * managers") and the principal's self view already read. One source of truth, so a manager named here
 * manages the team's members from the next request.
 *
 * Identifiers are not checked against principals, as for members: a principal of an external identity
 * provider may have no row here before its first change.
 */

const TABLE = 'security_memberships';

/** team name → its managers' identifiers (sorted), for the given teams; a team without any maps to []. */
export async function managersOf(db: Db, tenant: string, teams: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(teams.map((team) => [team, []]));
  if (teams.length === 0) return out;
  const rows = (await db(TABLE)
    .where({ tenant, kind: 'team', manager: true })
    .whereIn('group_name', teams)
    .select('group_name', 'identifier')
    .orderBy('identifier')) as { group_name: string; identifier: string }[];
  for (const r of rows) out.get(r.group_name)?.push(r.identifier);
  return out;
}

/**
 * Makes `identifiers` exactly the team's managers: each becomes a member with the flag (joining the team
 * when not a member yet), a manager not named keeps its membership but loses the flag.
 */
export async function setManagers(trx: Knex.Transaction, tenant: string, team: string, identifiers: string[]): Promise<void> {
  const demoted = trx(TABLE).where({ tenant, kind: 'team', group_name: team, manager: true });
  await (identifiers.length > 0 ? demoted.whereNotIn('identifier', identifiers) : demoted).update({ manager: false });
  await memberships.addMembers(trx, tenant, 'team', team, identifiers.map((identifier) => ({ identifier, manager: true })));
}
