import type { FastifyInstance } from 'fastify';
import type { LocalizedText } from '../principals/resolver.js';
import type { SecurityRouteContext } from '../route-context.js';
import { recordChange } from '../audit.js';
import type { Stored } from './group-store.js';
import { distinct, EMAIL, IDENTIFIER, localizedInput, localizedOf, localizedOutput, NAME, SERVER_OWNED } from './input.js';
import { memberRoutes } from './member-routes.js';
import { TeamStore, type TeamInput } from './team-store.js';
import { webhookInput, webhookOf, webhookOutput, type TeamWebhook } from './team-webhook.js';

const READ = { permission: 'configuration:teams:read' } as const;
const WRITE = { permission: 'configuration:teams:write' } as const;
const CAPABILITY = 'configuration' as const;
const BASE = '/api/v1/security/teams/';
const tags = ['security'];

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

const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    ...SERVER_OWNED,
    name: NAME,
    displayName: localizedInput,
    description: localizedInput,
    contact: EMAIL,
    externallyManaged: { type: ['boolean', 'null'] },
    // Omitted: the manager flags stay as they are; null or []: no manager (the MCP's clear_fields sends null).
    managers: { type: ['array', 'null'], maxItems: 1000, items: IDENTIFIER },
    webhook: webhookInput,
  },
} as const;

interface Body {
  name: string;
  displayName?: LocalizedText[] | null;
  description?: LocalizedText[] | null;
  contact?: string | null;
  externallyManaged?: boolean | null;
  managers?: string[] | null;
  webhook?: TeamWebhook | null;
}

const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;
const migrateParams = { type: 'object', required: ['previousTeam', 'newTeam'], properties: { previousTeam: NAME, newTeam: NAME } } as const;

export const teamView = (t: Stored<TeamInput>) => ({
  _id: t.id,
  name: t.name,
  displayName: t.displayName,
  description: t.description,
  contact: t.contact,
  externallyManaged: t.externallyManaged,
  managers: t.managers ?? [],
  webhook: t.webhook,
});
const input = (b: Body): TeamInput => ({
  name: b.name,
  displayName: localizedOf(b.displayName),
  description: localizedOf(b.description),
  contact: b.contact || null,
  externallyManaged: b.externallyManaged ?? false,
  webhook: webhookOf(b.webhook),
  ...(b.managers === undefined ? {} : { managers: distinct(b.managers ?? []) }),
});

/**
 * /api/v1/security/teams/: the standard set (PUT updates the team named in the body; `managers` sets the
 * members' manager flags, see team-managers.ts; `webhook` is stored, see team-webhook.ts),
 * PATCH :previousTeam/:newTeam (rename or merge, see TeamStore.migrate) and GET/POST/DELETE
 * :name/members with full control of the manager flag.
 */
export async function teamRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const teams = new TeamStore(ctx.knex, ctx.clock);
  app.addSchema(teamSchema);
  const one = { $ref: 'SecurityTeam#' };

  app.get(BASE, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'List teams', response: { 200: { type: 'array', items: one } } },
    handler: async (request) => (await teams.list(request.tenant)).map(teamView),
  });

  app.get<{ Params: { name: string } }>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'Get a team', params, response: { 200: one } },
    handler: async (request) => teamView(await teams.get(request.tenant, request.params.name)),
  });

  app.post<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Create a team', body: inputSchema, response: { 201: one } },
    handler: async (request, reply) => {
      const team = teamView(await teams.create(request.tenant, input(request.body)));
      await recordChange(ctx, request, { code: 'SEC-TEAM-CREATED', objectType: 'team', objectId: team.name, payload: { externallyManaged: team.externallyManaged } });
      return reply.code(201).send(team);
    },
  });

  app.put<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Update the team named in the body', body: inputSchema, response: { 200: one } },
    handler: async (request) => {
      const team = teamView(await teams.update(request.tenant, input(request.body)));
      await recordChange(ctx, request, { code: 'SEC-TEAM-UPDATED', objectType: 'team', objectId: team.name, payload: { externallyManaged: team.externallyManaged } });
      return team;
    },
  });

  app.delete<{ Params: { name: string } }>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Delete a team and its memberships', params, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await teams.remove(request.tenant, request.params.name);
      await recordChange(ctx, request, { code: 'SEC-TEAM-DELETED', objectType: 'team', objectId: request.params.name, payload: {} });
      return reply.code(204).send();
    },
  });

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
