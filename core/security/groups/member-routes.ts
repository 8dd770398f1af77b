import { acceptsExactlyJson, varyOnAccept } from '../../http/accept.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { PermissionAccess, RouteCapability } from '../../http/route-config.js';
import type { SecurityRouteContext } from '../route-context.js';
import { recordChange } from '../audit.js';
import type { GroupInput, GroupStore, MemberGuard } from './group-store.js';
import { distinct, IDENTIFIER } from './input.js';
import type { Member, MemberChange } from './memberships.js';

export interface MemberRouteOptions<T extends GroupInput> {
  /** e.g. /api/v1/security/roles/:name/members */
  url: string;
  capability: RouteCapability;
  read: PermissionAccess;
  write: PermissionAccess;
  store: GroupStore<T>;
  tags: string[];
  /** Rules a write must satisfy beyond its access (RA team managers), checked in the write's transaction. */
  guard?: (request: FastifyRequest, op: 'add' | 'remove', changes: MemberChange[]) => MemberGuard<T> | undefined;
  /** Recorded in the events' payload (which API made the change). */
  via: 'configuration' | 'webra';
}

interface AddBody {
  identifier?: string | null;
  identifiers?: string[] | null;
  manager?: boolean | null;
}

const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;

// Which shape the members answer (GET, and POST's answer) takes, negotiated on the request's Accept header.
// Two clients read this route and need different shapes:
//   - the vendor's OpenAPI-generated Go SDK (evertrust/horizon-go v2: SecurityTeamMembersGet,
//     SecurityRoleMembersGet, TeamMembersGet in docs/SecurityTeamAPI.md, docs/SecurityRoleAPI.md,
//     docs/TeamAPI.md) decodes the answer into a `[]string` of identifiers (objects fail json.Unmarshal), and
//     sends `Accept: application/json` exactly (selectHeaderAccept picks application/json from the declared
//     "application/json, application/problem+json");
//   - the vendor's MCP server (evertrust/horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools)
//     passes the answer through as JSON text, and sends undici fetch's default `Accept: */*`; Certwright's
//     own callers send no Accept or a wildcard too (browsers, curl, Python requests: */*; axios and jQuery
//     list application/json with a */* fallback).
// So a caller whose Accept names application/json and no wildcard (*/* or application/*) gets the
// identifiers as a JSON array of strings (the v2 API's documented answer); every other caller keeps
// Certwright's member objects `{identifier, name?, email?}` (teams: + `manager`). The answer carries `Vary: Accept`.
export const wantsIdentifierList = acceptsExactlyJson;

const ANSWER_DOC =
  'The members as objects {identifier, name?, email?} (teams add manager); a caller whose Accept names application/json and no wildcard (the Horizon v2 SDKs) gets their identifiers alone, as an array of strings.';


/**
 * GET, POST and DELETE of a role's or team's members. POST adds (`{identifier}`, `{identifiers}` or a bare
 * array of identifiers; teams also `manager`: omitted keeps an existing member's flag) and answers the
 * members; DELETE removes the identifiers named in the body (same forms) or in `?identifier=` (repeatable)
 * and answers 204. Both are
 * idempotent: adding a member twice or removing a non-member changes nothing.
 */
