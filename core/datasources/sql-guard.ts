/** The SQL dialect a database datasource's query is read in (string escapes differ). */
export type SqlDialect = 'sqlite' | 'mysql';

/**
 * Why a database datasource's query is refused, or null: it must be one SELECT, with `?` placeholders for its
 * parameters (as many as `parameters` holds). This is the first of three fences: the connection is read-only
 * too (SQLite opened readonly and the statement checked by SQLite itself; MySQL in a READ ONLY transaction,
 * one statement per call, the query wrapped as a derived table), so a query that slipped through here would
 * still write nothing.
 */
export function selectProblem(query: string, dialect: SqlDialect, parameters: number): string | null {
  // MySQL runs the text of /*! … */ and /*+ … */ comments: they are code, not comments.
  if (dialect === 'mysql' && /\/\*[!+]/.test(query)) return 'executable comments (/*! … */) are refused';
  const masked = maskSql(query, dialect);
  if (masked === null) return 'a string, quoted name or comment is not closed';
  const text = masked.trim().replace(/;\s*$/, '');
  if (text.includes(';')) return 'must be a single statement';
  if (!/^select\b/i.test(text)) return 'must be a SELECT';
  if (/\binto\b/i.test(text)) return 'SELECT … INTO is refused: a datasource only reads';
  if (/\bfor\s+(update|share)\b|\block\s+in\s+share\s+mode\b/i.test(text)) return 'locking reads are refused';
  const placeholders = (text.match(/\?/g) ?? []).length;
  if (placeholders !== parameters) return `has ${placeholders} "?" placeholder${placeholders === 1 ? '' : 's'} for ${parameters} parameter${parameters === 1 ? '' : 's'}`;
  return null;
}

/**
 * The query with string literals, quoted names and comments blanked out (their length kept), so that keywords,
 * `;` and `?` are only found in the SQL itself; null when one is left open.
 */
export function maskSql(query: string, dialect: SqlDialect): string | null {
  let out = '';
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    const next = query[i + 1];
    if (c === '-' && next === '-') {
      const end = query.indexOf('\n', i);
      const stop = end < 0 ? query.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === '#' && dialect === 'mysql') {
      const end = query.indexOf('\n', i);
      const stop = end < 0 ? query.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = query.indexOf('*/', i + 2);
      if (end < 0) return null;
      out += ' '.repeat(end + 2 - i);
      i = end + 2;
    } else if (c === "'" || c === '"' || c === '`' || (c === '[' && dialect === 'sqlite')) {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      for (;;) {
        if (j >= query.length) return null;
        const d = query[j]!;
        // MySQL strings take backslash escapes; a doubled quote escapes itself in both dialects.
        if (d === '\\' && dialect === 'mysql' && c !== '`') j += 2;
        else if (d === close && query[j + 1] === close && c !== '[') j += 2;
        else if (d === close) break;
        else j += 1;
      }
      out += 'x'.repeat(j + 1 - i);
      i = j + 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}
