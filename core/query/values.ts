import { parseIsoDate, startOfUtcDay } from './dates.js';
import { invalidQuery, oneOf } from './failure.js';
import { checkRegex, RegexError, type CheckedRegex } from './regex.js';
import type { FieldDefinition, FieldStorage, Literal, Operator } from './types.js';

/**
 * Literals → the values a field compares with. A literal's meaning comes from the field: `"2025"` is a
 * date for `valid.until` and text for `profile`. Every refusal is HQL-001 naming the value and where.
 */
export type Scalar = string | number | boolean;

/** Operators whose values are compared for equality (normalised, checked against `values`). */
const EQUALITY: ReadonlySet<Operator> = new Set(['equals', 'not equals', 'in', 'not in']);

const describe = (literal: Literal): string => (literal.kind === 'string' ? JSON.stringify(literal.value) : literal.kind === 'number' || literal.kind === 'relative' ? literal.raw : literal.value);

const textOf = (literal: Literal): string => (literal.kind === 'string' || literal.kind === 'word' ? literal.value : literal.raw);

const refuse = (literal: Literal, reason: string, text?: string, expected?: readonly string[]) =>
  invalidQuery(`${describe(literal)} ${reason}`, { position: literal.offset, text, expected });

const isLowercase = (storage: FieldStorage): boolean => storage.kind === 'side' && storage.lowercase === true;

/** The value of `literal` compared with `field` by `operator` at `now` (regex operators: see regexOf). */
export function scalarOf(field: FieldDefinition, operator: Operator, literal: Literal, now: number, text?: string): Scalar {
  switch (field.type) {
    case 'string': {
      let value = textOf(literal);
      if (EQUALITY.has(operator)) {
        if (field.normalize) value = field.normalize(value);
        if (field.values && !field.values.includes(value)) {
          throw refuse(literal, `is not a value of ${field.name} (accepted: ${oneOf(field.values.map((v) => JSON.stringify(v)))})`, text, field.values);
        }
      }
      // SQLite's LIKE and LOWER() stop at a NUL: the pattern would silently match more.
      if (operator === 'contains' && value.includes('\u0000')) throw refuse(literal, 'contains a NUL character, which contains cannot search for', text);
      // contains is case-insensitive; lower-cased storage holds lower-cased values.
      if (operator === 'contains' || isLowercase(field.storage)) value = value.toLowerCase();
      return value;
    }
    case 'date':
      return dateOf(field, literal, now, text);
    case 'number': {
      // Finite only: 400 digits parse as Infinity, which MySQL cannot bind.
      const n = literal.kind === 'number' ? literal.value : literal.kind === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(literal.value) ? Number(literal.value) : NaN;
      if (Number.isFinite(n)) return n;
      throw refuse(literal, `is not a number (${field.name} is numeric)`, text, ['number']);
    }
    case 'boolean': {
      const word = textOf(literal).toLowerCase();
      if (word === 'true' || word === '1') return true;
      if (word === 'false' || word === '0') return false;
      throw refuse(literal, `is not true or false (${field.name} is a boolean)`, text, ['true', 'false']);
    }
  }
}

function dateOf(field: FieldDefinition, literal: Literal, now: number, text?: string): number {
  switch (literal.kind) {
    case 'number':
      if (Number.isSafeInteger(literal.value)) return literal.value;
      break;
    case 'relative':
      if (Number.isSafeInteger(now + literal.ms)) return now + literal.ms;
      break;
    case 'word':
      if (literal.value === 'now') return now;
      if (literal.value === 'today') return startOfUtcDay(now);
      break;
    case 'string': {
      const ms = parseIsoDate(literal.value);
      if (ms !== undefined) return ms;
      break;
    }
  }
  throw refuse(literal, `is not a date (${field.name} takes "2025", "2025-03-14", "2025-03-14T10:20:30Z", epoch milliseconds, now, today or 30d / -24h)`, text, [
    'date',
    'now',
    'today',
    'duration',
    'number',
  ]);
}

/** A `matches` / `within` pattern, checked for portability (regex.ts). */
export function regexOf(literal: Literal, text?: string): CheckedRegex {
  try {
    return checkRegex(textOf(literal));
  } catch (err) {
    if (!(err instanceof RegexError)) throw err;
    // The position is the pattern's start: string escapes make offsets inside it approximate.
    throw invalidQuery(`invalid regular expression ${describe(literal)}: ${err.message} (pattern character ${err.index})`, { position: literal.offset, text });
  }
}
