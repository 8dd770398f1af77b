import type { ResolvedPrincipal } from './resolver.js';

/** The interface version this service implements (clients read it from the self view). */
export const INTERFACE_VERSION = '2.11.0';

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
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'displayName', 'description', 'manager', 'externallyManaged'],
        properties: {
          name: { type: 'string' },
          displayName: { type: 'array', items: { $ref: 'LocalizedText#' } },
          description: { type: 'array', items: { $ref: 'LocalizedText#' } },
          manager: { type: 'boolean' },
          externallyManaged: { type: 'boolean' },
        },
      },
    },
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

export function selfView(principal: ResolvedPrincipal, customDashboards: Record<string, unknown>[]): Record<string, unknown> {
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
    teams: principal.teams,
    preferences: principal.preferences,
    customDashboards,
    _horizonVersion: INTERFACE_VERSION,
  };
}
