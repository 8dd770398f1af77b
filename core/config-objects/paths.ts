/** Dotted-path access into plain JSON objects (`auth.password`), for secret and reference fields. */
export function getPath(object: Record<string, unknown>, path: string): unknown {
  let at: unknown = object;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** Sets a value at a dotted path, creating plain objects on the way; `undefined` removes the member. */
export function setPath(object: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at: Record<string, unknown> = object;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      if (value === undefined) return;
      at[part] = {};
    }
    at = at[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
}

/** A deep copy of a JSON value (objects read from the store are never shared with callers). */
export const cloneJson = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
