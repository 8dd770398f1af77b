import type { FastifyInstance } from 'fastify';
import type { LocalizedText } from '../principals/resolver.js';
import type { SecurityRouteContext } from '../route-context.js';
import { recordChange } from '../audit.js';
import type { Stored } from './group-store.js';
import { localizedInput, localizedOf, localizedOutput, NAME, permissionsInput, permissionsOf, permissionsOutput, SERVER_OWNED } from './input.js';
import { memberRoutes } from './member-routes.js';
import { RoleStore, type RoleInput } from './role-store.js';

const READ = { permission: 'configuration:roles:read' } as const;
const WRITE = { permission: 'configuration:roles:write' } as const;
const CAPABILITY = 'configuration' as const;
const BASE = '/api/v1/security/roles/';
const tags = ['security'];

const roleSchema = {
  $id: 'SecurityRole',
  type: 'object',
  required: ['_id', 'name', 'displayName', 'description', 'permissions'],
  properties: { _id: { type: 'string' }, name: { type: 'string' }, displayName: localizedOutput, description: localizedOutput, permissions: permissionsOutput },
} as const;

const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { ...SERVER_OWNED, name: NAME, displayName: localizedInput, description: localizedInput, permissions: permissionsInput },
} as const;

interface Body {
  name: string;
  displayName?: LocalizedText[] | null;
  description?: LocalizedText[] | null;
  permissions?: { value: string; filter?: string | null }[] | null;
}

const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;
const view = (r: Stored<RoleInput>) => ({ _id: r.id, name: r.name, displayName: r.displayName, description: r.description, permissions: r.permissions });
const input = (b: Body): RoleInput => ({
  name: b.name,
  displayName: localizedOf(b.displayName),
  description: localizedOf(b.description),
  permissions: permissionsOf(b.permissions, 'SEC-ROLE-002'),
});

/**
 * /api/v1/security/roles/: the standard set (PUT updates the role named in the body) and
 * GET/POST/DELETE :name/members. A role's permissions apply to its members from the next request.
 */
export async function roleRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const roles = new RoleStore(ctx.knex, ctx.clock);
  app.addSchema(roleSchema);
  const one = { $ref: 'SecurityRole#' };

  app.get(BASE, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'List roles', response: { 200: { type: 'array', items: one } } },
    handler: async (request) => (await roles.list(request.tenant)).map(view),
  });

  app.get<{ Params: { name: string } }>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'Get a role', params, response: { 200: one } },
    handler: async (request) => view(await roles.get(request.tenant, request.params.name)),
  });

  app.post<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Create a role', body: inputSchema, response: { 201: one } },
    handler: async (request, reply) => {
      const role = view(await roles.create(request.tenant, input(request.body)));
      await recordChange(ctx, request, { code: 'SEC-ROLE-CREATED', objectType: 'role', objectId: role.name, payload: { permissions: role.permissions } });
      return reply.code(201).send(role);
    },
  });

  app.put<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Update the role named in the body', body: inputSchema, response: { 200: one } },
    handler: async (request) => {
      const role = view(await roles.update(request.tenant, input(request.body)));
      await recordChange(ctx, request, { code: 'SEC-ROLE-UPDATED', objectType: 'role', objectId: role.name, payload: { permissions: role.permissions } });
      return role;
    },
  });

  app.delete<{ Params: { name: string } }>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Delete a role and its memberships', params, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await roles.remove(request.tenant, request.params.name);
      await recordChange(ctx, request, { code: 'SEC-ROLE-DELETED', objectType: 'role', objectId: request.params.name, payload: {} });
      return reply.code(204).send();
    },
  });

  await memberRoutes(app, ctx, { url: `${BASE}:name/members`, capability: CAPABILITY, read: READ, write: WRITE, store: roles, tags, via: 'configuration' });
}
