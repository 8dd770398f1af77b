import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { SEARCH_SCOPES } from '../permissions/catalogue.js';
import type { SecurityRouteContext } from '../route-context.js';
import { PrincipalDocuments, type Owner } from './documents.js';
import { documentProblem, NAME_SCHEMA, refuseInvalid, withoutName } from './limits.js';

/** Largest saved query, as compact JSON. */
export const MAX_QUERY_BYTES = 64 * 1024;
/** Most saved queries one principal keeps. */
export const MAX_QUERIES = 500;

const BASE = '/api/v1/security/principals/queries';
const tags = ['security'];
const config = { capability: 'common', access: 'authenticated' } as const;

/**
 * What a saved query searches: the search it belongs to, or the name of its query language in lower case
 * (hcql, hrql, heql, hdql, and hpql for principals), as the vendor's MCP server sends it
 * (horizon-mcp src/tools/dashboards.ts).
 */
export const SAVED_QUERY_TYPES = [...SEARCH_SCOPES, 'hcql', 'hrql', 'heql', 'hdql', 'hpql'] as const;

/** A saved search; display keys beyond these (columns, widths…) are kept as sent. */
const savedQuerySchema = {
  $id: 'SavedQuery',
  type: 'object',
  required: ['name', 'type', 'query'],
  additionalProperties: true,
  properties: {
    name: NAME_SCHEMA,
    type: { type: 'string', enum: [...SAVED_QUERY_TYPES] },
    query: { type: 'string', maxLength: 16384, description: 'The search query (HCQL)' },
    fields: { type: 'array', items: { type: 'string' }, description: 'Result columns' },
    sortedBy: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Sort order, as the search takes it' },
  },
} as const;

const nameParams = { type: 'object', required: ['name'], properties: { name: NAME_SCHEMA } } as const;
const owner = (request: FastifyRequest): Owner => ({ tenant: request.principal!.tenant, principal: request.principal!.identifier });
const notFound = (name: string) => new ProblemError('SEC-QUERY-003', { message: `You have no saved query named "${name}"` });

/** /api/v1/security/principals/queries: the caller's own saved searches (no one sees another's). */
export async function savedQueryRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const queries = new PrincipalDocuments(ctx.knex, 'security_principal_queries', ctx.clock, MAX_QUERIES);
  app.addSchema(savedQuerySchema);
  const one = { $ref: 'SavedQuery#' };

  app.get<{ Querystring: { type?: string } }>(BASE, {
    config,
    schema: {
      tags,
      summary: 'Your saved queries, by name; `type` keeps those of one type',
      querystring: { type: 'object', properties: { type: { type: 'string', maxLength: 64 } } },
      response: { 200: { type: 'array', items: one } },
    },
    handler: async (request) => {
      const all = await queries.list(owner(request));
      const { type } = request.query;
      return type === undefined ? all : all.filter((q) => q.type === type);
    },
  });

  app.get<{ Params: { name: string } }>(`${BASE}/:name`, {
    config,
    attachValidation: true,
    schema: { tags, summary: 'One of your saved queries', params: nameParams, response: { 200: one } },
    handler: async (request) => {
      refuseInvalid(request, 'SEC-QUERY-002', 'query name');
      const found = await queries.get(owner(request), request.params.name);
      if (!found) throw notFound(request.params.name);
      return found;
    },
  });

  app.post<{ Body: Record<string, unknown> & { name: string } }>(BASE, {
    config,
    attachValidation: true,
    schema: {
      tags,
      summary: `Save a query: creates it (201) or replaces the one of the same name (200). At most ${MAX_QUERIES} per principal, ${MAX_QUERY_BYTES / 1024} KiB each`,
      body: one,
      response: { 200: one, 201: one },
    },
    handler: async (request, reply) => {
      refuseInvalid(request, 'SEC-QUERY-002', 'saved query');
      const { name } = request.body;
      const body = withoutName(request.body);
      const problem = documentProblem(body, MAX_QUERY_BYTES);
      if (problem) throw new ProblemError('SEC-QUERY-002', { message: `Invalid saved query: ${problem}` });
      const outcome = await queries.save(owner(request), name, body);
      if (outcome === 'full') throw new ProblemError('SEC-QUERY-002', { message: `You already have ${MAX_QUERIES} saved queries: delete some first` });
      return reply.code(outcome === 'created' ? 201 : 200).send({ ...body, name });
    },
  });

  app.delete<{ Params: { name: string } }>(`${BASE}/:name`, {
    config,
    attachValidation: true,
    schema: { tags, summary: 'Delete one of your saved queries', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      refuseInvalid(request, 'SEC-QUERY-002', 'query name');
      if (!(await queries.remove(owner(request), request.params.name))) throw notFound(request.params.name);
      return reply.code(204).send();
    },
  });
}
