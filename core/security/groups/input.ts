import type { Knex } from 'knex';
import { ProblemError, type ErrorCode } from '../../errors/index.js';
import { permissionValueProblem } from '../permissions/catalogue.js';
import type { Permission } from '../permissions/permission-set.js';
export { localizedInput, localizedOf, localizedOutput } from '../../http/localized-text.js';

/**
 * JSON-schema fragments and input normalisation shared by the roles, teams and principal information
 * routes, so the three accept the same shapes and refuse the same mistakes.
 */

/** Role and team names: they appear in paths, so no '/'; 191 = the indexed column's length. */
export const NAME = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;
export const IDENTIFIER = { type: 'string', minLength: 1, maxLength: 191 } as const;

/** An optional email: null or "" (both stored as null) tolerated, as clients send either for "none". */
export const EMAIL = { type: ['string', 'null'], maxLength: 320, anyOf: [{ type: 'string', format: 'email' }, { const: '' }, { type: 'null' }] } as const;

/** Fields the server owns that a client may echo back from a GET: accepted, ignored. */
export const SERVER_OWNED = { _id: {}, createdAt: {}, updatedAt: {} } as const;

export const permissionsInput = {
  type: ['array', 'null'],
  maxItems: 1000,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['value'],
    // The value's own rules (and their reasons) are permissionValueProblem's, answered as *-002.
    properties: { value: { type: 'string' }, filter: { type: ['string', 'null'], maxLength: 8192 } },
  },
} as const;

export const permissionsOutput = {
  type: 'array',
  items: { type: 'object', required: ['value'], properties: { value: { type: 'string' }, filter: { type: 'string' } } },
} as const;

/** Validated permissions, an empty filter meaning none; throws `code` (a *-002) naming the bad value. */
export function permissionsOf(given: { value: string; filter?: string | null }[] | null | undefined, code: ErrorCode): Permission[] {
  const out: Permission[] = [];
  for (const [i, p] of (given ?? []).entries()) {
    const problem = permissionValueProblem(p.value);
    if (problem !== null) throw new ProblemError(code, { message: `permissions[${i}]: "${p.value}" ${problem}` });
    out.push(p.filter ? { value: p.value, filter: p.filter } : { value: p.value });
  }
  return out;
}


export const parseJson = <T>(text: string | null | undefined, fallback: T): T => {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

/** Distinct values, in first-seen order. */
export const distinct = (values: readonly string[]): string[] => [...new Set(values)];

/**
 * Locks a group row for the rest of the transaction on MySQL, so a concurrent delete cannot leave
 * memberships behind that a later group of the same name would inherit (SQLite serialises writers).
 */
export function lockingRead<Q extends Knex.QueryBuilder>(trx: Knex.Transaction, query: Q): Q {
  return (trx.client.config.client === 'mysql2' ? query.forUpdate() : query) as Q;
}
