/**
 * `REGEXP` for SQLite, which has the operator but no implementation: `x REGEXP p` calls `regexp(p, x)`.
 * Registered on every better-sqlite3 connection (core/db/connection.ts). Patterns come from the query
 * compiler, already checked (regex.ts) and prefixed `(?i)` or `(?-i)` — inline flags MariaDB's PCRE2
 * reads natively and that this function turns into JavaScript flags — so both engines get one text.
 */
const CACHE_SIZE = 256;
const cache = new Map<string, RegExp>();

function compiled(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) {
    // Most recently used last: Map keeps insertion order, so the first key is the eviction candidate.
    cache.delete(pattern);
    cache.set(pattern, re);
    return re;
  }
  let flags = 'u';
  let source = pattern;
  if (source.startsWith('(?i)')) {
    flags = 'iu';
    source = source.slice(4);
  } else if (source.startsWith('(?-i)')) {
    source = source.slice(5);
  }
  re = new RegExp(source, flags);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(pattern, re);
  return re;
}

/** 1 when `value` matches, 0 when not or when either is NULL (a NULL column never matches). */
export function sqliteRegexp(pattern: unknown, value: unknown): number {
  if (pattern === null || pattern === undefined || value === null || value === undefined) return 0;
  const text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  return compiled(String(pattern)).test(text) ? 1 : 0;
}
