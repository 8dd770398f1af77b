import { CERTIFICATE_PROPERTIES as OBJECT_PROPERTIES } from '../view.js';
import { invalid } from './elements.js';

/**
 * Every property a certificate result can carry (client-compat §3, the object view.ts builds, with the
 * derived `status`), plus `permissions`: not stored, the caller's workflow rights on each result (§4).
 */
export const CERTIFICATE_PROPERTIES: ReadonlySet<string> = new Set([...OBJECT_PROPERTIES, 'permissions']);

/**
 * `fields` → the properties to answer: absent or null = everything (null), `[]` = `_id` only,
 * otherwise the named camelCase properties plus `_id`. An unknown name is refused (HQL-002) rather
 * than silently answered as nothing.
 */
export function projectionOf(fields: readonly string[] | null | undefined): ReadonlySet<string> | null {
  if (fields === null || fields === undefined) return null;
  const out = new Set<string>(['_id']);
  for (const f of fields) {
    if (!CERTIFICATE_PROPERTIES.has(f)) throw invalid(`Unknown field "${f}"`);
    out.add(f);
  }
  return out;
}
