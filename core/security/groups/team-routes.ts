import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';
import { recordChange } from '../audit.js';
import type { Stored } from './group-store.js';
import { localizedOutput, NAME } from './input.js';
import { memberRoutes } from './member-routes.js';
import { teamBody } from './team-config-type.js';
import { TeamStore, type TeamInput } from './team-store.js';
import { webhookOutput } from './team-webhook.js';

const READ = { permission: 'configuration:teams:read' } as const;
const WRITE = { permission: 'configuration:teams:write' } as const;
const CAPABILITY = 'configuration' as const;
const BASE = '/api/v1/security/teams/';
const tags = ['security'];

/** What PATCH answers: the team as the standard set answers it (team-config-type.ts). */
export const teamSchema = {
  $id: 'SecurityTeam',
  type: 'object',
  required: ['_id', 'name', 'displayName', 'description', 'contact', 'externallyManaged', 'managers', 'webhook'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    displayName: localizedOutput,
    description: localizedOutput,
    contact: { type: ['string', 'null'] },
    externallyManaged: { type: 'boolean' },
    managers: { type: 'array', items: { type: 'string' }, description: 'Identifiers of the members who manage the team (the manager flag of their membership)' },
    webhook: { ...webhookOutput, description: "The team's corporate channel (Teams, Slack/Mattermost) incoming webhook, or null" },
  },
} as const;

const migrateParams = { type: 'object', required: ['previousTeam', 'newTeam'], properties: { previousTeam: NAME, newTeam: NAME } } as const;

export const teamView = (t: Stored<TeamInput>) => ({ _id: t.id, ...teamBody(t) });

/**
 * PATCH /api/v1/security/teams/:previousTeam/:newTeam (rename or merge, see TeamStore.migrate) and
 * GET/POST/DELETE :name/members with full control of the manager flag. The standard set (PUT updates the
 * team named in the body; `managers` sets the members' manager flags, see team-managers.ts; `webhook` is
 * stored, see team-webhook.ts) comes from the configuration registry (team-config-type.ts).
 */
export async function teamRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const teams = new TeamStore(ctx.knex, ctx.clock);
  app.addSchema(teamSchema);
  const one = { $ref: 'SecurityTeam#' };

  app.patch<{ Params: { previousTeam: string; newTeam: string } }>(`${BASE}:previousTeam/:newTeam`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: {
      tags,
      summary: 'Migrate a team: renamed to newTeam when that team does not exist, else merged into it (members keep their manager flag) and deleted',
      params: migrateParams,
      response: { 200: one },
    },
    handler: async (request) => {
      const { previousTeam, newTeam } = request.params;
      const { team, migration } = await teams.migrate(request.tenant, previousTeam, newTeam);
      await recordChange(ctx, request, {
        code: 'SEC-TEAM-MIGRATED',
        objectType: 'team',
        objectId: newTeam,
        payload: { previousTeam, newTeam, mode: migration.mode, members: migration.members },
      });
      return teamView(team);
    },
  });

  await memberRoutes(app, ctx, { url: `${BASE}:name/members`, capability: CAPABILITY, read: READ, write: WRITE, store: teams, tags, via: 'configuration' });
}
