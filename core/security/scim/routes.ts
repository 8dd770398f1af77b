import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConfigRegistry } from '../../config-objects/registry.js';
import type { SecurityRouteContext } from '../route-context.js';
import { checkUserSchemas, isObject, normaliseUser, type Json } from './attributes.js';
import { authenticateScim } from './auth.js';
import { installScimBodies } from './body.js';
import { badRequest, notFound, SCIM_MEDIA_TYPE, scimErrorHandler } from './errors.js';
import { matches, page, parseFilter, sortResources, type FilterScope } from './filter.js';
import { findGroup, listGroups, type MappedGroup } from './mapping.js';
import { applyUserPatch, groupMemberSteps, patchOperations } from './patch.js';
import type { ScimProfile } from './profile-type.js';
import { groupResource, listResponse, project, userResource } from './resources.js';
import {
  COMMON_ATTRIBUTES,
  ENTERPRISE_ATTRIBUTES,
  ENTERPRISE_SCHEMA,
  GROUP_ATTRIBUTES,
  GROUP_SCHEMA,
  knownSchema,
  MAX_RESULTS,
  resourceTypes,
  SCHEMAS,
  schemaResource,
  serviceProviderConfig,
  USER_ATTRIBUTES,
  USER_SCHEMA,
} from './schemas.js';
import { ScimStore, type ScimUser } from './store.js';

const PREFIX = '/security/scim/:scimProfile';
const tags = ['scim'];
/** Protocol authentication (the profile's bearer token), checked by the onRequest hook below, not the kernel's authorizer. */
const config = { capability: 'scim', access: 'public' } as const;

const USER_SCOPE: FilterScope = { attributes: [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES], extensions: new Map([[ENTERPRISE_SCHEMA, ENTERPRISE_ATTRIBUTES]]) };
const GROUP_SCOPE: FilterScope = { attributes: [...COMMON_ATTRIBUTES, ...GROUP_ATTRIBUTES], extensions: new Map() };

const profileParam = { type: 'string', minLength: 1, maxLength: 191 } as const;
const keyParam = { type: 'string', minLength: 1, maxLength: 512 } as const;
const params = (extra: Record<string, unknown> = {}) => ({ type: 'object', required: ['scimProfile', ...Object.keys(extra)], properties: { scimProfile: profileParam, ...extra } });
const projection = { attributes: { type: 'string', maxLength: 4096 }, excludedAttributes: { type: 'string', maxLength: 4096 } } as const;
const listQuery = {
  type: 'object',
  properties: {
    filter: { type: 'string', maxLength: 4096, description: 'RFC 7644 §3.4.2.2 filter (eq ne co sw ew gt ge lt le pr, and or not, grouping, value paths)' },
    startIndex: { type: 'integer', description: '1-based index of the first result (below 1: 1)' },
    count: { type: 'integer', description: `Results per page (at most ${MAX_RESULTS})` },
    sortBy: { type: 'string', maxLength: 512 },
    sortOrder: { type: 'string', maxLength: 16, description: 'ascending (default) or descending' },
    ...projection,
  },
} as const;
const body = { description: 'application/scim+json (or application/json)', type: 'object', additionalProperties: true } as const;

interface ListQuery {
  filter?: string;
  startIndex?: number;
  count?: number;
  sortBy?: string;
  sortOrder?: string;
  attributes?: string;
  excludedAttributes?: string;
}

type Params = { scimProfile: string; identifier?: string; userName?: string; groupName?: string; GroupName?: string; schema?: string };

/**
 * SCIM 2.0 (RFC 7643 / RFC 7644) under /security/scim/:scimProfile, capability `scim` (spec "SCIM"): the
 * discovery resources and the Users and Groups of one SCIM profile. Every route authenticates with the
 * profile's bearer token itself (`access: public` for the kernel's authorizer); every answer and error is
 * application/scim+json. Users are principals (principal information, memberships); Groups are the teams and
 * roles the profile maps (mapping.ts). Lists filter, sort and page in memory over the profile's users (or
 * groups): a profile provisions thousands, not millions, and the filter language is SCIM's, not SQL.
 */
