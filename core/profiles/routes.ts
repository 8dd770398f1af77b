import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectionAccess, mountOwnDelete } from '../config-objects/own-routes.js';
import type { CoreServices } from '../services.js';
import { hasHorizonKeys, profileAnswer } from './horizon/index.js';
import { profileInputSchema, profileNameParams, profileSchema } from './schema.js';
import type { Profiles } from './service.js';
import type { CertificateProfile } from './types.js';
import { checkProfile } from './validate.js';

/*
 * Profiles are on the configuration registry (config-type.ts: export/import in Certwright's form, the cookbook,
 * their connector and password policies as references), but these routes stay theirs: a profile comes in two
 * shapes (Certwright's and Horizon's, core/profiles/horizon) mapped onto one stored form, and answers carry
 * both, with localized texts and per-workflow rights derived.
 */

const BASE = '/api/v1/certificate/profiles/';
const ACCESS = collectionAccess('profiles');
const tags = ['profiles'];

type NameParams = { Params: { name: string } };
const principalOf = (request: FastifyRequest): string | null => request.principal?.identifier ?? null;

const ERRORS =
  'PRF-002 invalid profile (unknown field, unknown subject element or SAN type, regex that does not compile, default key type not authorized, no enrollment mode, unknown PKI connector or password policy, the Horizon and Certwright forms of a part saying different things, a Horizon setting Certwright does not have), PRF-004 name taken.';

/**
 * /api/v1/certificate/profiles/: the standard set (GET, GET :name, POST, PUT by the name in the body,
 * DELETE :name). Reads need configuration:profiles:read, changes configuration:profiles:write; each
 * change writes its PROFILE-… event in its transaction. Answers carry the vendor's (Horizon's) form beside
 * Certwright's, and bodies may use either (horizon/index.ts). Bodies are checked by validate.ts (PRF-002 for
 * anything the schema or the rules refuse), so the route keeps the schema for documentation only.
 */
export async function profileRoutes(app: FastifyInstance, options: { services: CoreServices; profiles: Profiles }): Promise<void> {
  const { services, profiles } = options;
  const repository = profiles.repository;
  app.addSchema(profileSchema);
  const one = { 200: { $ref: 'CertificateProfile#' } };
  const many = { 200: { type: 'array', items: { $ref: 'CertificateProfile#' } } };
  /**
   * The profiles a body may repeat — with both forms of a part in it, the one repeating a stored profile was
   * not edited (horizon/index.ts): on a PUT the one it replaces, on a POST the tenant's (a copied answer).
   */
  const storedFor = async (request: FastifyRequest, put: boolean): Promise<CertificateProfile[]> => {
    const body = request.body as Record<string, unknown> | null;
    if (body === null || typeof body !== 'object' || !hasHorizonKeys(body)) return [];
    if (!put) return (await repository.list(request.tenant)).map((s) => s.profile);
    const found = typeof body.name === 'string' ? await repository.find(request.tenant, body.name) : null;
    return found ? [found.profile] : [];
  };
  const check = async (request: FastifyRequest, put: boolean) => checkProfile(services.knex, services.clock, request.tenant, request.body, await storedFor(request, put));

  app.get(BASE, {
    config: ACCESS.read,
    schema: { tags, summary: 'List certificate profiles', response: many },
    handler: async (request) => (await repository.list(request.tenant)).map(profileAnswer),
  });

  app.get<NameParams>(`${BASE}:name`, {
    config: ACCESS.read,
    schema: { tags, summary: 'Get a certificate profile', description: 'PRF-003 when there is none of that name.', params: profileNameParams, response: one },
    handler: async (request) => profileAnswer(await repository.get(request.tenant, request.params.name)),
  });

  app.post(BASE, {
    config: ACCESS.write,
    attachValidation: true,
    schema: { tags, summary: 'Create a certificate profile', description: `Fields left out take their defaults. ${ERRORS}`, body: profileInputSchema, response: { 201: { $ref: 'CertificateProfile#' } } },
    handler: async (request, reply) => {
      const profile = await check(request, false);
      return reply.code(201).send(profileAnswer(await repository.create(request.tenant, profile, principalOf(request))));
    },
  });

  app.put(BASE, {
    config: ACCESS.write,
    attachValidation: true,
    schema: {
      tags,
      summary: 'Replace the certificate profile named in the body',
      description: `The whole profile: fields left out take their defaults again. PRF-003 when there is none of that name. ${ERRORS}`,
      body: profileInputSchema,
      response: one,
    },
    handler: async (request) => {
      const profile = await check(request, true);
      return profileAnswer(await repository.update(request.tenant, profile, principalOf(request)));
    },
  });

  mountOwnDelete(app, {
    base: BASE,
    section: 'profiles',
    type: 'profile',
    tags,
    summary: 'Delete a certificate profile (requests and certificates keep its name)',
    params: profileNameParams,
    remove: (request, name) => repository.remove(request.tenant, name, principalOf(request)),
  });
}
