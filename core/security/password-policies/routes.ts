import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';
import { recordChange } from '../audit.js';
import type { PasswordPolicyInput } from './service.js';

const READ = { permission: 'configuration:password-policies:read' } as const;
const WRITE = { permission: 'configuration:password-policies:write' } as const;
const RULES = ['minChar', 'maxChar', 'minLoChar', 'minUpChar', 'minDiChar', 'minSpChar', 'spChar'] as const;

const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;
const count = { type: 'integer' } as const;

/** client-compat §2.3 `passwordPolicy`, plus `_id`. */
export const passwordPolicySchema = {
  $id: 'PasswordPolicy',
  type: 'object',
  required: ['_id', 'name', ...RULES],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    minChar: count,
    maxChar: count,
    minLoChar: count,
    minUpChar: count,
    minDiChar: count,
    minSpChar: count,
    spChar: { type: 'string' },
  },
} as const;

/**
 * What a client sends: the name and any rules (bounds and coherence are checked by the service, which
 * names the problem). `_id`, echoed back from a GET, is accepted and ignored; anything else is refused.
 */
const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    _id: { type: 'string' },
    name: nameSchema,
    minChar: count,
    maxChar: { type: ['integer', 'null'], description: 'null: no maximum of its own (the longest allowed, 1,024), as Horizon\'s MCP server clears it' },
    minLoChar: count,
    minUpChar: count,
    minDiChar: count,
    minSpChar: count,
    spChar: { type: 'string', maxLength: 256 },
  },
} as const;

type Body = Omit<PasswordPolicyInput, 'maxChar'> & { _id?: string; maxChar?: number | null };

/** The longest password a policy may ask for (policy.ts checks maxChar within 1..1024). */
const LONGEST = 1024;
type NameParams = { Params: { name: string } };
const nameParams = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;

/** Only the fields the client sent, so the service can fill the others (defaults or current values). */
const input = (body: Body): PasswordPolicyInput => {
  const out: PasswordPolicyInput = { name: body.name };
  for (const rule of RULES) if (body[rule] !== undefined) (out as Record<string, unknown>)[rule] = rule === 'maxChar' && body[rule] === null ? LONGEST : body[rule];
  return out;
};
const tags = ['security'];

/** /api/v1/security/passwordpolicies/: the standard set, plus GET :name/generate (common to every UI). */
export async function passwordPolicyRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const policies = ctx.passwordPolicies;
  app.addSchema(passwordPolicySchema);
  const one = { 200: { $ref: 'PasswordPolicy#' } };

  app.get('/api/v1/security/passwordpolicies/', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List password policies', response: { 200: { type: 'array', items: { $ref: 'PasswordPolicy#' } } } },
    handler: (request) => policies.list(request.tenant),
  });

  app.get<NameParams>('/api/v1/security/passwordpolicies/:name', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get a password policy', params: nameParams, response: one },
    handler: (request) => policies.get(request.tenant, request.params.name),
  });

  app.get<NameParams>('/api/v1/security/passwordpolicies/:name/generate', {
    // Any logged-in user enrolling asks for one (Ansible: Horizon-Default, an alias of Default).
    config: { capability: 'common', access: 'authenticated' },
    schema: {
      tags,
      summary: 'Generate a password satisfying the policy (a JSON string); Horizon-Default means Default unless a policy has that name',
      params: nameParams,
      response: { 200: { type: 'string' } },
    },
    handler: async (request, reply) =>
      // Serialized here: a bare string would otherwise go out as text/plain.
      reply.type('application/json').send(JSON.stringify(await policies.generate(request.tenant, request.params.name))),
  });

  app.post<{ Body: Body }>('/api/v1/security/passwordpolicies/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Create a password policy (rules left out take the Default values)', body: inputSchema, response: { 201: { $ref: 'PasswordPolicy#' } } },
    handler: async (request, reply) => {
      const created = await policies.create(request.tenant, input(request.body));
      await recordChange(ctx, request, { code: 'SEC-PWD-CREATED', objectType: 'password-policy', objectId: created.name, payload: { policy: created } }, 'none');
      return reply.code(201).send(created);
    },
  });

  app.put<{ Body: Body }>('/api/v1/security/passwordpolicies/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Update the password policy named in the body (rules left out keep their value)', body: inputSchema, response: one },
    handler: async (request) => {
      const updated = await policies.update(request.tenant, input(request.body));
      await recordChange(ctx, request, { code: 'SEC-PWD-UPDATED', objectType: 'password-policy', objectId: updated.name, payload: { policy: updated } }, 'none');
      return updated;
    },
  });

  app.delete<NameParams>('/api/v1/security/passwordpolicies/:name', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete a password policy (not Default)', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await policies.remove(request.tenant, request.params.name);
      await recordChange(ctx, request, { code: 'SEC-PWD-DELETED', objectType: 'password-policy', objectId: request.params.name, payload: {} }, 'none');
      return reply.code(204).send();
    },
  });
}
