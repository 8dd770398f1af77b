import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import type { LocalizedText } from '../principals/resolver.js';
import { groupConfigStore } from './group-config-store.js';
import type { Stored } from './group-store.js';
import { localizedInput, localizedOf, NAME, permissionsInput, permissionsOf } from './input.js';
import type { RoleInput, RoleStore } from './role-store.js';

/** A role as the API answers it, without `_id` (the registry adds it). */
const body = (r: Stored<RoleInput>): ConfigObject => ({ name: r.name, displayName: r.displayName, description: r.description, permissions: r.permissions });

/**
 * Roles (/api/v1/security/roles/, client-compat §7) on the configuration registry: its own table
 * (security_roles, read by the principal resolver) and memberships through `roles`, a PUT replacing the role
 * named in the body, SEC-ROLE-* codes and events. What they keep of their own: plain-string texts taken as
 * English, permissions checked against the permission catalogue (SEC-ROLE-002 naming the value), a change
 * applying to the members from the next request (`invalidatePrincipals`), memberships deleted with the role.
 * GET/POST/DELETE :name/members stay in role-routes.ts.
 */
export function roleType(roles: RoleStore, invalidatePrincipals: () => void): ConfigObjectType {
  return {
    type: 'role',
    title: 'Roles',
    noun: 'role',
    exportKey: 'roles',
    description: 'Named sets of permissions; a role\'s members hold its permissions (members: GET, POST, DELETE :name/members).',
    basePath: '/api/v1/security/roles/',
    tag: 'security',
    section: 'roles',
    errorFamily: 'SEC-ROLE',
    update: 'replace',
    events: { module: 'security', created: 'SEC-ROLE-CREATED', updated: 'SEC-ROLE-UPDATED', deleted: 'SEC-ROLE-DELETED' },
    properties: { name: NAME, displayName: localizedInput, description: localizedInput, permissions: permissionsInput },
    required: ['name'],
    // Echoed back by read-modify-write clients: accepted, ignored (as `_id`).
    serverOwned: ['createdAt', 'updatedAt'],
    store: groupConfigStore(roles, body),
    hooks: {
      normalize(object) {
        return {
          name: object.name,
          displayName: localizedOf(object.displayName as LocalizedText[] | string | null | undefined),
          description: localizedOf(object.description as LocalizedText[] | string | null | undefined),
          permissions: permissionsOf(object.permissions as Parameters<typeof permissionsOf>[0], 'SEC-ROLE-002'),
        };
      },
      afterChange() {
        invalidatePrincipals();
      },
    },
  };
}
