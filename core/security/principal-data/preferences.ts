import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import type { ResolvedPrincipal } from '../principals/resolver.js';
import type { SecurityRouteContext } from '../route-context.js';
import { documentProblem, refuseInvalid } from './limits.js';

/** Largest preferences object, as compact JSON. */
export const MAX_PREFERENCES_BYTES = 64 * 1024;

const TABLE = 'security_principal_infos';

/**
 * Replaces a principal's preferences. A principal of an external provider may have no principal
 * information yet: the row is created then, granting nothing (permissions []). Update first, insert
 * when there was nothing to update, and update again if a concurrent request inserted first.
 */
export async function savePreferences(knex: Knex, now: number, principal: ResolvedPrincipal, preferences: Record<string, unknown>): Promise<void> {
  const { tenant, identifier } = principal;
  const text = JSON.stringify(preferences);
  for (let round = 0; round < 5; round++) {
    const n = await knex(TABLE).where({ tenant, identifier }).update({ preferences: text, updated_at: now });
    if (Number(n) > 0) return;
    try {
      await knex(TABLE).insert({
        id: newId(now),
        tenant,
        identifier,
        // What the provider says, so the principal dictionary can show who this is.
        name: principal.name?.slice(0, 255) ?? null,
        email: principal.email?.slice(0, 320) ?? null,
        permissions: '[]',
        preferences: text,
        created_at: now,
        updated_at: now,
      });
      return;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new Error(`principal information of "${identifier}" kept being created and deleted concurrently`);
}

const preferencesSchema = { type: 'object', additionalProperties: true } as const;

/** POST /api/v1/security/principals/preferences: the caller replaces its own preferences. */
export async function preferenceRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  app.post<{ Body: Record<string, unknown> }>('/api/v1/security/principals/preferences', {
    config: { capability: 'common', access: 'authenticated' },
    attachValidation: true,
    schema: {
      tags: ['security'],
      summary: `Replace your preferences (a JSON object, at most ${MAX_PREFERENCES_BYTES / 1024} KiB); answers what was stored`,
      body: preferencesSchema,
      response: { 200: preferencesSchema },
    },
    handler: async (request) => {
      refuseInvalid(request, 'SEC-PREF-002', 'preferences');
      const preferences = request.body;
      if (typeof preferences !== 'object' || preferences === null || Array.isArray(preferences)) {
        throw new ProblemError('SEC-PREF-002', { message: 'The preferences must be a JSON object' });
      }
      const problem = documentProblem(preferences, MAX_PREFERENCES_BYTES);
      if (problem) throw new ProblemError('SEC-PREF-002', { message: `Invalid preferences: ${problem}` });
      await savePreferences(ctx.knex, ctx.clock(), request.principal!, preferences);
      // The resolved principal (what /self shows) carries the preferences: drop this node's copy of it
      // only (verified keys of everyone else stay cached).
      ctx.invalidate({ tenant: request.principal!.tenant, identifier: request.principal!.identifier });
      return preferences;
    },
  });
}
