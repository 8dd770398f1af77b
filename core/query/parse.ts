import { LRUCache } from 'lru-cache';
import type { parser } from 'peggy';
import type { ProblemError } from '../errors/index.js';
import { foundAt, invalidQuery, oneOf } from './failure.js';
import { closeFieldNames, operatorsOf, resolveField, type FieldRef } from './fields.js';
import { GrammarSyntaxError, parseRaw, type RawField, type RawNode } from './grammar.js';
import { MAX_DEPTH, MAX_QUERY_LENGTH, PARSE_CACHE_ENTRY_CHARS, PARSE_CACHE_MAX_CHARS, PARSE_CACHE_MAX_TEXT, PARSE_CACHE_SIZE } from './limits.js';
import { regexOf, scalarOf } from './values.js';
import type { QueryLanguage, QueryNode } from './types.js';

/**
 * Query text → checked tree. Fields, operators, specials and values are checked against the language
 * here, while positions are known, so every error points into the text; applyQuery then only turns the
 * tree into SQL. Trees are cached per language by text: the same query comes back page after page.
 * A returned tree is shared: treat it as read-only.
 */
export function parseQuery(text: string | null | undefined, language: QueryLanguage): QueryNode {
  if (text === null || text === undefined || text.trim() === '') return { kind: 'all' };
  if (text.length > MAX_QUERY_LENGTH) throw invalidQuery(`the query is longer than ${MAX_QUERY_LENGTH} characters`, { position: MAX_QUERY_LENGTH });
  const cache = cacheOf(language);
  const cached = cache.get(text);
  if (cached) return cached;
  let raw: RawNode;
  try {
    raw = parseRaw(text, MAX_DEPTH);
  } catch (err) {
    throw syntaxProblem(err, text);
  }
  const tree = checked(raw, language, text);
  if (text.length <= PARSE_CACHE_MAX_TEXT) cache.set(text, tree);
  return tree;
}

/**
 * Per language, least recently used first out, bounded twice: PARSE_CACHE_SIZE entries and PARSE_CACHE_MAX_CHARS
 * characters of text (trees weigh in proportion to their text; see limits.ts).
 */
const caches = new WeakMap<QueryLanguage, LRUCache<string, QueryNode>>();
function cacheOf(language: QueryLanguage): LRUCache<string, QueryNode> {
  let cache = caches.get(language);
  if (!cache) {
    cache = new LRUCache<string, QueryNode>({ max: PARSE_CACHE_SIZE, maxSize: PARSE_CACHE_MAX_CHARS, sizeCalculation: (_tree, text) => text.length + PARSE_CACHE_ENTRY_CHARS });
    caches.set(language, cache);
  }
  return cache;
}

/** What a language's parse cache holds now: entries and the characters they count (tests of the bounds). */
export function parseCacheUsage(language: QueryLanguage): { entries: number; chars: number } {
  const cache = caches.get(language);
  return { entries: cache?.size ?? 0, chars: cache?.calculatedSize ?? 0 };
}

function syntaxProblem(err: unknown, text: string): ProblemError {
  const depthAt = (err as { queryDepthOffset?: unknown } | null)?.queryDepthOffset;
  if (typeof depthAt === 'number') {
    return invalidQuery(`more than ${MAX_DEPTH} nested parentheses and "not"`, { position: depthAt, text });
  }
  if (err instanceof GrammarSyntaxError) {
    const position = err.location.start.offset;
    // error() in the grammar (unterminated string, bad \u escape) carries its own message.
    if (!err.expected) return invalidQuery(err.message, { position, text });
    const expected = expectedOf(err.expected);
    return invalidQuery(`expected ${oneOf(expected)} but found ${foundAt(text, position)}`, { position, text, expected });
  }
  // Belt and braces: the depth limit keeps the parser's recursion far from the stack's end.
  if (err instanceof RangeError) return invalidQuery('the query is nested too deeply', { position: 0, text });
  throw err;
}

type Expectation = parser.Expectation;

