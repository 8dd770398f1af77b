import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { SecurityRouteContext } from '../route-context.js';
import { PrincipalDocuments, type Owner } from './documents.js';
import { documentProblem, NAME_SCHEMA, refuseInvalid, withoutName } from './limits.js';

/** Largest dashboard (widget layout), as compact JSON. */
export const MAX_DASHBOARD_BYTES = 256 * 1024;
/** Most dashboards one principal keeps. */
export const MAX_DASHBOARDS = 100;

const BASE = '/api/v1/security/principals/dashboards';
const tags = ['security'];
const config = { capability: 'webra', access: 'authenticated' } as const;

/** A dashboard is the client's widget layout, opaque to the server, keyed by its name. */
const dashboardSchema = {
  $id: 'Dashboard',
  type: 'object',
  required: ['name'],
  additionalProperties: true,
  properties: { name: NAME_SCHEMA },
} as const;

type Body = Record<string, unknown> & { name: string };
const nameParams = { type: 'object', required: ['name'], properties: { name: NAME_SCHEMA } } as const;
const owner = (request: FastifyRequest): Owner => ({ tenant: request.principal!.tenant, principal: request.principal!.identifier });
const notFound = (name: string) => new ProblemError('SEC-DASH-003', { message: `You have no dashboard named "${name}"` });

/** The body to store, or a 400 SEC-DASH-002. */
function checked(request: FastifyRequest<{ Body: Body }>): Record<string, unknown> {
  refuseInvalid(request, 'SEC-DASH-002', 'dashboard');
  const body = withoutName(request.body);
  const problem = documentProblem(body, MAX_DASHBOARD_BYTES);
  if (problem) throw new ProblemError('SEC-DASH-002', { message: `Invalid dashboard: ${problem}` });
  return body;
}

/** /api/v1/security/principals/dashboards: the caller's own dashboards (webra). */
export async function dashboardRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const dashboards = new PrincipalDocuments(ctx.knex, 'security_dashboards', ctx.clock, MAX_DASHBOARDS);
  app.addSchema(dashboardSchema);
  const one = { $ref: 'Dashboard#' };
  // The self view lists the dashboards (customDashboards): drop this principal's cached copy.
  const changed = (request: FastifyRequest): void => ctx.invalidate({ tenant: request.tenant, identifier: request.principal!.identifier });

  app.get(BASE, {
    config,
    schema: { tags, summary: 'Your dashboards, by name', response: { 200: { type: 'array', items: one } } },
    handler: (request) => dashboards.list(owner(request)),
  });

  app.get<{ Params: { name: string } }>(`${BASE}/:name`, {
    config,
    attachValidation: true,
    schema: { tags, summary: 'One of your dashboards', params: nameParams, response: { 200: one } },
    handler: async (request) => {
      refuseInvalid(request, 'SEC-DASH-002', 'dashboard name');
      const found = await dashboards.get(owner(request), request.params.name);
      if (!found) throw notFound(request.params.name);
      return found;
    },
  });

  app.post<{ Body: Body }>(BASE, {
    config,
    attachValidation: true,
    schema: {
      tags,
      summary: `Create a dashboard (at most ${MAX_DASHBOARDS} per principal, ${MAX_DASHBOARD_BYTES / 1024} KiB each)`,
      body: one,
      response: { 201: one },
    },
    handler: async (request, reply) => {
      const body = checked(request);
      const { name } = request.body;
      const outcome = await dashboards.insert(owner(request), name, body);
      if (outcome === 'exists') throw new ProblemError('SEC-DASH-004', { message: `You already have a dashboard named "${name}"` });
      if (outcome === 'full') throw new ProblemError('SEC-DASH-002', { message: `You already have ${MAX_DASHBOARDS} dashboards: delete some first` });
      changed(request);
      return reply.code(201).send({ ...body, name });
    },
  });

  app.put<{ Body: Body }>(BASE, {
    config,
    attachValidation: true,
    schema: { tags, summary: 'Replace the dashboard named in the body', body: one, response: { 200: one } },
    handler: async (request) => {
      const body = checked(request);
      const { name } = request.body;
      if (!(await dashboards.update(owner(request), name, body))) throw notFound(name);
      changed(request);
      return { ...body, name };
    },
  });

  app.delete<{ Params: { name: string } }>(`${BASE}/:name`, {
    config,
    attachValidation: true,
    schema: { tags, summary: 'Delete one of your dashboards', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      refuseInvalid(request, 'SEC-DASH-002', 'dashboard name');
      if (!(await dashboards.remove(owner(request), request.params.name))) throw notFound(request.params.name);
      changed(request);
      return reply.code(204).send();
    },
  });
}
