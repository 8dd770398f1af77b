import type { ConfigObject } from '@certwright/sdk';
import { cloneJson, getPath, setPath } from '../paths.js';
import { SECRET_MASK, type RegisteredType } from '../registry.js';

/**
 * What an update with `input` would leave stored, in portable form (secrets open), following the
 * registry's rules: `_id` dropped, `merge` types keep what the input leaves out, the type's normalize
 * hook, a secret left out (or sent as the mask) keeps its value, null clears it. Compared with the
 * current object it tells an unchanged object from a change before anything is written.
 */
export function expectedAfterUpdate(t: RegisteredType, input: ConfigObject, current: ConfigObject): ConfigObject {
  let out = cloneJson(input);
  delete out._id;
  if (t.decl.update === 'merge') out = { ...cloneJson(current), ...out };
  if (t.decl.hooks?.normalize) out = t.decl.hooks.normalize(out, cloneJson(current));
  for (const path of t.secretsOf(out)) {
    const value = getPath(input, path);
    if (value === undefined || value === SECRET_MASK) setPath(out, path, getPath(current, path));
    else if (value === null) setPath(out, path, undefined);
  }
  return out;
}

/** Top-level fields whose value differs (deep, key order ignored), `_id` aside. */
export function changedFields(before: ConfigObject, after: ConfigObject): string[] {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  fields.delete('_id');
  return [...fields].filter((f) => canonical(before[f]) !== canonical(after[f])).sort();
}

/** JSON with object members sorted: equal values give equal text whatever order their members came in. */
export function canonical(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}
