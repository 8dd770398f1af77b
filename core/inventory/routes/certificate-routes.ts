import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isId } from '../../db/ids.js';
import { ProblemError } from '../../errors/index.js';
import type { InventoryContext } from '../index.js';
import { certificatePermissionsSchema, permissionsOf } from '../permissions.js';
import { lifecyclePermission } from '../../security/permissions/catalogue.js';
import { parseInventoryCertificate } from '../repository.js';
import { certificateVisible } from '../search/visibility.js';
import type { CertificateInput, CertificateObject } from '../types.js';
import { certificateObjectSchema } from '../view.js';

const CAPABILITY = 'webra' as const;
const READ = { permission: 'search:certificates' } as const;
const BASE = '/api/v1/certificates';
const tags = ['certificates'];
/** Import and find bodies: a certificate with its attributes, never near fastify's global limit. */
const BODY_LIMIT = 256 * 1024;

const withPermissionsSchema = {
  type: 'object',
  required: ['certificate', 'permissions'],
  properties: { certificate: certificateObjectSchema, permissions: certificatePermissionsSchema },
} as const;

/** Module and profile names become permission segments: the same characters. */
const SEGMENT = { type: ['string', 'null'], maxLength: 191, pattern: '^[A-Za-z0-9._@-]*$' } as const;
const text = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;
const keyValues = {
  type: ['array', 'null'],
  maxItems: 1000,
  items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } },
} as const;

/** Unknown fields are tolerated (client-compat §9.3): clients send more than the server reads. */
const importSchema = {
  type: 'object',
  required: ['certificate'],
  properties: {
    certificate: { type: 'string', minLength: 1, description: 'PEM of the certificate' },
    module: { ...SEGMENT, maxLength: 64, description: 'Default: webra when a profile is given, else discovery' },
    profile: SEGMENT,
    owner: text(191),
    team: text(191),
    contactEmail: text(320),
    labels: keyValues,
    metadata: keyValues,
    holderId: text(191),
  },
} as const;

const findSchema = {
  type: 'object',
  properties: { certificate: { type: 'string', description: 'PEM of the certificate' }, pem: { type: 'string', description: 'Same as certificate' } },
} as const;

/** What an import may set beside the certificate itself. */
type ImportBody = Pick<CertificateInput, 'certificate' | 'module' | 'profile' | 'owner' | 'team' | 'contactEmail' | 'labels' | 'metadata' | 'holderId'>;

const none = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

/** The path parameter, whether the PEM came percent-encoded (`:id`) or with raw slashes (`*`). */
const pathValue = (request: FastifyRequest): string => {
  const params = request.params as { id?: string; '*'?: string };
  return params.id ?? params['*'] ?? '';
};

/**
 * GET /api/v1/certificates/{id | url-encoded PEM}, POST /api/v1/certificates/find and the import
 * POST /api/v1/certificates/ (webra capability). Reads need search:certificates and stay within its
 * filters (403 outside); an import needs lifecycle:<module>:<profile|none>:import:direct.
 */
export async function certificateRoutes(app: FastifyInstance, ctx: InventoryContext): Promise<void> {
  const { repository } = ctx;

  const visible = async (request: FastifyRequest, certificate: CertificateObject): Promise<CertificateObject> => {
    if (!(await certificateVisible(ctx, request, certificate._id))) {
      throw new ProblemError('SEC-PERM-001', { message: 'The filters of your search:certificates permissions do not cover this certificate' });
    }
    return certificate;
  };

  const byPem = async (request: FastifyRequest, pem: string): Promise<CertificateObject> => {
    const info = parseInventoryCertificate(pem);
    const certificate = await repository.getByThumbprint(request.tenant, info.thumbprint);
    if (!certificate) throw new ProblemError('CRT-003', { detail: `No certificate has the thumbprint ${info.thumbprint}` });
    return visible(request, certificate);
  };

  const get = async (request: FastifyRequest) => {
    const value = pathValue(request);
    if (value.includes('BEGIN')) return byPem(request, value);
    const certificate = isId(value) ? await repository.get(request.tenant, value) : null;
    if (!certificate) throw new ProblemError('CRT-003', { detail: `No certificate ${value.slice(0, 64)}` });
    await visible(request, certificate);
    return { certificate, permissions: permissionsOf(request, certificate) };
  };

  const getSchema = {
    tags,
    summary: 'Get a certificate by _id, or by its URL-encoded PEM',
    description:
      'With a 24-hex _id: `{certificate, permissions}` (the caller\'s rights on the certificate\'s workflows). With a URL-encoded PEM (contains "BEGIN"): the bare certificate object, found by thumbprint.',
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: '_id (24 hex characters) or URL-encoded PEM' } } },
    response: { 200: { anyOf: [withPermissionsSchema, certificateObjectSchema] } },
  };
  app.get(`${BASE}/:id`, { config: { capability: CAPABILITY, access: READ }, schema: getSchema, handler: get });
  // A PEM whose slashes were not percent-encoded spans several path segments.
  app.get(`${BASE}/*`, {
    config: { capability: CAPABILITY, access: READ },
    schema: { hide: true, response: getSchema.response },
    handler: get,
  });

  app.post<{ Body: { certificate?: string; pem?: string } }>(`${BASE}/find`, {
    config: { capability: CAPABILITY, access: READ },
    bodyLimit: BODY_LIMIT,
    schema: { tags, summary: 'Find a certificate by its PEM', body: findSchema, response: { 200: certificateObjectSchema } },
    handler: async (request) => {
      const pem = request.body.certificate || request.body.pem;
      if (!pem) throw new ProblemError('PKI-001', { detail: 'send the certificate as {"certificate": "<PEM>"}' });
      return byPem(request, pem);
    },
  });

  app.post<{ Body: ImportBody }>(`${BASE}/`, {
    config: { capability: CAPABILITY, access: 'authenticated' },
    bodyLimit: BODY_LIMIT,
    schema: {
      tags,
      summary: 'Import a certificate into the inventory',
      description: 'Needs lifecycle:<module>:<profile, or "none">:import:direct. Answers the certificate object; CRT-004 (with the existing _id) when it is already there.',
      body: importSchema,
      response: { 201: certificateObjectSchema },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const profile = none(body.profile);
      const module = none(body.module) ?? (profile ? 'webra' : 'discovery');
      const required = lifecyclePermission(module, profile ?? 'none', 'import', 'direct');
      if (!request.principal!.permissions.allows(required)) {
        throw new ProblemError('SEC-PERM-001', { message: `This operation requires the permission ${required}` });
      }
      const certificate = await repository.insert(request.tenant, {
        certificate: body.certificate,
        module,
        profile,
        owner: none(body.owner),
        team: none(body.team),
        contactEmail: none(body.contactEmail),
        labels: body.labels ?? [],
        metadata: body.metadata ?? [],
        holderId: none(body.holderId),
      });
      await ctx.events.append({
        tenant: request.tenant,
        code: 'CERTIFICATE-IMPORTED',
        module: 'inventory',
        status: 'success',
        principal: request.principal!.identifier,
        objectType: 'certificate',
        objectId: certificate._id,
        payload: { thumbprint: certificate.thumbprint, dn: certificate.dn, profile: certificate.profile ?? null },
      });
      return reply.code(201).send(certificate);
    },
  });
}
