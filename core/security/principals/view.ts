import type { ResolvedPrincipal } from './resolver.js';

/** The interface version this service implements (clients read it from the self view). */
export const INTERFACE_VERSION = '2.11.0';

const teamSchema = {
  type: 'object',
  required: ['name', 'displayName', 'description', 'manager', 'externallyManaged'],
  properties: {
    name: { type: 'string' },
    displayName: { type: 'array', items: { $ref: 'LocalizedText#' } },
    description: { type: 'array', items: { $ref: 'LocalizedText#' } },
    manager: { type: 'boolean' },
    externallyManaged: { type: 'boolean' },
  },
} as const;

/** JSON schema of GET /api/v1/security/principals/self (client-compat §7). */
export const selfSchema = {
  $id: 'PrincipalSelf',
  type: 'object',
  required: ['identity', 'permissions', 'roles', 'teams', 'preferences', 'customDashboards'],
  properties: {
    identity: {
      type: 'object',
      required: ['identifier', 'identityProviderName', 'identityProviderType'],
      properties: {
        identifier: { type: 'string' },
        name: { type: 'string' },
        email: { type: 'string' },
        identityProviderName: { type: 'string' },
        identityProviderType: { type: 'string' },
      },
    },
    permissions: {
      type: 'array',
      items: { type: 'object', required: ['value'], properties: { value: { type: 'string' }, filter: { type: 'string' } } },
    },
    roles: { type: 'array', items: { type: 'string' } },
    teams: {
      description: "The principal's teams: their names, or (to a caller whose Accept is application/json without a wildcard: the v2 Go SDK) the team objects",
      anyOf: [{ type: 'array', items: teamSchema }, { type: 'array', items: { type: 'string' } }],
    },
    teamInfos: { type: 'array', items: teamSchema, description: 'The team objects, beside teams as names (Horizon 2.10, read by its MCP server)' },
    preferences: { type: 'object', additionalProperties: true },
    customDashboards: { type: 'array', items: { type: 'object', additionalProperties: true } },
    _horizonVersion: { type: 'string' },
  },
} as const;

export const localizedTextSchema = {
  $id: 'LocalizedText',
  type: 'object',
  required: ['lang', 'value'],
  properties: { lang: { type: 'string' }, value: { type: 'string' } },
} as const;

/**
 * The self view. client-compat §7 notes the clients disagree on `teams`: the v2 Go SDK's model reads team
 * objects, the MCP server's whoami output schema (src/tools/assist/system.ts) names (strings or null) with the
 * objects in `teamInfos`, as Horizon 2.10 answers; v1 Go takes either. `teamObjects` (acceptsExactlyJson: the
 * v2 SDK's Accept) picks objects; everyone else gets names and teamInfos.
 */
export function selfView(principal: ResolvedPrincipal, customDashboards: Record<string, unknown>[], teamObjects = false): Record<string, unknown> {
  const identity: Record<string, string> = {
    identifier: principal.identifier,
    identityProviderName: principal.identityProviderName,
    identityProviderType: principal.identityProviderType,
  };
  if (principal.name) identity.name = principal.name;
  if (principal.email) identity.email = principal.email;
  return {
    identity,
    permissions: principal.permissions.permissions.map((p) => (p.filter ? { value: p.value, filter: p.filter } : { value: p.value })),
    roles: principal.roles,
    ...(teamObjects ? { teams: principal.teams } : { teams: principal.teams.map((t) => t.name), teamInfos: principal.teams }),
    preferences: principal.preferences,
    customDashboards,
    _horizonVersion: INTERFACE_VERSION,
  };
}
