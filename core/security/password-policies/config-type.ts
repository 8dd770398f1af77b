import type { Knex } from 'knex';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore } from '@certwright/sdk';
import { isUniqueViolation } from '../../db/unique.js';
import { DEFAULT_POLICY, policyProblem, type PasswordPolicy } from './policy.js';
import type { PasswordPolicyRepository, StoredPasswordPolicy } from './repository.js';
import { DEFAULT_POLICY_NAME } from './service.js';

const RULES = ['minChar', 'maxChar', 'minLoChar', 'minUpChar', 'minDiChar', 'minSpChar', 'spChar'] as const;
const count = { type: 'integer' } as const;
/** The longest password a policy may ask for (policy.ts checks maxChar within 1..1024). */
const LONGEST = 1024;
/** Printable ASCII without space: generatePassword picks UTF-16 units, so anything wider would split. */
const SPECIALS = /^[!-~]*$/;

const stored = (s: StoredPasswordPolicy) => ({ id: s.id, name: s.policy.name, body: { ...s.policy } as ConfigObject, createdAt: s.createdAt, updatedAt: s.updatedAt });

/** The policies' own table (security_password_policies), read by local account checks too. */
function policyStore(repo: (db: Knex) => PasswordPolicyRepository): ConfigTypeStore {
  return {
    list: async (tenant, db) => (await repo(db as Knex).list(tenant)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repo(db as Knex).find(tenant, name);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, body, db) => {
      try {
        return stored(await repo(db as Knex).insert(tenant, body as unknown as PasswordPolicy));
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },
    update: async (tenant, _name, body, db) => (await repo(db as Knex).update(tenant, body as unknown as PasswordPolicy)) !== undefined,
    remove: (tenant, name, db) => repo(db as Knex).remove(tenant, name),
  };
}

/**
 * Password policies (/api/v1/security/passwordpolicies/, client-compat §2.3) on the registry. What they
 * keep of their own: a POST fills the rules it leaves out from the built-in Default, a PUT keeps them
 * (`merge`), `maxChar: null` means the longest allowed (as Horizon's MCP server clears it), `Default`
 * cannot be deleted, and their SEC-PWD-* codes and events. GET :name/generate stays in routes.ts.
 */
export function passwordPolicyType(repo: (db: Knex) => PasswordPolicyRepository): ConfigObjectType {
  return {
    type: 'password-policy',
    title: 'Password policies',
    noun: 'password policy',
    exportKey: 'passwordPolicies',
    description: 'Rules of generated and local account passwords; `Default` applies to local accounts.',
    basePath: '/api/v1/security/passwordpolicies/',
    tag: 'security',
    section: 'password-policies',
    errorFamily: 'SEC-PWD',
    update: 'merge',
    events: { module: 'security', created: 'SEC-PWD-CREATED', updated: 'SEC-PWD-UPDATED', deleted: 'SEC-PWD-DELETED' },
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
      minChar: count,
      maxChar: { type: ['integer', 'null'], description: 'null: no maximum of its own (the longest allowed, 1,024)' },
      minLoChar: count,
      minUpChar: count,
      minDiChar: count,
      minSpChar: count,
      spChar: { type: 'string', maxLength: 256 },
    },
    required: ['name'],
    store: policyStore(repo),
    hooks: {
      normalize(object, previous) {
        const out: ConfigObject = previous ? { ...object } : { ...DEFAULT_POLICY, ...object };
        if (out.maxChar === null) out.maxChar = LONGEST;
        // Only the policy's own fields are stored.
        return Object.fromEntries(['name', ...RULES].map((f) => [f, out[f]]));
      },
      validate(object) {
        const policy = object as unknown as PasswordPolicy;
        const problem = policyProblem(policy) ?? (SPECIALS.test(policy.spChar) ? null : 'spChar must contain printable ASCII characters only');
        if (problem) return `Invalid password policy "${policy.name}": ${problem}`;
      },
      beforeDelete(name) {
        if (name === DEFAULT_POLICY_NAME) return `The "${DEFAULT_POLICY_NAME}" password policy applies to local accounts and cannot be removed`;
      },
    },
  };
}
