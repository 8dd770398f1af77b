import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { SecurityRouteContext } from '../route-context.js';

/**
 * Most entries the dictionary answers. It feeds owner and team-member pickers: past this many, a user
 * narrows with ?query= rather than scrolling, and the answer stays small on large directories.
 */
export const DICTIONARY_CAP = 1000;

export interface DictionaryEntry {
  identifier: string;
  name?: string;
  email?: string;
}

interface Row {
  identifier: string;
  name: string | null;
  email: string | null;
}

// Byte order of UTF-8 = code point order, the order both engines sort these exact-collation columns in.
const byCodePoint = (a: DictionaryEntry, b: DictionaryEntry): number => Buffer.compare(Buffer.from(a.identifier), Buffer.from(b.identifier));
const likePattern = (text: string): string => `%${text.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;

/**
 * The principals one can pick: those with principal information and the enabled local accounts, one
 * entry per identifier (principal information wins for name and email), in identifier order, at most
 * DICTIONARY_CAP. `query` keeps those whose identifier, name or email contains it (case-insensitive).
 */
export async function principalDictionary(knex: Knex, tenant: string, query?: string): Promise<DictionaryEntry[]> {
  const read = (table: string, where: Record<string, unknown>): Promise<Row[]> => {
    const builder = knex(table).where(where).select('identifier', 'name', 'email').orderBy('identifier').limit(DICTIONARY_CAP);
    if (query) {
      const pattern = likePattern(query);
      builder.where((q) => {
        for (const column of ['identifier', 'name', 'email']) q.orWhereRaw("lower(??) like ? escape '!'", [column, pattern]);
      });
    }
    return builder as Promise<Row[]>;
  };
  // Each source's first CAP identifiers hold the first CAP of the union.
  const [infos, locals] = await Promise.all([
    read('security_principal_infos', { tenant }),
    read('security_local_identities', { tenant, enabled: true }),
  ]);
  const entries = new Map<string, DictionaryEntry>();
  for (const row of [...infos, ...locals]) {
    const entry = entries.get(row.identifier) ?? { identifier: row.identifier };
    if (entry.name === undefined && row.name) entry.name = row.name;
    if (entry.email === undefined && row.email) entry.email = row.email;
    entries.set(row.identifier, entry);
  }
  return [...entries.values()].sort(byCodePoint).slice(0, DICTIONARY_CAP);
}

const entrySchema = {
  type: 'object',
  required: ['identifier'],
  properties: { identifier: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' } },
} as const;

/** GET /api/v1/security/principals/dictionary: who can be picked as an owner or a team member. */
export async function dictionaryRoutes(app: FastifyInstance, ctx: SecurityRouteContext): Promise<void> {
  app.get<{ Querystring: { query?: string } }>('/api/v1/security/principals/dictionary', {
    config: { capability: 'common', access: 'authenticated' },
    schema: {
      tags: ['security'],
      summary: `Principals to pick as owner or team member: [{identifier, name?, email?}] in identifier order, at most ${DICTIONARY_CAP} (narrow with ?query=)`,
      querystring: { type: 'object', properties: { query: { type: 'string', maxLength: 191, description: 'Substring of the identifier, name or email (case-insensitive)' } } },
      response: { 200: { type: 'array', items: entrySchema } },
    },
    handler: (request) => principalDictionary(ctx.knex, request.principal!.tenant, request.query.query?.trim() || undefined),
  });
}
