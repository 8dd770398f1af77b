import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { description, objectName, reference } from '../../config-objects/types/common.js';
import { CERTIFICATE_LANGUAGE } from '../../inventory/language.js';
import { parseQuery } from '../../query/index.js';
import { EXECUTION_POLICY_TYPE } from '../executions/routes.js';
import { RENEWAL_CAUSES, type AutomationPolicy } from './model.js';

export const AUTOMATION_POLICY_TYPE = 'automation-policy';

const names = { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 191 } } as const;

/**
 * Automation policies (/api/v1/automation/policies/, the standard set). The vendor's fields (horizon-go
 * AutomationPolicy: `name`, `profile`, `executionPolicy`, `compliancePolicy {authorizedSigningAlgorithms,
 * authorizedCas}`, `trustChains`) plus what the lifecycle task needs to act on its own: which certificates of
 * the profile it covers (`query`, HCQL), when it renews (`renewal`), what prompts a renewal (`renewOn`), how
 * long a superseded certificate lives on (`revokeSupersededAfterDays`), when a pending request is given up
 * (`expireRequestsAfterDays`) and how failures are retried (`retries`). Model and defaults: model.ts.
 */
export function automationPolicyType(): ConfigObjectType {
  return {
    type: AUTOMATION_POLICY_TYPE,
    title: 'Automation policies',
    noun: 'automation policy',
    exportKey: 'automationPolicies',
    description: 'Which certificates renew by themselves: those of a profile (narrowed by a query), when (days before expiry, a share of the lifetime, or the ACME ARI window), within which execution policy.',
    basePath: '/api/v1/automation/policies/',
    tag: 'automation',
    section: 'automation',
    errorFamily: 'AUTOMATION-POLICY',
    update: 'replace',
    serverOwned: ['createdAt', 'updatedAt'],
    properties: {
      name: objectName,
      description: { anyOf: [description, { type: 'null' }] },
      profile: { ...reference, description: 'The certificate profile renewals go through; the policy covers its certificates' },
      query: { type: ['string', 'null'], maxLength: 4096, description: 'HCQL: only the certificates of the profile it matches (all of them when absent)' },
      executionPolicy: { anyOf: [reference, { type: 'null' }], description: 'When the lifecycle task may act (/api/v1/automation/executions/); always when absent' },
      compliancePolicy: {
        anyOf: [
          { type: 'null' },
          {
            type: 'object',
            additionalProperties: false,
            properties: { authorizedSigningAlgorithms: { anyOf: [names, { type: 'null' }] }, authorizedCas: { anyOf: [names, { type: 'null' }] } },
          },
        ],
        description: 'A certificate signed otherwise, or by another CA (issuer DN), is not compliant (verify answers so; renewOn noncompliance renews it)',
      },
      trustChains: { anyOf: [names, { type: 'null' }], description: 'Trust chains an automation client installs (answered by the lifecycle route)' },
      renewal: {
        type: 'object',
        additionalProperties: false,
        properties: {
          mode: { enum: ['daysBeforeExpiry', 'lifetimeShare', 'ari'], description: 'daysBeforeExpiry (default), lifetimeShare (remaining share of the lifetime), or ari (in the RFC 9773 window: 2/3 to 5/6 of the lifetime)' },
          daysBeforeExpiry: { type: 'integer', minimum: 1, maximum: 3650, description: 'mode daysBeforeExpiry: renew this many days before notAfter (default 30)' },
          lifetimeShare: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1, description: 'mode lifetimeShare: renew when this share of the lifetime remains (default 1/3)' },
        },
      },
      renewOn: { type: 'array', uniqueItems: true, maxItems: RENEWAL_CAUSES.length, items: { enum: [...RENEWAL_CAUSES] }, description: 'What prompts a renewal: expiry (the window above; default), revocation (a revoked certificate is replaced), noncompliance (the compliance policy)' },
      revokeSupersededAfterDays: { type: ['integer', 'null'], minimum: 0, maximum: 3650, description: 'Revoke (superseded) a renewed certificate this many days after its renewal; never when null (default)' },
      expireRequestsAfterDays: { type: ['integer', 'null'], minimum: 1, maximum: 3650, description: 'Cancel requests of the profile still pending after this many days; never when null (default)' },
      requireApproval: { type: 'boolean', description: 'true: renewals wait for an approver (a pending request) instead of issuing at once (default false)' },
      retries: {
        type: 'object',
        additionalProperties: false,
        properties: {
          max: { type: 'integer', minimum: 0, maximum: 50, description: 'Attempts after the first failure (default 5)' },
          backoffMinutes: { type: 'integer', minimum: 1, maximum: 10080, description: 'Delay before the first retry, doubled each time (default 60)' },
        },
      },
    },
    required: ['name', 'profile'],
    references: [
      { field: 'profile', type: 'profile' },
      { field: 'executionPolicy', type: EXECUTION_POLICY_TYPE },
    ],
    hooks: {
      normalize: (object): ConfigObject => {
        const renewal = { mode: 'daysBeforeExpiry', ...((object.renewal as object | undefined) ?? {}) } as Record<string, unknown>;
        if (renewal.mode === 'daysBeforeExpiry') renewal.daysBeforeExpiry ??= 30;
        if (renewal.mode === 'lifetimeShare') renewal.lifetimeShare ??= 1 / 3;
        return {
          ...object,
          renewal,
          renewOn: (object.renewOn as string[] | undefined) ?? ['expiry'],
          revokeSupersededAfterDays: object.revokeSupersededAfterDays ?? null,
          expireRequestsAfterDays: object.expireRequestsAfterDays ?? null,
          requireApproval: object.requireApproval === true,
          retries: { max: 5, backoffMinutes: 60, ...((object.retries as object | undefined) ?? {}) },
        };
      },
      validate: (object) => {
        const policy = object as unknown as AutomationPolicy;
        if (policy.query) {
          try {
            parseQuery(policy.query, CERTIFICATE_LANGUAGE);
          } catch (err) {
            return `query: ${(err as Error).message}`;
          }
        }
        if (policy.renewOn.includes('noncompliance') && !policy.compliancePolicy) return 'renewOn: noncompliance needs a compliancePolicy';
        return undefined;
      },
    },
  };
}