export async function memberRoutes<T extends GroupInput>(app: FastifyInstance, ctx: SecurityRouteContext, opts: MemberRouteOptions<T>): Promise<void> {
  const { store, tags } = opts;
  const team = store.kind === 'team';
  const upper = store.kind.toUpperCase();
  const member = {
    type: 'object',
    required: team ? ['identifier', 'manager'] : ['identifier'],
    properties: { identifier: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, ...(team ? { manager: { type: 'boolean' } } : {}) },
  };
  // Member objects, or the identifiers alone for a caller that asks for them (wantsIdentifierList).
  const list = { 200: { anyOf: [{ type: 'array', items: member }, { type: 'array', items: { type: 'string' } }] } };
  const answer = async (request: FastifyRequest, reply: FastifyReply, tenant: string, name: string): Promise<Member[] | string[]> => {
    const members = await store.members(tenant, name);
    varyOnAccept(reply);
    return wantsIdentifierList(request.headers.accept) ? members.map((m) => m.identifier) : members;
  };
  const identifiersInput = { identifier: { ...IDENTIFIER, type: ['string', 'null'] }, identifiers: { type: ['array', 'null'], maxItems: 1000, items: IDENTIFIER } };
  // A bare JSON array of identifiers is accepted too: horizon-mcp's add/remove member tools send one.
  const identifierList = { type: 'array', maxItems: 1000, items: IDENTIFIER };
  const addBody = {
    anyOf: [
      { type: 'object', additionalProperties: false, properties: { ...identifiersInput, ...(team ? { manager: { type: ['boolean', 'null'] } } : {}) } },
      identifierList,
    ],
  };
  const removeBody = { anyOf: [{ type: ['object', 'null'], additionalProperties: false, properties: identifiersInput }, identifierList] };
  const asObject = (body: AddBody | string[] | null | undefined): AddBody => (Array.isArray(body) ? { identifiers: body } : (body ?? {}));
  const removeQuery = { type: 'object', additionalProperties: false, properties: { identifier: { type: 'array', maxItems: 1000, items: IDENTIFIER } } };

  const named = (given: { identifier?: string | null; identifiers?: string[] | null }[]): string[] => {
    const ids = distinct(given.flatMap((g) => [...(g.identifier ? [g.identifier] : []), ...(g.identifiers ?? [])]));
    if (ids.length === 0) throw new ProblemError(store.codes.invalid, { message: 'Name the members: identifier or identifiers' });
    return ids;
  };

  app.get<{ Params: { name: string } }>(opts.url, {
    config: { capability: opts.capability, access: opts.read },
    schema: { tags, summary: `List the members of a ${store.kind}`, description: ANSWER_DOC, params, response: list },
    handler: (request, reply) => answer(request, reply, request.tenant, request.params.name),
  });

  app.post<{ Params: { name: string }; Body: AddBody | string[] }>(opts.url, {
    config: { capability: opts.capability, access: opts.write },
    schema: { tags, summary: `Add members to a ${store.kind}; answers the members`, description: ANSWER_DOC, params, body: addBody, response: list },
    handler: async (request, reply) => {
      const { tenant, params } = request;
      const body = asObject(request.body);
      const manager = body.manager ?? undefined;
      const changes: MemberChange[] = named([body]).map((identifier) => (manager === undefined ? { identifier } : { identifier, manager }));
      await store.addMembers(tenant, params.name, changes, opts.guard?.(request, 'add', changes));
      await recordChange(ctx, request, {
        code: `SEC-${upper}-MEMBERS-ADDED`,
        objectType: store.kind,
        objectId: params.name,
        payload: { identifiers: changes.map((c) => c.identifier), ...(manager === undefined ? {} : { manager }), via: opts.via },
      });
      return answer(request, reply, tenant, params.name);
    },
  });

  app.delete<{ Params: { name: string }; Body: AddBody | string[] | null | undefined; Querystring: { identifier?: string[] } }>(opts.url, {
    config: { capability: opts.capability, access: opts.write },
    schema: { tags, summary: `Remove members from a ${store.kind} (identifiers in the body or ?identifier=)`, params, querystring: removeQuery, body: removeBody, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      const { tenant, params } = request;
      const identifiers = named([asObject(request.body), { identifiers: request.query.identifier ?? null }]);
      const changes = identifiers.map((identifier) => ({ identifier }));
      const removed = await store.removeMembers(tenant, params.name, identifiers, opts.guard?.(request, 'remove', changes));
      if (removed > 0) {
        await recordChange(ctx, request, { code: `SEC-${upper}-MEMBERS-REMOVED`, objectType: store.kind, objectId: params.name, payload: { identifiers, via: opts.via } });
      }
      return reply.code(204).send();
    },
  });
}
