import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { recordedWrite } from '../../config-objects/own-routes.js';
import { configurationPermission } from '../permissions/catalogue.js';
import type { SecurityRouteContext } from '../route-context.js';
import type { IdentityProviderConfig, IdentityProviderInput } from './service.js';

/*
 * Identity providers are on the configuration registry (config-type.ts: export/import, the cookbook, reference
 * checks), but these routes stay theirs: POST search and the public dynamic/enabled list are not in the
 * standard set, and their answers carry createdAt/updatedAt and SEC-IDP-002 for any malformed body.
 */

const BASE = '/api/v1/security/identity/providers';
const READ = { permission: configurationPermission('identity-providers', 'read') } as const;
const WRITE = { permission: configurationPermission('identity-providers', 'write') } as const;
const tags = ['security'];

const NAME = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]*[^/\\s][^/]*$' } as const;

const providerSchema = {
  $id: 'IdentityProvider',
  type: 'object',
  required: ['_id', 'name', 'type', 'enabled', 'config', 'createdAt', 'updatedAt'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', description: 'A provider type a loaded identity-provider plugin registers' },
    enabled: { type: 'boolean' },
    config: { type: 'object', additionalProperties: true, description: 'Validated against the type\'s configSchema; secret fields answer "********"' },
    createdAt: { type: 'integer', description: 'epoch ms' },
    updatedAt: { type: 'integer', description: 'epoch ms' },
  },
} as const;

/**
 * What a client sends. Server-owned fields echoed back from a GET are accepted and ignored; anything
 * else unknown is refused (a misspelt "enable" must not silently enable the provider).
 */
const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    _id: {},
    id: {},
    createdAt: {},
    updatedAt: {},
    name: NAME,
    type: { type: 'string', minLength: 1, maxLength: 64 },
    enabled: { type: 'boolean', default: true },
    config: { type: 'object', default: {} },
  },
} as const;

/** Search body; unknown fields (sort hints of other clients) are ignored. */
const searchSchema = {
  type: 'object',
  properties: {
    query: { type: 'string', maxLength: 191, description: 'Substring of the name (case-insensitive)' },
    type: { type: 'string', maxLength: 64 },
    enabled: { type: 'boolean' },
    pageIndex: { type: 'integer', minimum: 1, default: 1, description: '1-based' },
    pageSize: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    withCount: { type: 'boolean', default: false },
  },
} as const;

interface SearchBody {
  query?: string;
  type?: string;
  enabled?: boolean;
  pageIndex: number;
  pageSize: number;
  withCount: boolean;
}

const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;

/** Bad input answers SEC-IDP-002 (clients map …-002 to "invalid"), not the generic HTTP-003. */
function refuseInvalid(request: FastifyRequest): void {
  const error = request.validationError;
  if (error) throw new ProblemError('SEC-IDP-002', { message: `Invalid identity provider: ${error.message}` });
}

const input = (b: IdentityProviderInput): IdentityProviderInput => ({ name: b.name, type: b.type, enabled: b.enabled, config: b.config });

function search(all: IdentityProviderConfig[], s: SearchBody): Record<string, unknown> {
  const needle = s.query?.toLowerCase();
  const matching = all.filter(
    (p) => (!needle || p.name.toLowerCase().includes(needle)) && (s.type === undefined || p.type === s.type) && (s.enabled === undefined || p.enabled === s.enabled),
  );
  const start = (s.pageIndex - 1) * s.pageSize;
  const page = {
    results: matching.slice(start, start + s.pageSize),
    pageIndex: s.pageIndex,
    pageSize: s.pageSize,
    hasMore: start + s.pageSize < matching.length,
  };
  return s.withCount ? { ...page, count: matching.length } : page;
}

/**
 * /api/v1/security/identity/providers/: the standard set over IdentityProviderService, POST search, and
 * the public list of enabled providers the login page offers. Changes apply to the next request (the
 * service drops its caches), without a restart.
 */
export async function identityProviderRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const { providers } = ctx;
  app.addSchema(providerSchema);
  const one = { 200: { $ref: 'IdentityProvider#' } };

  app.get(`${BASE}/dynamic/enabled`, {
    // Public: the login page asks before anyone has logged in. Names and types only, never configuration.
    config: { capability: 'common', access: 'public' },
    schema: {
      tags,
      summary: 'The enabled identity providers a login can use: [{name, type}]',
      response: { 200: { type: 'array', items: { type: 'object', required: ['name', 'type'], properties: { name: { type: 'string' }, type: { type: 'string' } } } } },
    },
    handler: async (request) => (await providers.enabled(request.tenant)).map((p) => ({ name: p.name, type: p.type })),
  });

  app.get(`${BASE}/`, {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List identity providers', response: { 200: { type: 'array', items: { $ref: 'IdentityProvider#' } } } },
    handler: (request) => providers.list(request.tenant),
  });

  app.post<{ Body: SearchBody }>(`${BASE}/search`, {
    config: { capability: 'configuration', access: READ },
    attachValidation: true,
    schema: {
      tags,
      summary: 'Search identity providers by name substring, type and state (1-based pages)',
      body: searchSchema,
      response: {
        200: {
          type: 'object',
          required: ['results', 'pageIndex', 'pageSize', 'hasMore'],
          properties: {
            results: { type: 'array', items: { $ref: 'IdentityProvider#' } },
            pageIndex: { type: 'integer' },
            pageSize: { type: 'integer' },
            hasMore: { type: 'boolean' },
            count: { type: 'integer' },
          },
        },
      },
    },
    handler: async (request) => {
      refuseInvalid(request);
      // Providers are a handful per tenant: filtering the masked list keeps masking in one place.
      return search(await providers.list(request.tenant), request.body);
    },
  });

  app.get<{ Params: { name: string } }>(`${BASE}/:name`, {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get an identity provider', params: nameParams, response: one },
    handler: (request) => providers.get(request.tenant, request.params.name),
  });

  app.post<{ Body: IdentityProviderInput }>(`${BASE}/`, {
    config: { capability: 'configuration', access: WRITE },
    attachValidation: true,
    schema: { tags, summary: 'Create an identity provider (an instance of a provider type)', body: inputSchema, response: { 201: { $ref: 'IdentityProvider#' } } },
    handler: async (request, reply) => {
      refuseInvalid(request);
      const body = input(request.body);
      return reply.code(201).send(await recordedWrite(request, 'identity-provider', 'create', body.name, () => providers.create(request.tenant, body)));
    },
  });

  app.put<{ Body: IdentityProviderInput }>(`${BASE}/`, {
    config: { capability: 'configuration', access: WRITE },
    attachValidation: true,
    schema: {
      tags,
      summary: 'Update the identity provider named in the body (its type cannot change; a secret sent back as "********" keeps its value)',
      body: inputSchema,
      response: one,
    },
    handler: async (request) => {
      refuseInvalid(request);
      const body = input(request.body);
      return recordedWrite(request, 'identity-provider', 'update', body.name, () => providers.update(request.tenant, body));
    },
  });

  app.delete<{ Params: { name: string } }>(`${BASE}/:name`, {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete an identity provider (not the last enabled one)', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await recordedWrite(request, 'identity-provider', 'delete', request.params.name, () => providers.remove(request.tenant, request.params.name));
      return reply.code(204).send();
    },
  });
}
