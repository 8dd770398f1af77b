import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';
import { memberRoutes } from './member-routes.js';
import { RoleStore } from './role-store.js';

const READ = { permission: 'configuration:roles:read' } as const;
const WRITE = { permission: 'configuration:roles:write' } as const;
const CAPABILITY = 'configuration' as const;
const BASE = '/api/v1/security/roles/';
const tags = ['security'];

/**
 * GET/POST/DELETE /api/v1/security/roles/:name/members. The standard set (PUT updates the role named in the
 * body) comes from the configuration registry (role-config-type.ts). A role's permissions apply to its
 * members from the next request.
 */
export async function roleRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const roles = new RoleStore(ctx.knex, ctx.clock);
  await memberRoutes(app, ctx, { url: `${BASE}:name/members`, capability: CAPABILITY, read: READ, write: WRITE, store: roles, tags, via: 'configuration' });
}
