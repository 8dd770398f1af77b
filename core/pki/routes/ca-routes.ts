import type { FastifyInstance } from 'fastify';
import { DURATION_PATTERN } from '../cas/duration.js';
import type { CaInput } from '../cas/service.js';
import { caSchema } from '../cas/schema.js';
import { pkiServices } from '../cas/services.js';
import type { PkiRouteContext } from '../index.js';

/*
 * CAs are on the configuration registry (cas/config-type.ts: export/import as their certificate and settings,
 * the cookbook), but these routes stay theirs: a CA's answer is derived from its certificate (subject, issuer,
 * thumbprint, validity) rather than echoed from what was stored, PUT may rename by `_id`, and Horizon-only
 * fields a client echoes are accepted and ignored.
 */

const READ = { permission: 'configuration:cas:read' } as const;
const WRITE = { permission: 'configuration:cas:write' } as const;
const tags = ['ca'];

const duration = { type: ['string', 'null'], pattern: DURATION_PATTERN } as const;

/**
 * What a client sends: Horizon's CertificateAuthorityRequest fields (plus `trusted`). Server-owned
 * fields a client echoes back from a GET are accepted and ignored; anything else unknown is refused.
 */
const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
    certificate: { type: 'string', minLength: 1, maxLength: 200_000 },
    trusted: { type: 'boolean' },
    trustedForServerAuthentication: { type: 'boolean' },
    trustedForClientAuthentication: { type: 'boolean' },
    crlUrl: { type: ['string', 'null'], maxLength: 2048 },
    responderUrl: { type: ['string', 'null'], maxLength: 2048 },
    outdatedRevocationStatusPolicy: { type: 'string', minLength: 1, maxLength: 32 },
    public: { type: 'boolean' },
    downloadable: { type: 'boolean' },
    refresh: duration,
    timeout: duration,
    // Echoed or Horizon-only fields, ignored.
    _id: { type: 'string' },
    id: { type: 'string' },
    subjectKeyIdentifier: {},
    authorityKeyIdentifier: {},
    proxy: {},
    cacheTimeToIdle: {},
    dn: {},
    issuer: {},
    serial: {},
    notBefore: {},
    notAfter: {},
    selfSigned: {},
    thumbprint: {},
    publicKeyThumbprint: {},
  },
} as const;

type Body = CaInput & { _id?: string; id?: string };
const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;

const input = (b: Body): CaInput => ({
  name: b.name,
  certificate: b.certificate,
  trusted: b.trusted,
  trustedForServerAuthentication: b.trustedForServerAuthentication,
  trustedForClientAuthentication: b.trustedForClientAuthentication,
  crlUrl: b.crlUrl,
  responderUrl: b.responderUrl,
  outdatedRevocationStatusPolicy: b.outdatedRevocationStatusPolicy,
  public: b.public,
  downloadable: b.downloadable,
  refresh: b.refresh,
  timeout: b.timeout,
});

/** /api/v1/cas/: the standard set (GET, GET :name, POST, PUT on the collection, DELETE :name). */
export async function caRoutes(app: FastifyInstance, ctx: PkiRouteContext): Promise<void> {
  const { cas } = pkiServices(ctx);
  app.addSchema(caSchema);
  const one = { 200: { $ref: 'CertificateAuthority#' } };
  const who = (request: { principal?: { identifier: string } | null }) => request.principal?.identifier ?? null;

  app.get('/api/v1/cas/', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List the imported CAs', response: { 200: { type: 'array', items: { $ref: 'CertificateAuthority#' } } } },
    handler: (request) => cas.list(request.tenant),
  });

  app.get<{ Params: { name: string } }>('/api/v1/cas/:name', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get an imported CA', params: nameParams, response: one },
    handler: (request) => cas.get(request.tenant, request.params.name),
  });

  app.post<{ Body: Body }>('/api/v1/cas/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Import a CA certificate', body: inputSchema, response: { 201: { $ref: 'CertificateAuthority#' } } },
    handler: async (request, reply) => reply.code(201).send(await cas.create(request.tenant, input(request.body), who(request))),
  });

  app.put<{ Body: Body }>('/api/v1/cas/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Update an imported CA (named by _id, or by name)', body: inputSchema, response: one },
    handler: (request) => cas.update(request.tenant, request.body._id ?? request.body.id ?? request.body.name, input(request.body), who(request)),
  });

  app.delete<{ Params: { name: string } }>('/api/v1/cas/:name', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete an imported CA (and its cached CRL)', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await cas.remove(request.tenant, request.params.name, who(request));
      return reply.code(204).send();
    },
  });
}
