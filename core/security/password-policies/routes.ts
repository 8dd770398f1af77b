import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';

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

type NameParams = { Params: { name: string } };
const nameParams = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;
const tags = ['security'];

/**
 * GET /api/v1/security/passwordpolicies/:name/generate (common to every UI). The standard set comes from
 * the configuration registry (config-type.ts).
 */
export async function passwordPolicyRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const policies = ctx.passwordPolicies;

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
}
