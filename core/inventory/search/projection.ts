import { CERTIFICATE_PROPERTIES as OBJECT_PROPERTIES } from '../view.js';
import { CERTIFICATE_LANGUAGE } from '../language.js';
import { invalid, resolveElement } from './elements.js';

/**
 * Every property a certificate result can carry (client-compat §3, the object view.ts builds, with the
 * derived `status`), plus `permissions`: not stored, the caller's workflow rights on each result (§4).
 */
export const CERTIFICATE_PROPERTIES: ReadonlySet<string> = new Set([...OBJECT_PROPERTIES, 'permissions']);

const BY_LOWER = new Map([...CERTIFICATE_PROPERTIES].map((p) => [p.toLowerCase(), p]));

/**
 * Horizon's grade is an object (`grade.details`, `grade.score`); Certwright answers the worst grade in `grade`
 * and each policy's details in `grades`, so a part of the grade answers both.
 */
const SUB_PATH_PROPERTIES: Readonly<Record<string, readonly string[]>> = { grade: ['grade', 'grades'] };

/**
 * The properties a `fields` name answers: a property (`notAfter`), a query name (`valid.until`,
 * `contactemail`), either case-insensitively, or a path into a property (`discoverydata.lastSeen`,
 * `grade.details`: the MCP server's search presets), answered as the whole property.
 */
function propertiesOf(name: string): readonly string[] | null {
  if (CERTIFICATE_PROPERTIES.has(name)) return [name];
  const queried = resolveElement(CERTIFICATE_LANGUAGE, name)?.field.property;
  if (queried && CERTIFICATE_PROPERTIES.has(queried)) return [queried];
  const lower = name.toLowerCase();
  const exact = BY_LOWER.get(lower);
  if (exact) return [exact];
  const dot = lower.indexOf('.');
  if (dot <= 0 || dot === lower.length - 1) return null;
  const head = lower.slice(0, dot);
  const property = BY_LOWER.get(head);
  return property ? (SUB_PATH_PROPERTIES[property] ?? [property]) : null;
}

/**
 * `fields` → the properties to answer: absent or null = everything (null), `[]` = `_id` only,
 * otherwise the named properties plus `_id`. An unknown name is refused (HQL-002) rather
 * than silently answered as nothing.
 */
export function projectionOf(fields: readonly string[] | null | undefined): ReadonlySet<string> | null {
  if (fields === null || fields === undefined) return null;
  const out = new Set<string>(['_id']);
  for (const f of fields) {
    const properties = propertiesOf(f);
    if (!properties) throw invalid(`Unknown field "${f}"`);
    for (const p of properties) out.add(p);
  }
  return out;
}
