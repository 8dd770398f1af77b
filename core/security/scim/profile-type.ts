import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { description, objectName, reference } from '../../config-objects/types/common.js';

export const SCIM_PROFILE_TYPE = 'scim-profile';

/** Which SCIM attribute becomes the principal identifier, its name and its email (mapping.ts applies them). */
export interface UserMapping {
  identifier: 'userName' | 'externalId' | 'email';
  name: 'displayName' | 'name.formatted' | 'name.givenFamily' | 'userName';
  email: 'primary' | 'work' | 'first';
}

/** One explicit SCIM group → a team and/or a role. */
export interface GroupMapEntry {
  group: string;
  team?: string;
  role?: string;
}

export interface GroupMapping {
  /** What a group that no map entry names is: a team (default) or a role named `prefix` + its displayName. */
  target: 'team' | 'role';
  prefix: string;
  map: GroupMapEntry[];
  /** true: only the groups of `map` exist for SCIM clients. */
  mappedOnly: boolean;
}

/** A SCIM profile as the routes use it (defaults filled in). */
export interface ScimProfile {
  name: string;
  enabled: boolean;
  /** Name of a `raw` credential whose secret is the bearer token. */
  token: string;
  users: UserMapping;
  groups: GroupMapping;
  defaultRoles: string[];
}

export const DEFAULT_USER_MAPPING: UserMapping = { identifier: 'userName', name: 'displayName', email: 'primary' };
export const DEFAULT_GROUP_MAPPING: GroupMapping = { target: 'team', prefix: '', map: [], mappedOnly: false };

/** The stored object → the profile with every default applied. */
export function profileOf(object: ConfigObject): ScimProfile {
  const users = (object.users ?? {}) as Partial<UserMapping>;
  const groups = (object.groups ?? {}) as Partial<GroupMapping>;
  return {
    name: object.name as string,
    enabled: object.enabled !== false,
    token: object.token as string,
    users: { ...DEFAULT_USER_MAPPING, ...users },
    groups: { ...DEFAULT_GROUP_MAPPING, ...groups, map: groups.map ?? [] },
    defaultRoles: (object.defaultRoles as string[] | undefined) ?? [],
  };
}

const groupName = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/\\\\]+$' } as const;

/**
 * SCIM profiles (/api/v1/security/scim/profiles/, spec "SCIM profiles": the standard set) on the
 * configuration registry: the bearer token a provisioning client (Entra ID, Okta…) calls
 * /security/scim/:scimProfile with, as a reference to a `raw` credential (its `secret` is the token, so a
 * PUT of the credential rotates it), and how SCIM users and groups map to principals, teams and roles.
 */
export const scimProfileType: ConfigObjectType = {
  type: SCIM_PROFILE_TYPE,
  title: 'SCIM profiles',
  noun: 'SCIM profile',
  exportKey: 'scimProfiles',
  description:
    'SCIM 2.0 provisioning endpoints (/security/scim/:name, capability scim): the bearer token (a raw credential), how SCIM users map to principals and SCIM groups to teams or roles, and the roles every provisioned user gets.',
  basePath: '/api/v1/security/scim/profiles/',
  tag: 'security',
  section: 'scim',
  errorFamily: 'SCIM',
  properties: {
    name: { ...objectName, maxLength: 64 },
    description: { anyOf: [description, { type: 'null' }] },
    enabled: { type: 'boolean', description: 'false: its SCIM endpoint answers 404 (default true)' },
    token: { ...reference, description: 'Name of a raw credential (/api/v1/security/credentials/) whose secret is the bearer token' },
    users: {
      type: 'object',
      additionalProperties: false,
      description: 'How a SCIM user becomes a principal (principal information)',
      properties: {
        identifier: { type: 'string', enum: ['userName', 'externalId', 'email'], description: 'The attribute that becomes the principal identifier, set at creation (default userName)' },
        name: { type: 'string', enum: ['displayName', 'name.formatted', 'name.givenFamily', 'userName'], description: "The principal's name (default displayName; the others in turn when it is absent)" },
        email: { type: 'string', enum: ['primary', 'work', 'first'], description: "The principal's email among emails (default the primary one, else work, else the first)" },
      },
    },
    groups: {
      type: 'object',
      additionalProperties: false,
      description: 'How SCIM groups map to teams and roles',
      properties: {
        target: { type: 'string', enum: ['team', 'role'], description: 'A group not in `map` is the team (default) or role named prefix + displayName' },
        prefix: { type: 'string', maxLength: 64, pattern: '^[^/\\\\]*$', description: 'Prefix of the local names of groups not in `map` (default none)' },
        map: {
          type: 'array',
          maxItems: 1000,
          description: 'Explicit groups: a SCIM displayName and the team and/or role it is',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['group'],
            properties: { group: groupName, team: reference, role: reference },
          },
        },
        mappedOnly: { type: 'boolean', description: 'true: only the groups of `map` exist (default false)' },
      },
    },
    defaultRoles: { type: 'array', maxItems: 100, uniqueItems: true, items: reference, description: 'Roles every user this profile provisions is a member of' },
  },
  required: ['name', 'token'],
  references: [
    { field: 'token', type: 'credential' },
    { field: 'defaultRoles', type: 'role', many: true },
    { field: 'groups.map.team', type: 'team' },
    { field: 'groups.map.role', type: 'role' },
  ],
  hooks: {
    async validate(object, context) {
      const credential = await context.lookup('credential', object.token as string);
      if (credential && credential.type !== 'raw') return `token: "${String(object.token)}" is a ${String(credential.type)} credential; a raw credential (its secret is the token) is needed`;
      const targets = credential?.targets as string[] | undefined;
      if (targets && targets.length > 0 && !targets.includes('scim')) return `token: the credential "${String(object.token)}" is not usable by scim (its targets: ${targets.join(', ')})`;
      const map = ((object.groups as { map?: GroupMapEntry[] } | undefined)?.map ?? []);
      const seen = new Set<string>();
      for (const entry of map) {
        const key = entry.group.toLowerCase();
        if (seen.has(key)) return `groups.map: the group "${entry.group}" is mapped twice`;
        seen.add(key);
      }
    },
  },
};
