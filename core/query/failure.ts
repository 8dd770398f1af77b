import { ProblemError } from '../errors/index.js';

/** Where a query went wrong: offsets are 0-based UTF-16 positions in the query text. */
export interface QueryErrorAt {
  position: number;
  /** The query text, to report line and column (1-based, as editors count). */
  text?: string;
  /** What would have been accepted at `position`: tokens, or close field names. */
  expected?: readonly string[];
}

/**
 * HQL-001 with the position as extension members (`position`, `line`, `column`, `expected`) so a client
 * can point at the error; the message carries the position too, for clients that only show `message`.
 */
export function invalidQuery(reason: string, at?: QueryErrorAt): ProblemError {
  if (!at) return new ProblemError('HQL-001', { message: `Invalid query: ${reason}` });
  const extra: Record<string, unknown> = { position: at.position };
  let detail: string | undefined;
  if (at.text !== undefined) {
    const before = at.text.slice(0, at.position);
    const line = before.split('\n').length;
    const column = at.position - before.lastIndexOf('\n');
    Object.assign(extra, { line, column });
    detail = `line ${line}, column ${column}`;
  }
  if (at.expected) extra.expected = [...at.expected];
  return new ProblemError('HQL-001', { message: `Invalid query at position ${at.position}: ${reason}`, detail, extra });
}

/** A short quotation of the text at `position` for messages: the token there, or "end of query". */
export function foundAt(text: string, position: number): string {
  if (position >= text.length) return 'end of query';
  const token = /^(?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[A-Za-z0-9_.-]+|[^\s])/su.exec(text.slice(position, position + 200))?.[0] ?? text.charAt(position);
  return JSON.stringify(token.length > 40 ? `${token.slice(0, 40)}…` : token);
}

/** `a, b or c`. */
export function oneOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
