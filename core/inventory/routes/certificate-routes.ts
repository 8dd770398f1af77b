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
  properties: {
    id: { type: 'string', description: '_id of the certificate (v2 FindCertificateById)' },
    certificate: { type: 'string', description: 'PEM of the certificate' },
    pem: { type: 'string', description: 'Same as certificate' },
  },
} as const;

/** Most ids one list call takes (v2 CertificateList: POST /api/v1/certificates with a JSON array of ids). */
const MAX_LIST = 1000;
const listSchema = { type: 'array', maxItems: MAX_LIST, items: { type: 'string', maxLength: 64 }, description: 'Certificate _ids to fetch' } as const;

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

  const byId = async (request: FastifyRequest, value: string) => {
    const id = value.toLowerCase();
    const certificate = isId(id) ? await repository.get(request.tenant, id) : null;
    if (!certificate) throw new ProblemError('CRT-003', { detail: `No certificate ${value.slice(0, 64)}` });
    await visible(request, certificate);
    return { certificate, permissions: permissionsOf(request, certificate) };
  };

  const get = async (request: FastifyRequest) => {
    const value = pathValue(request);
    if (value.includes('BEGIN')) return byPem(request, value);
    return byId(request, value);
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

  app.post<{ Body: { id?: string; certificate?: string; pem?: string } }>(`${BASE}/find`, {
    config: { capability: CAPABILITY, access: READ },
    bodyLimit: BODY_LIMIT,
    schema: {
      tags,
      summary: 'Find a certificate by _id or by PEM',
      description: 'Body {id} or {certificate|pem: PEM}; answers {certificate, permissions} (the v2 Go client decodes CertificateWithPermissionsResponse).',
      body: findSchema,
      response: { 200: withPermissionsSchema },
    },
    handler: async (request) => {
      if (request.body.id) return byId(request, request.body.id);
      const pem = request.body.certificate || request.body.pem;
      if (!pem) throw new ProblemError('PKI-001', { detail: 'send {"id": "<_id>"} or {"certificate": "<PEM>"}' });
      const certificate = await byPem(request, pem);
      return { certificate, permissions: permissionsOf(request, certificate) };
    },
  });

  /** v2 CertificateList: the visible certificates among `ids`, in their order (unknown or filtered ones left out). */
  const list = async (request: FastifyRequest, ids: readonly string[]) => {
    if (!request.principal!.permissions.allows(READ.permission)) throw new ProblemError('SEC-PERM-001', { message: `This operation requires the permission ${READ.permission}` });
    const out: { certificate: CertificateObject; permissions: ReturnType<typeof permissionsOf> }[] = [];
    for (const raw of new Set(ids.map((id) => id.toLowerCase()))) {
      const certificate = isId(raw) ? await repository.get(request.tenant, raw) : null;
      if (certificate && (await certificateVisible(ctx, request, certificate._id))) out.push({ certificate, permissions: permissionsOf(request, certificate) });
    }
    return out;
  };

  app.post<{ Body: ImportBody | string[] }>(`${BASE}/`, {
    config: { capability: CAPABILITY, access: 'authenticated' },
    bodyLimit: BODY_LIMIT,
    schema: {
      tags,
      summary: 'Import a certificate into the inventory, or fetch certificates by _id',
      description:
        'An object imports: needs lifecycle:<module>:<profile, or "none">:import:direct; answers 201 with the certificate object; CRT-004 (with the existing _id) when it is already there. A JSON array of _ids (v2 CertificateList, at most 1,000) needs search:certificates and answers 200 with [{certificate, permissions}] for those that exist and the caller may read.',
      body: { anyOf: [importSchema, listSchema] },
      response: { 201: certificateObjectSchema, 200: { type: 'array', items: withPermissionsSchema } },
    },
    handler: async (request, reply) => {
      if (Array.isArray(request.body)) return reply.code(200).send(await list(request, request.body));
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
