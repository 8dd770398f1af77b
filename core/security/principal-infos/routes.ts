import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { recordChange } from '../audit.js';
import { distinct, EMAIL, IDENTIFIER, NAME, permissionsInput, permissionsOf, permissionsOutput, SERVER_OWNED } from '../groups/input.js';
import type { SecurityRouteContext } from '../route-context.js';
import { MAX_PAGE_SIZE, MAX_SORT_ELEMENTS, searchPrincipalInfos, SORT_ELEMENTS, type PrincipalSearch } from './search.js';
import { PrincipalInfoStore, type PrincipalInfo, type PrincipalInfoInput } from './store.js';

const READ = { permission: 'configuration:principals:read' } as const;
const WRITE = { permission: 'configuration:principals:write' } as const;
const CAPABILITY = 'configuration' as const;
const BASE = '/api/v1/security/principalinfos/';
const tags = ['security'];

const infoSchema = {
  $id: 'SecurityPrincipalInfo',
  type: 'object',
  required: ['_id', 'identifier', 'name', 'email', 'contact', 'permissions', 'roles', 'teams', 'enabled', 'creationDate'],
  properties: {
    _id: { type: 'string' },
    identifier: { type: 'string' },
    name: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    contact: {
      type: ['string', 'null'],
      description: 'The email again, under the name Horizon clients read (horizon-go v2 PrincipalInfoResponse.contact); always equal to email',
    },
    permissions: permissionsOutput,
    roles: { type: 'array', items: { type: 'string' } },
    teams: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean', description: 'Whether the principal may log in (a disabled one is refused with SEC-AUTH-005)' },
    creationDate: { type: 'integer', description: 'When the information was created (epoch milliseconds)' },
  },
} as const;

const names = { type: ['array', 'null'], maxItems: 1000, items: NAME } as const;

const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['identifier'],
  properties: {
    ...SERVER_OWNED,
    // Answered by a GET, so echoed back by read-modify-write clients: accepted, ignored.
    creationDate: {},
    identifier: IDENTIFIER,
    name: { type: ['string', 'null'], maxLength: 255 },
    email: EMAIL,
    // The secret engine (client-compat §7) and horizon-go v2 PrincipalInfo send the email as `contact`, and answers
    // carry both: when both are sent and differ, the one that is not the stored email is the change (store.ts EmailChoice).
    contact: EMAIL,
    permissions: permissionsInput,
    roles: names,
    teams: names,
    // horizon-go v2 PrincipalInfo always sends it (a required bool). Omitted or null: true on create,
    // unchanged on update.
    enabled: { type: ['boolean', 'null'] },
  },
} as const;

/** A text criterion of Horizon's PrincipalInfoSearchQuery: its content is checked by the search (SEC-PRINC-002). */
const criterion = (description: string) => ({ type: ['string', 'null'], description }) as const;

const searchSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  description:
    'Every criterion given narrows the results; null and "" are no criterion. query/roles/teams are Certwright\'s; identifier, contact, role, team, strictSearch and sortedBy are horizon-go v2 PrincipalInfoSearchQuery\'s.',
  properties: {
    query: { type: ['string', 'null'], maxLength: 320, description: 'A substring of the identifier, name or email (case-insensitive)' },
    roles: { ...names, description: 'Members of at least one of these roles' },
    teams: { ...names, description: 'Members of at least one of these teams' },
    identifier: criterion('strictSearch: this identifier exactly (case-sensitive); else a case-insensitive substring of it'),
    contact: criterion('A case-insensitive substring of the email (strictSearch does not apply, as in Horizon)'),
    role: criterion('strictSearch: members of the role of exactly this name; else of a role whose name contains it (case-insensitive)'),
    team: criterion('strictSearch: members of the team of exactly this name; else of a team whose name contains it (case-insensitive)'),
    strictSearch: { type: ['boolean', 'null'], description: 'Exact matches for identifier, role and team (default false: substrings)' },
    sortedBy: {
      type: ['array', 'null'],
      description: `Sort keys, first first (at most ${MAX_SORT_ELEMENTS}); the identifier breaks ties. Default: by identifier. role/team: a principal's first group name ascending, its last descending`,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          element: { type: ['string', 'null'], description: `One of ${SORT_ELEMENTS.join(', ')}` },
          order: { type: ['string', 'null'], description: 'Asc (default) or Desc' },
        },
      },
    },
    pageIndex: { type: ['integer', 'null'], minimum: 1 },
    pageSize: { type: ['integer', 'null'], minimum: 1, maximum: MAX_PAGE_SIZE },
    withCount: { type: ['boolean', 'null'] },
  },
} as const;

interface Body {
  identifier: string;
  name?: string | null;
  email?: string | null;
  contact?: string | null;
  permissions?: { value: string; filter?: string | null }[] | null;
  roles?: string[] | null;
  teams?: string[] | null;
  enabled?: boolean | null;
}

