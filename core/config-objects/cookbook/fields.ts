import type { ConfigObject } from '@certwright/sdk';
import { SECRET_MASK, type RegisteredType } from '../registry.js';
import { inline, multiline, xref, type Cell } from './adoc.js';
import type { AnchorIds } from './anchors.js';

type Json = unknown;

const isPlainObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: Json): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

/** `[{lang, value}]`: a localized text (terms of service, announcements). */
function isLocalized(v: Json): v is { lang: string; value: string }[] {
  return Array.isArray(v) && v.length > 0 && v.every((e) => isPlainObject(e) && typeof e.lang === 'string' && typeof e.value === 'string' && Object.keys(e).length === 2);
}

/** Fields in the order the type declares them, then any others (a plugin's additions) by name. */
function orderedKeys(object: Record<string, Json>, declared: readonly string[]): string[] {
  const keys = Object.keys(object).filter((k) => k !== '_id');
  return [...declared.filter((k) => keys.includes(k)), ...keys.filter((k) => !declared.includes(k)).sort()];
}

function referenceCell(names: readonly string[], type: string, anchors: AnchorIds): Cell {
  // A link only to an object the document holds; otherwise the name as text (its section is not readable).
  const rendered = names.map((name) => {
    const id = anchors.of(type, name);
    return id ? xref(id, name) : inline(name);
  });
  return { text: rendered.join(' +\n') };
}

/**
 * The table rows of one object (as `registry.list` answers it: secrets already masked): nested objects
 * flattened to dotted fields, scalar arrays one item a line, localized texts one language a line, other
 * structures as a JSON literal in monospace. `_id` is left out: it differs on every instance.
 */
export function objectRows(t: RegisteredType, object: ConfigObject, anchors: AnchorIds): { field: string; value: Cell }[] {
  const references = new Map((t.decl.references ?? []).map((r) => [r.field, r.type]));
  const rows: { field: string; value: Cell }[] = [];
  const secrets = t.secretsOf(object);
  const visit = (value: Record<string, Json>, prefix: string, declared: readonly string[]): void => {
    for (const key of orderedKeys(value, declared)) {
      const field = prefix ? `${prefix}.${key}` : key;
      const v = value[key];
      if (v === undefined || v === null) continue;
      // Masked again here, whatever the value: a secret must never reach the document. The mask is ours,
      // so a passthrough keeps it literal in the source.
      if (secrets.includes(field)) rows.push({ field, value: { text: `+${SECRET_MASK}+` } });
      else if (references.has(field) && (typeof v === 'string' || (Array.isArray(v) && v.every((n) => typeof n === 'string'))))
        rows.push({ field, value: referenceCell(typeof v === 'string' ? [v] : (v as string[]), references.get(field)!, anchors) });
      else if (isLocalized(v)) rows.push({ field, value: { text: multiline(v.map((e) => `${e.lang}: ${e.value}`)) } });
      else if (isPlainObject(v) && Object.keys(v).length > 0) visit(v, field, []);
      else if (Array.isArray(v) && v.length > 0 && v.every(isScalar)) rows.push({ field, value: { text: multiline(v.map(String)) } });
      else if (isScalar(v)) rows.push({ field, value: { text: multiline([String(v)]) } });
      else rows.push({ field, value: { text: inline(JSON.stringify(v)), mono: true } });
    }
  };
  visit(object, '', Object.keys(t.decl.properties));
  return rows;
}
