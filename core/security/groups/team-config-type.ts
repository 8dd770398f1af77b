import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import type { LocalizedText } from '../principals/resolver.js';
import { groupConfigStore } from './group-config-store.js';
import type { Stored } from './group-store.js';
import { distinct, EMAIL, IDENTIFIER, localizedInput, localizedOf, NAME } from './input.js';
import type { TeamInput, TeamStore } from './team-store.js';
import { webhookInput, webhookOf, type TeamWebhook } from './team-webhook.js';

/** A team as the API answers it, without `_id` (the registry adds it). */
export const teamBody = (t: Stored<TeamInput>): ConfigObject => ({
  name: t.name,
  displayName: t.displayName,
  description: t.description,
  contact: t.contact,
  externallyManaged: t.externallyManaged,
  managers: t.managers ?? [],
  webhook: t.webhook,
});

/**
 * The `email` format as the HTTP layer's validator checked it (ajv-formats, full mode): the registry's own
 * validator checks no format, so the hook below does.
 */
const EMAIL_FORMAT = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/**
 * Teams (/api/v1/security/teams/, client-compat §7) on the configuration registry: their own table
 * (security_teams) and memberships through `teams`, a PUT replacing the team named in the body, SEC-TEAM-*
 * codes and events. What they keep of their own: `managers` sets the members' manager flags and, left out
 * of a write, leaves them as they are (team-managers.ts; answered from the memberships, which is why the
 * registry reads an object back after an update); `webhook` must be an http(s) URL (team-webhook.ts); an
 * empty contact is none; a change applies to principals from the next request (`invalidatePrincipals`);
 * memberships are deleted with the team. PATCH :previousTeam/:newTeam and :name/members stay in
 * team-routes.ts.
 */
export function teamType(teams: TeamStore, invalidatePrincipals: () => void): ConfigObjectType {
  return {
    type: 'team',
    title: 'Teams',
    noun: 'team',
    exportKey: 'teams',
    description:
      'Groups of principals that own certificates and requests; `managers` are the members with the manager flag (members: GET, POST, DELETE :name/members; rename or merge: PATCH :previousTeam/:newTeam).',
    basePath: '/api/v1/security/teams/',
    tag: 'security',
    section: 'teams',
    errorFamily: 'SEC-TEAM',
    update: 'replace',
    events: { module: 'security', created: 'SEC-TEAM-CREATED', updated: 'SEC-TEAM-UPDATED', deleted: 'SEC-TEAM-DELETED' },
    properties: {
      name: NAME,
      displayName: localizedInput,
      description: localizedInput,
      contact: EMAIL,
      externallyManaged: { type: ['boolean', 'null'] },
      // Omitted: the manager flags stay as they are; null or []: no manager (the MCP's clear_fields sends null).
      managers: { type: ['array', 'null'], maxItems: 1000, items: IDENTIFIER, description: 'Identifiers of the members who manage the team (the manager flag of their membership)' },
      webhook: { ...webhookInput, description: "The team's corporate channel (Teams, Slack/Mattermost) incoming webhook, or null" },
    },
    required: ['name'],
    // Echoed back by read-modify-write clients: accepted, ignored (as `_id`).
    serverOwned: ['createdAt', 'updatedAt'],
    store: groupConfigStore(teams, teamBody),
    hooks: {
      normalize(object) {
        const managers = object.managers as string[] | null | undefined;
        return {
          name: object.name,
          displayName: localizedOf(object.displayName as LocalizedText[] | string | null | undefined),
          description: localizedOf(object.description as LocalizedText[] | string | null | undefined),
          contact: (object.contact as string | null | undefined) || null,
          externallyManaged: (object.externallyManaged as boolean | null | undefined) ?? false,
          ...(managers === undefined ? {} : { managers: distinct(managers ?? []) }),
          webhook: webhookOf(object.webhook as TeamWebhook | null | undefined),
        };
      },
      validate(object) {
        if (typeof object.contact === 'string' && !EMAIL_FORMAT.test(object.contact)) return 'contact: must match format "email"';
      },
      afterChange() {
        invalidatePrincipals();
      },
    },
  };
}