/** peggy's expectations as words: `"and"`, `string`, `end of query` (last); whitespace only if alone. */
function expectedOf(list: readonly Expectation[]): string[] {
  const words: string[] = [];
  for (const e of list) {
    const word =
      e.type === 'literal' ? JSON.stringify(e.text) : e.type === 'other' ? e.description : e.type === 'end' ? 'end of query' : e.type === 'any' ? 'any character' : 'character';
    if (!words.includes(word)) words.push(word);
  }
  const shown = words.length > 1 ? words.filter((w) => w !== 'whitespace') : words;
  return [...shown.filter((w) => w !== 'end of query'), ...shown.filter((w) => w === 'end of query')];
}

const quoted = (name: string): string => JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);

function checked(node: RawNode, language: QueryLanguage, text: string): QueryNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((c) => checked(c, language, text)) };
    case 'not':
      return { kind: 'not', child: checked(node.child, language, text) };
    case 'compare': {
      const { field, key } = fieldOf(node.field, language, text);
      const allowed = operatorsOf(field);
      if (!allowed.includes(node.operator)) {
        throw invalidQuery(`${field.name} does not take "${node.operator}" (it takes ${oneOf(allowed.map((o) => `"${o}"`))})`, {
          position: node.operatorOffset,
          text,
          expected: allowed,
        });
      }
      for (const literal of node.values) {
        if (node.operator === 'matches' || node.operator === 'within') regexOf(literal, text);
        else scalarOf(field, node.operator, literal, 0, text);
      }
      return { kind: 'compare', field: field.name, ...(key !== undefined ? { key } : {}), operator: node.operator, values: node.values, offset: node.offset };
    }
    case 'special': {
      if (node.subject.segments.some((s) => s.quoted)) throw invalidQuery('a special subject is not quoted', { position: node.subject.offset, text });
      const subject = node.subject.segments.map((s) => s.text).join('.').toLowerCase();
      const special = language.specials.find((s) => s.subject === subject && s.verb === node.verb);
      if (!special) {
        const accepted = language.specials.map((s) => `${s.subject} ${s.verb}`);
        throw invalidQuery(`${quoted(`${subject} ${node.verb}`)} is not a condition of ${language.name} (accepted: ${oneOf(accepted.map((a) => `"${a}"`)) || 'none'})`, {
          position: node.offset,
          text,
          expected: accepted,
        });
      }
      const value = node.value.text.toLowerCase();
      const values = Object.keys(special.values);
      if (!Object.hasOwn(special.values, value)) {
        throw invalidQuery(`${quoted(node.value.text)} is not a value of "${subject} ${node.verb}" (accepted: ${oneOf(values)})`, {
          position: node.value.offset,
          text,
          expected: values,
        });
      }
      return { kind: 'special', subject, verb: node.verb, negated: node.negated, value, offset: node.offset };
    }
  }
}

function fieldOf(raw: RawField, language: QueryLanguage, text: string): FieldRef {
  const segments = raw.segments;
  const last = segments[segments.length - 1]!;
  const name = segments.map((s) => s.text).join('.');
  const at = { position: raw.offset, text };
  if (segments.slice(0, -1).some((s) => s.quoted)) throw invalidQuery(`only the key of a parametric field may be quoted (${quoted(name)})`, at);
  if (last.quoted) {
    const prefix = segments.slice(0, -1).map((s) => s.text.toLowerCase()).join('.');
    const field = language.fields.find((f) => f.parametric && f.name === prefix);
    if (!field) throw invalidQuery(`${quoted(prefix)} is not a field with keys (label.<key>, metadata.<key>)`, { ...at, expected: closeFieldNames(language, prefix) });
    if (last.text === '') throw invalidQuery(`the key of ${field.name} is empty`, at);
    return { field, key: last.text };
  }
  const ref = resolveField(language, name);
  if (ref) return ref;
  const keyed = language.fields.find((f) => f.parametric && f.name === name.toLowerCase());
  if (keyed) throw invalidQuery(`${keyed.name} takes a key: ${keyed.name}.<key>`, { ...at, expected: [`${keyed.name}.<key>`] });
  const close = closeFieldNames(language, name);
  throw invalidQuery(`unknown field ${quoted(name)}${close.length ? ` (did you mean ${oneOf(close.map((c) => `"${c}"`))}?)` : ''}`, { ...at, expected: close });
}
