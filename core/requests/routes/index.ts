import { localizedOutput } from '../../http/localized-text.js';
import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';
import type { PkiGateway } from '../../pki/connectors/types.js';
import type { ProfileService, Workflow } from '../../profiles/types.js';
import type { SecurityCore } from '../../security/index.js';
import { ID_PATTERN } from '../../db/ids.js';
import { RequestWorkflows } from '../workflow/service.js';
import { requestSearchRoutes } from './search.js';

export interface RequestDeps {
  gateway: PkiGateway;
  profiles: ProfileService;
  security: SecurityCore;
}

const tags = ['requests'];
const config = { capability: 'webra', access: 'authenticated' } as const;
const WORKFLOWS: readonly Workflow[] = ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'];

/** Tolerant bodies (client-compat §2.2): any object; the workflow reads what it knows and ignores the rest. */
const anyBody = { type: 'object', additionalProperties: true } as const;

/** The request object of client-compat §2.5 (v2 Go required keys always present). */
const requestObjectSchema = {
  type: 'object',
  required: ['_id', 'module', 'workflow', 'status', 'profile', 'template', 'holderId', 'registrationDate', 'lastModificationDate', 'removeAt'],
  additionalProperties: true,
  properties: {
    _id: { type: 'string' },
    module: { type: 'string' },
    workflow: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'approved', 'denied', 'canceled', 'completed'] },
    profile: { type: ['string', 'null'] },
    template: { type: 'object', additionalProperties: true },
    holderId: { type: ['string', 'null'] },
    globalHolderIdCount: { type: 'integer', description: 'GET: certificates of this holder id currently valid, in the tenant' },
    profileHolderIdCount: { type: 'integer', description: "GET: certificates of this holder id currently valid, in the request's profile" },
    registrationDate: { type: 'integer' },
    lastModificationDate: { type: 'integer' },
    removeAt: { type: ['integer', 'null'] },
    retryCount: { type: 'integer' },
    retryAt: { type: 'integer' },
    labels: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } } } },
    metadata: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } } } },
    pkcs12: { type: 'object', properties: { value: { type: 'string' } } },
    password: { type: 'object', properties: { value: { type: 'string' } } },
    certificate: { type: 'object', additionalProperties: true },
    permissions: { type: 'object', additionalProperties: { type: 'boolean' } },
  },
} as const;

/**
 * /api/v1/requests/… (client-compat §2) and /api/v1/challenge/submit; registers the gateway's completion
 * handlers. Access is `authenticated` on every route: what a principal may do is decided per request from
 * the profile's rights (lifecycle permissions and the profile's authorizations).
 */
export async function registerRequests(app: FastifyInstance, services: CoreServices, deps: RequestDeps): Promise<RequestWorkflows> {
  const workflows = new RequestWorkflows(services, deps);
  deps.gateway.setHandlers({
    issued: (trx, tenant, requestId, outcome) => workflows.completions.issued(trx, tenant, requestId, outcome),
    revoked: (trx, tenant, requestId, outcome) => workflows.completions.revoked(trx, tenant, requestId, outcome),
  });

  app.post('/api/v1/requests/template', {
    config,
    schema: {
      tags,
      summary: 'The template of a workflow on a profile (elements, capabilities)',
      body: anyBody,
      response: {
        200: {
          type: 'object',
          required: ['module', 'workflow', 'profile', 'template'],
          additionalProperties: true,
          properties: { module: { type: 'string' }, workflow: { type: 'string' }, profile: { type: 'string' }, certificateId: { type: 'string' }, template: { type: 'object', additionalProperties: true } },
        },
      },
    },
    handler: async (request) => workflows.template(request, request.body),
  });

  app.post('/api/v1/requests/submit', {
    config,
    schema: {
      tags,
      summary: 'Submit a request (any workflow): completed at once with direct rights, pending with request rights',
      body: anyBody,
      response: { 201: requestObjectSchema },
    },
    handler: async (request, reply) => reply.code(201).send(await workflows.submit(request, request.body)),
  });

  for (const [verb, summary] of [
    ['approve', 'Approve a pending request (then it runs)'],
    ['deny', 'Deny a pending request'],
    ['cancel', 'Cancel a pending request (its requester, or an approver)'],
  ] as const) {
    app.post(`/api/v1/requests/${verb}`, {
      config,
      schema: { tags, summary, body: anyBody, response: { 200: requestObjectSchema } },
      handler: async (request) => workflows[verb](request, request.body),
    });
  }

  app.get<{ Querystring: { module?: string; workflow?: string } }>('/api/v1/requests/profiles', {
    config,
    schema: {
      tags,
      summary: 'Profiles the caller may use for a workflow (direct or request rights)',
      querystring: { type: 'object', properties: { module: { type: 'string' }, workflow: { type: 'string' } } },
      response: {
        200: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'module'],
            properties: {
              name: { type: 'string' },
              module: { type: 'string' },
              description: localizedOutput,
              pkiConnector: { type: 'string' },
              rights: { type: 'object', properties: { direct: { type: 'boolean' }, request: { type: 'boolean' }, approve: { type: 'boolean' } } },
            },
          },
        },
      },
    },
    handler: async (request) => {
      const workflow = (WORKFLOWS as readonly string[]).includes(request.query.workflow ?? '') ? (request.query.workflow as Workflow) : 'enroll';
      const out = [];
      for (const profile of await deps.profiles.list(request.tenant)) {
        if (!profile.enabled) continue;
        if (request.query.module && profile.module !== request.query.module.toLowerCase()) continue;
        const rights = deps.profiles.rightsOf(profile, request.principal!, workflow);
        if (!rights.direct && !rights.request) continue;
        out.push({ name: profile.name, module: profile.module, ...(profile.description ? { description: profile.description } : {}), pkiConnector: profile.pkiConnector, rights });
      }
      return out;
    },
  });

  await requestSearchRoutes(app, services, { store: workflows.store, profiles: deps.profiles });

  // After the static siblings (search/dictionary, profiles), which fastify's router prefers anyway.
  app.get<{ Params: { id: string } }>('/api/v1/requests/:id', {
    config,
    schema: {
      tags,
      summary: 'A request, with what the caller may do with it (permissions), its holder\'s valid certificates (globalHolderIdCount, profileHolderIdCount); one-time values read once by the requester',
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: ID_PATTERN } } },
      response: { 200: requestObjectSchema },
    },
    handler: async (request) => workflows.get(request, request.params.id.toLowerCase()),
  });

  app.post<{ Body: { challenge?: unknown; csr?: unknown } }>('/api/v1/challenge/submit', {
    config: { capability: 'webra', access: 'public' },
    schema: {
      tags,
      summary: 'Consume a one-time challenge with a CSR: the approved request completes with its certificate',
      body: { type: 'object', additionalProperties: true, properties: { challenge: { type: 'string' }, csr: { type: 'string' } } },
      response: { 200: requestObjectSchema },
    },
    handler: async (request) => workflows.consumeChallenge(request.tenant, request.body ?? {}),
  });
  return workflows;
}
