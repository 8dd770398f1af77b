import type { Knex } from 'knex';
import { CERTIFICATE_LANGUAGE } from '../inventory/language.js';
import { parseQuery, querySource } from '../query/index.js';

const TABLE = CERTIFICATE_LANGUAGE.table;

/**
 * The ids among `ids` (certificates of `tenant`) that a trigger's HCQL query admits, read through the
 * query engine the search uses (core/query querySource), so a trigger narrows exactly as a search would.
 * A null query admits every certificate that exists.
 */
export async function certificatesMatching(knex: Knex, tenant: string, ids: readonly string[], query: string | null, now: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const ast = parseQuery(query, CERTIFICATE_LANGUAGE);
  const { qb } = querySource(ast, CERTIFICATE_LANGUAGE, { knex, now, table: TABLE, tenant }, false);
  const rows = (await qb.whereIn(`${TABLE}.id`, [...ids]).select(`${TABLE}.id as id`)) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** Whether a trigger's query admits one certificate (false when the certificate does not exist). */
export async function certificateMatches(knex: Knex, tenant: string, id: string, query: string | null, now: number): Promise<boolean> {
  return (await certificatesMatching(knex, tenant, [id.toLowerCase()], query, now)).size > 0;
}

/** The certificate an event concerns: its object when that is a certificate, else `payload.certificateId`. */
export function certificateOfEvent(event: { objectType?: string | null; objectId?: string | null; payload: unknown }): string | null {
  if (event.objectType === 'certificate' && event.objectId) return event.objectId.toLowerCase();
  const payload = typeof event.payload === 'string' ? safeParse(event.payload) : event.payload;
  const id = (payload as { certificateId?: unknown } | null)?.certificateId;
  return typeof id === 'string' && id !== '' ? id.toLowerCase() : null;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