export async function scimRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  const store = new ScimStore(ctx.knex, ctx.clock, ctx.events);
  const profiles = new WeakMap<FastifyRequest, ScimProfile>();
  installScimBodies(app);
  app.setErrorHandler(scimErrorHandler);
  // The media type exactly, as the platform answers JSON (no charset parameter: SCIM is UTF-8 by definition).
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith(`${SCIM_MEDIA_TYPE};`)) reply.header('content-type', SCIM_MEDIA_TYPE);
    done(null, payload);
  });

  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const { scimProfile } = request.params as Params;
    profiles.set(request, await authenticateScim(request, request.diScope.resolve<ConfigRegistry>('configObjects'), scimProfile));
  };
  const profileOf = (request: FastifyRequest): ScimProfile => profiles.get(request)!;
  const baseOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}/security/scim/${encodeURIComponent(profileOf(request).name)}`;
  const send = (reply: FastifyReply, status: number, payload: unknown): FastifyReply => reply.code(status).type(SCIM_MEDIA_TYPE).send(payload);
  const objectBody = (value: unknown): Json => {
    if (!isObject(value)) throw badRequest('invalidSyntax', 'The body must be a JSON object');
    return value;
  };

  const route = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    summary: string,
    schema: Record<string, unknown>,
    handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  ): void => {
    app.route({ method, url: `${PREFIX}${url}`, config, schema: { tags, summary, ...schema }, onRequest: authenticate, handler });
  };

  // ---- Discovery (RFC 7644 §4) ----
  route('GET', '/ServiceProviderConfig', 'SCIM service provider configuration', { params: params() }, async (request, reply) => send(reply, 200, serviceProviderConfig(baseOf(request))));
  route('GET', '/ResourceTypes', 'SCIM resource types (User, Group)', { params: params() }, async (request, reply) => {
    const types = resourceTypes(baseOf(request));
    return send(reply, 200, listResponse(types, types.length, 1));
  });
  route('GET', '/Schemas', 'SCIM schemas (User, enterprise User extension, Group)', { params: params() }, async (request, reply) => {
    const base = baseOf(request);
    return send(reply, 200, listResponse(SCHEMAS.map((s) => schemaResource(s, base)), SCHEMAS.length, 1));
  });
  route('GET', '/Schemas/:schema', 'One SCIM schema by its URN', { params: params({ schema: { type: 'string', minLength: 1, maxLength: 256 } }) }, async (request, reply) => {
    const urn = knownSchema((request.params as Params).schema!);
    const schema = SCHEMAS.find((s) => s.id === urn);
    if (!schema) throw notFound(`No schema "${(request.params as Params).schema}"`);
    return send(reply, 200, schemaResource(schema, baseOf(request)));
  });

  // ---- Users ----
  const withGroups = async (request: FastifyRequest, users: ScimUser[]): Promise<Json[]> => {
    const profile = profileOf(request);
    const groups = await store.groupsOf(request.tenant, profile, users.map((u) => u.identifier));
    const base = baseOf(request);
    return users.map((u) => userResource(u, groups.get(u.identifier) ?? [], base));
  };
  const oneUser = async (request: FastifyRequest, user: ScimUser): Promise<Json> => (await withGroups(request, [user]))[0]!;
  const userKey = (request: FastifyRequest): string => {
    const p = request.params as Params;
    return (p.identifier ?? p.userName)!;
  };
  const found = async (request: FastifyRequest): Promise<ScimUser> => {
    const user = await store.findUser(request.tenant, profileOf(request), userKey(request));
    if (!user) throw notFound(`No user "${userKey(request)}" in this SCIM profile`);
    return user;
  };
  const changedPrincipal = (request: FastifyRequest, user: ScimUser): void => ctx.invalidate({ tenant: request.tenant, identifier: user.identifier });

  const list = async (request: FastifyRequest, reply: FastifyReply, resources: () => Promise<Json[]>, scope: FilterScope, urn: string): Promise<FastifyReply> => {
    const q = request.query as ListQuery;
    // Parsed (and refused) before anything is read.
    const filter = q.filter !== undefined && q.filter.trim() !== '' ? parseFilter(q.filter) : undefined;
    const order = (q.sortOrder ?? 'ascending').toLowerCase();
    if (order !== 'ascending' && order !== 'descending') throw badRequest('invalidValue', 'sortOrder: must be ascending or descending');
    let all = await resources();
    if (filter) all = all.filter((r) => matches(filter, r, scope, urn));
    if (q.sortBy) all = sortResources(all, q.sortBy, order, scope, urn);
    const { start, count } = page(q.startIndex, q.count);
    const slice = all.slice(start - 1, start - 1 + count).map((r) => project(r, q.attributes, q.excludedAttributes));
    return send(reply, 200, listResponse(slice, all.length, start));
  };

  route('GET', '/Users', "The profile's users (filter, startIndex, count, sortBy, sortOrder)", { params: params(), querystring: listQuery }, async (request, reply) =>
    list(request, reply, async () => withGroups(request, await store.listUsers(request.tenant, profileOf(request))), USER_SCOPE, USER_SCHEMA),
  );
  route('GET', '/Users/:identifier', 'One user of the profile (by id, or userName)', { params: params({ identifier: keyParam }), querystring: { type: 'object', properties: projection } }, async (request, reply) => {
    const q = request.query as ListQuery;
    return send(reply, 200, project(await oneUser(request, await found(request)), q.attributes, q.excludedAttributes));
  });
  route('POST', '/Users', 'Provision a user: a principal managed by the profile', { params: params(), body }, async (request, reply) => {
    const input = objectBody(request.body);
    checkUserSchemas(input);
    const user = await store.createUser(request.tenant, profileOf(request), normaliseUser(input));
    changedPrincipal(request, user);
    const resource = await oneUser(request, user);
    reply.header('location', (resource.meta as Json).location as string);
    return send(reply, 201, resource);
  });
  route('PUT', '/Users/:identifier', 'Replace a user (attributes left out are cleared; active left out is kept)', { params: params({ identifier: keyParam }), body }, async (request, reply) => {
    const input = objectBody(request.body);
    checkUserSchemas(input);
    const doc = normaliseUser(input);
    const user = await store.updateUser(request.tenant, profileOf(request), userKey(request), (current) => (doc.active === undefined ? { ...doc, active: current.active } : doc));
    changedPrincipal(request, user);
    return send(reply, 200, await oneUser(request, user));
  });
  route('PATCH', '/Users/:userName', 'Change a user (PatchOp add, replace, remove; paths with value filters)', { params: params({ userName: keyParam }), body }, async (request, reply) => {
    const operations = patchOperations(request.body);
    const user = await store.updateUser(request.tenant, profileOf(request), userKey(request), (current) => normaliseUser(applyUserPatch(current, operations)));
    changedPrincipal(request, user);
    return send(reply, 200, await oneUser(request, user));
  });
  route('DELETE', '/Users/:identifier', 'Deprovision a user: its principal information and the memberships the profile granted', { params: params({ identifier: keyParam }) }, async (request, reply) => {
    const user = await store.deleteUser(request.tenant, profileOf(request), userKey(request));
    changedPrincipal(request, user);
    return reply.code(204).send();
  });

  // ---- Groups ----
  const groupResources = async (request: FastifyRequest, groups: MappedGroup[], withMembers: boolean): Promise<Json[]> => {
    const profile = profileOf(request);
    const base = baseOf(request);
    if (!withMembers) return groups.map((g) => groupResource(g, undefined, base));
    const users = await store.listUsers(request.tenant, profile);
    const of = await store.groupsOf(request.tenant, profile, users.map((u) => u.identifier));
    return groups.map((g) => groupResource(g, users.filter((u) => (of.get(u.identifier) ?? []).some((x) => x.name === g.name)).sort((a, b) => a.userName.localeCompare(b.userName)), base));
  };
  const excludesMembers = (q: ListQuery): boolean => (q.excludedAttributes ?? '').split(',').some((a) => a.trim().toLowerCase() === 'members');

  route('GET', '/Groups', "The profile's groups: the teams and roles it maps (filter, startIndex, count, sortBy, sortOrder)", { params: params(), querystring: listQuery }, async (request, reply) =>
    list(
      request,
      reply,
      async () => groupResources(request, await listGroups(ctx.knex, request.tenant, profileOf(request)), !excludesMembers(request.query as ListQuery)),
      GROUP_SCOPE,
      GROUP_SCHEMA,
    ),
  );
  route('GET', '/Groups/:groupName', 'One group of the profile and its members among the profile\'s users', { params: params({ groupName: keyParam }), querystring: { type: 'object', properties: projection } }, async (request, reply) => {
    const q = request.query as ListQuery;
    const name = (request.params as Params).groupName!;
    const group = await findGroup(ctx.knex, request.tenant, profileOf(request), name);
    if (!group) throw notFound(`No group "${name}" in this SCIM profile`);
    return send(reply, 200, project((await groupResources(request, [group], !excludesMembers(q)))[0]!, q.attributes, q.excludedAttributes));
  });
  route('PATCH', '/Groups/:GroupName', "Change a group's members (PatchOp add, remove, replace of members)", { params: params({ GroupName: keyParam }), body }, async (request, reply) => {
    const name = (request.params as Params).GroupName!;
    const operations = patchOperations(request.body);
    const steps = groupMemberSteps(operations, (value) => typeof value === 'string' && value.toLowerCase() === name.toLowerCase());
    const changed = await store.patchGroup(request.tenant, profileOf(request), name, steps);
    if (changed.identifiers.length > 0) ctx.invalidate('principals');
    return reply.code(204).send();
  });
}
