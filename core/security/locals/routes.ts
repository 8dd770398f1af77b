import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { passwordPolicySchema } from '../password-policies/routes.js';
import type { SecurityRouteContext } from '../route-context.js';
import { LocalIdentityService, type Actor, type LocalIdentityChanges } from './service.js';

const READ = { permission: 'configuration:identities:read' } as const;
const WRITE = { permission: 'configuration:identities:write' } as const;
const BASE = '/api/v1/security/identity/locals';

const identifierSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;
// The authenticator refuses longer secrets; the policy's maxChar is at most 1024 too.
const passwordSchema = { type: 'string', maxLength: 1024 } as const;

export const localIdentitySchema = {
  $id: 'LocalIdentity',
  type: 'object',
  required: ['_id', 'identifier', 'name', 'email', 'enabled', 'hasPassword', 'passwordChangedAt', 'createdAt', 'updatedAt'],
  properties: {
    _id: { type: 'string' },
    identifier: { type: 'string' },
    name: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    hasPassword: { type: 'boolean' },
    passwordChangedAt: { type: ['integer', 'null'], description: 'epoch ms' },
    createdAt: { type: 'integer', description: 'epoch ms' },
    updatedAt: { type: 'integer', description: 'epoch ms' },
  },
} as const;

/** Fields of a GET answer a client may echo back: accepted and ignored. */
const serverOwned = { _id: {}, hasPassword: {}, passwordChangedAt: {}, createdAt: {}, updatedAt: {} } as const;

/** POST and PUT bodies; null is tolerated for the optional strings (no name, no email, no password). */
const identityInput = {
  type: 'object',
  additionalProperties: false,
  required: ['identifier'],
  properties: {
    ...serverOwned,
    identifier: identifierSchema,
    name: { type: ['string', 'null'], maxLength: 255 },
    email: { type: ['string', 'null'], maxLength: 320 },
    enabled: { type: 'boolean' },
    password: { ...passwordSchema, type: ['string', 'null'] },
  },
} as const;

const patchInput = {
  type: 'object',
  additionalProperties: false,
  required: ['identifier', 'password'],
  properties: { ...serverOwned, identifier: identifierSchema, password: passwordSchema },
} as const;

/** Self-service change; `oldPassword` / `newPassword` are accepted for `currentPassword` / `password`. */
const changeInput = {
  type: 'object',
  additionalProperties: false,
  allOf: [{ anyOf: [{ required: ['currentPassword'] }, { required: ['oldPassword'] }] }, { anyOf: [{ required: ['password'] }, { required: ['newPassword'] }] }],
  properties: {
    identifier: identifierSchema,
    currentPassword: passwordSchema,
    oldPassword: passwordSchema,
    password: passwordSchema,
    newPassword: passwordSchema,
  },
} as const;

interface IdentityBody {
  identifier: string;
  name?: string | null;
  email?: string | null;
  enabled?: boolean;
  password?: string | null;
}
interface ChangeBody {
  identifier?: string;
  currentPassword?: string;
  oldPassword?: string;
  password?: string;
  newPassword?: string;
}
// Inline (the named schema belongs to the password policy routes' scope).
const { $id: _policyId, ...policyShape } = passwordPolicySchema;

type IdParams = { Params: { identifier: string } };
const idParams = { type: 'object', required: ['identifier'], properties: { identifier: identifierSchema } } as const;

const actorOf = (request: FastifyRequest): Actor => ({ tenant: request.tenant, identifier: request.principal!.identifier });
const tags = ['security'];

/**
 * /api/v1/security/identity/locals/: the configuration set (GET, GET :identifier, POST, PUT,
 * DELETE :identifier) and the common password routes (PATCH, POST password, GET password/:identifier).
 */
