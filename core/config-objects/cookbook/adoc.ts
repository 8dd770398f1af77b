/**
 * AsciiDoc escaping for user values. Every character that could start markup (quotes, macros,
 * attribute references, cell separators, block delimiters, preprocessor directives, comments,
 * replacements) is written as a decimal character reference: the processor keeps references as they
 * are and the browser shows the character, so user text can never become markup. Letters, digits,
 * spaces and a few characters that are inert where they are kept stay readable in the source.
 */

const ALNUM = /^[A-Za-z0-9]$/;
/** Control characters (a tab becomes a space; others have no place in a document). */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/**
 * One character as written: kept, or a reference. Decimal references of printable ASCII always have
 * two digits or more, which Asciidoctor needs to leave them intact.
 */
function escapeChar(c: string, before: string | undefined, after: string | undefined): string {
  if (ALNUM.test(c) || c === ' ' || c === ',' || c.charCodeAt(0) > 0x9f) return c;
  const between = before !== undefined && after !== undefined && ALNUM.test(before) && ALNUM.test(after);
  // `a.b`, `a-b`, `a_b`, `a:b` are no markup (`...`, `--`, `_x_`, `x::`, `https://`, `NOTE: ` need
  // other neighbours); `/` after a letter is not a comment (`//` only starts one at a line's start).
  if (between && (c === '.' || c === '-' || c === '_' || c === ':')) return c;
  const afterWord = before !== undefined && ALNUM.test(before);
  if (c === '/' && afterWord) return c;
  // A full stop ending a word (`destination.`) is text; only a line-leading `.` or `...` are markup.
  if (c === '.' && afterWord && after !== '.') return c;
  return `&#${c.charCodeAt(0)};`;
}

/** The lines of a user value: line ends normalized, control characters dropped, tabs as spaces. */
export function lines(value: string): string[] {
  return value.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').replace(CONTROL, '\uFFFD').split('\n');
}

/** One line of user text, escaped (newlines become spaces: titles and link texts are single lines). */
export function inline(value: string): string {
  const chars = [...lines(value).join(' ')];
  return chars.map((c, i) => escapeChar(c, chars[i - 1], chars[i + 1])).join('');
}

/**
 * Multi-line user text for a table cell or a paragraph: each line escaped, joined by hard line breaks.
 * Empty lines become `{empty}` so that a blank line cannot end the paragraph.
 */
export function multiline(values: readonly string[]): string {
  const all = values.flatMap(lines);
  return all.map((l) => (l.trim() === '' ? '{empty}' : inline(l))).join(' +\n');
}

/** Inline monospace of user text (unconstrained, so it works next to any character). */
export function code(value: string): string {
  return `\`\`${inline(value)}\`\``;
}

/** A cross-reference to an anchor of this document. */
export function xref(id: string, label: string): string {
  return `<<${id},${inline(label)}>>`;
}

export type Cell = { text: string; mono?: boolean };

/** A two-column table (field, value) with a header row. */
export function fieldTable(rows: readonly { field: string; value: Cell }[]): string {
  const out = ['[cols="1,3",options="header"]', '|===', '|Field |Value', ''];
  for (const row of rows) {
    out.push(`|${inline(row.field)}`, `${row.value.mono ? 'm' : ''}|${row.value.text || '{empty}'}`, '');
  }
  out.push('|===');
  return out.join('\n');
}
