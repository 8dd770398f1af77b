import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { SecurityRouteContext } from '../route-context.js';
import type { MemberGuard } from './group-store.js';
import { memberRoutes } from './member-routes.js';
import type { MemberChange } from './memberships.js';
import { TeamStore, type TeamInput } from './team-store.js';

const WRITE = 'configuration:teams:write';

/**
 * The RA's rules for a member change, checked in its transaction: an externally managed team's
 * members change only in its directory; a team manager (who may not hold configuration:teams:write)
 * manages plain members only: granting or withdrawing the manager flag and removing another manager
 * stay with administrators. A manager may leave the team.
 */
function raGuard(request: FastifyRequest, op: 'add' | 'remove', changes: MemberChange[]): MemberGuard<TeamInput> {
  const administrator = request.principal!.permissions.allows(WRITE);
  const self = request.principal!.identifier;
  return (team, current) => {
    if (team.externallyManaged) {
      throw new ProblemError('SEC-TEAM-005', { message: `The members of team "${team.name}" are managed by an external directory` });
    }
    if (administrator) return;
    for (const change of changes) {
      const isManager = current.get(change.identifier) === true;
      if (op === 'add' && change.manager === true && !isManager) {
        throw new ProblemError('SEC-TEAM-002', { message: `A team manager cannot make "${change.identifier}" a manager` });
      }
      if (op === 'add' && change.manager === false && isManager) {
        throw new ProblemError('SEC-TEAM-002', { message: `A team manager cannot withdraw the manager flag of "${change.identifier}"` });
      }
      if (op === 'remove' && isManager && change.identifier !== self) {
        throw new ProblemError('SEC-TEAM-002', { message: `A team manager cannot remove another manager ("${change.identifier}")` });
      }
    }
  };
}

/**
 * GET, POST, DELETE /api/v1/teams/:name/members on the webra capability: the members of a team, for
 * holders of configuration:teams:read|write and for the team's own managers.
 */
export async function raTeamRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  await memberRoutes(app, ctx, {
    url: '/api/v1/teams/:name/members',
    capability: 'webra',
    read: { permission: 'configuration:teams:read', orTeamManager: 'name' },
    write: { permission: WRITE, orTeamManager: 'name' },
    store: new TeamStore(ctx.knex, ctx.clock),
    tags: ['webra'],
    guard: raGuard,
    via: 'webra',
  });
}