export async function localIdentityRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const locals = new LocalIdentityService(ctx);
  app.addSchema(localIdentitySchema);
  const one = { 200: { $ref: 'LocalIdentity#' } };

  app.get(`${BASE}/`, {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List local identities (never their passwords)', response: { 200: { type: 'array', items: { $ref: 'LocalIdentity#' } } } },
    handler: (request) => locals.list(request.tenant),
  });

  app.get<IdParams>(`${BASE}/:identifier`, {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get a local identity', params: idParams, response: one },
    handler: (request) => locals.get(request.tenant, request.params.identifier),
  });

  app.post<{ Body: IdentityBody }>(`${BASE}/`, {
    config: { capability: 'configuration', access: WRITE },
    schema: {
      tags,
      summary: 'Create a local identity (the password, if given, must satisfy the Default password policy)',
      body: identityInput,
      response: { 201: { $ref: 'LocalIdentity#' } },
    },
    handler: async (request, reply) => {
      const b = request.body;
      const input = { identifier: b.identifier, name: b.name ?? null, email: b.email ?? null, enabled: b.enabled ?? true };
      return reply.code(201).send(await locals.create(actorOf(request), input, b.password ?? null));
    },
  });

  app.put<{ Body: IdentityBody }>(`${BASE}/`, {
    config: { capability: 'configuration', access: WRITE },
    schema: {
      tags,
      summary: 'Update the local identity named in the body: name, email, enabled (left out: unchanged; null clears), and the password if given',
      body: identityInput,
      response: one,
    },
    handler: (request) => {
      const b = request.body;
      const changes: LocalIdentityChanges = {};
      if (b.name !== undefined) changes.name = b.name;
      if (b.email !== undefined) changes.email = b.email;
      if (b.enabled !== undefined) changes.enabled = b.enabled;
      return locals.update(actorOf(request), b.identifier, changes, b.password ?? null);
    },
  });

  app.delete<IdParams>(`${BASE}/:identifier`, {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete a local identity (not your own)', params: idParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await locals.remove(actorOf(request), request.params.identifier);
      return reply.code(204).send();
    },
  });

  // Common routes: password management any UI (and Horizon's secret engine) uses.

  app.patch<{ Body: { identifier: string; password: string } }>(`${BASE}/`, {
    config: { capability: 'common', access: { ...WRITE, orSelf: 'body.identifier' } },
    schema: { tags, summary: "Set a local identity's password (administrators, or the account itself)", body: patchInput, response: one },
    handler: (request) => {
      const principal = request.principal!;
      // orSelf matches identifiers only: someone another provider logged in as "bob" is not the local
      // account "bob", and must not take it over by setting its password.
      if (!principal.permissions.allows(WRITE.permission) && principal.identityProviderType !== 'local') {
        throw new ProblemError('SEC-PERM-001', { message: `This operation requires the permission ${WRITE.permission}` });
      }
      return locals.setPassword(actorOf(request), request.body.identifier, request.body.password);
    },
  });

  app.post<{ Body: ChangeBody }>(`${BASE}/password`, {
    config: { capability: 'common', access: 'authenticated' },
    schema: {
      tags,
      summary: 'Change your own password: the current one (currentPassword or oldPassword) and the new one (password or newPassword)',
      body: changeInput,
      response: one,
    },
    handler: (request) => {
      const b = request.body;
      const actor = actorOf(request);
      if (b.identifier !== undefined && b.identifier !== actor.identifier) {
        throw new ProblemError('SEC-PERM-001', { message: 'This route changes your own password only; an administrator sets others with PATCH' });
      }
      return locals.changeOwnPassword(actor, (b.currentPassword ?? b.oldPassword)!, (b.password ?? b.newPassword)!);
    },
  });

  app.get<IdParams>(`${BASE}/password/:identifier`, {
    config: { capability: 'common', access: { ...READ, orSelf: 'params.identifier' } },
    schema: { tags, summary: "The password policy a local identity's password must satisfy", params: idParams, response: { 200: policyShape } },
    handler: (request) => locals.policyFor(request.tenant, request.params.identifier),
  });
}