const params = { type: 'object', required: ['identifier'], properties: { identifier: IDENTIFIER } } as const;

const view = (p: PrincipalInfo) => ({
  _id: p.id,
  identifier: p.identifier,
  name: p.name,
  email: p.email,
  contact: p.email,
  permissions: p.permissions,
  roles: p.roles,
  teams: p.teams,
  enabled: p.enabled,
  creationDate: p.creationDate,
});

/** `email` and `contact` (its other name) as sent, "" meaning null; both sent and different: the store decides. */
function emailOf(b: Body): PrincipalInfoInput['email'] {
  const sent = (v: string | null | undefined): string | null | undefined => (v === undefined ? undefined : v || null);
  const [email, contact] = [sent(b.email), sent(b.contact)];
  if (email === undefined) return contact ?? null;
  if (contact === undefined || contact === email) return email;
  return { email, contact };
}

function input(b: Body): PrincipalInfoInput {
  return {
    identifier: b.identifier,
    name: b.name ?? null,
    email: emailOf(b),
    permissions: permissionsOf(b.permissions, 'SEC-PRINC-002'),
    roles: b.roles ? distinct(b.roles) : undefined,
    teams: b.teams ? distinct(b.teams) : undefined,
    enabled: b.enabled ?? undefined,
  };
}

/** No principal may disable itself: it would lock itself out at its next request (a last administrator too). */
function refuseSelfDisable(request: FastifyRequest, info: PrincipalInfoInput): void {
  if (info.enabled === false && info.identifier === request.principal!.identifier) {
    throw new ProblemError('SEC-PRINC-002', { message: 'A principal cannot disable itself' });
  }
}

const payload = (p: ReturnType<typeof view>) => ({ permissions: p.permissions, roles: p.roles, teams: p.teams });

/**
 * /api/v1/security/principalinfos/: GET :identifier, POST (201; roles and teams given become the
 * principal's memberships, omitted ones are left as they are), PUT (replaces everything but the
 * preferences; omitted lists mean none, an omitted `enabled` is kept), DELETE :identifier (with the
 * memberships), POST search.
 * There is no GET of the collection (search pages instead).
 */
export async function principalInfoRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const infos = new PrincipalInfoStore(ctx.knex, ctx.clock);
  app.addSchema(infoSchema);
  const one = { $ref: 'SecurityPrincipalInfo#' };

  app.get<{ Params: { identifier: string } }>(`${BASE}:identifier`, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'Get the information of a principal', params, response: { 200: one } },
    handler: async (request) => view(await infos.get(request.tenant, request.params.identifier)),
  });

  app.post<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Create the information of a principal', body: inputSchema, response: { 201: one } },
    handler: async (request, reply) => {
      const given = input(request.body);
      refuseSelfDisable(request, given);
      const info = view(await infos.create(request.tenant, given));
      await recordChange(ctx, request, { code: 'SEC-PRINC-CREATED', objectType: 'principal', objectId: info.identifier, payload: payload(info) });
      return reply.code(201).send(info);
    },
  });

  app.put<{ Body: Body }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Replace the information of the principal named in the body', body: inputSchema, response: { 200: one } },
    handler: async (request) => {
      const given = input(request.body);
      refuseSelfDisable(request, given);
      const info = view(await infos.replace(request.tenant, given));
      await recordChange(ctx, request, { code: 'SEC-PRINC-UPDATED', objectType: 'principal', objectId: info.identifier, payload: payload(info) });
      return info;
    },
  });

  app.delete<{ Params: { identifier: string } }>(`${BASE}:identifier`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Delete the information and the memberships of a principal', params, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await infos.remove(request.tenant, request.params.identifier);
      await recordChange(ctx, request, { code: 'SEC-PRINC-DELETED', objectType: 'principal', objectId: request.params.identifier, payload: {} });
      return reply.code(204).send();
    },
  });

  app.post<{ Body: PrincipalSearch | null | undefined }>(`${BASE}search`, {
    config: { capability: CAPABILITY, access: READ },
    schema: {
      tags,
      summary: 'Search principal information (identifier, contact, role, team, strictSearch, sortedBy as Horizon; query, roles, teams)',
      body: searchSchema,
      response: {
        200: {
          type: 'object',
          required: ['results', 'pageIndex', 'pageSize', 'hasMore'],
          properties: { results: { type: 'array', items: one }, pageIndex: { type: 'integer' }, pageSize: { type: 'integer' }, hasMore: { type: 'boolean' }, count: { type: 'integer' } },
        },
      },
    },
    handler: async (request) => {
      const page = await searchPrincipalInfos(ctx.knex, request.tenant, request.body ?? {});
      return { ...page, results: page.results.map(view) };
    },
  });
}
