import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import { checkRegex, RegexError } from '../query/regex.js';
import { TEMPLATE_LIMITS } from './limits.js';

/**
 * Computation rules and template strings (issue 30 item 5): parsed by grammar.peggy (never `eval`, no
 * JavaScript reaches the rule's data), evaluated over the tree with bounded steps, sizes, time and
 * regular expressions. Pure functions: no database, no I/O.
 *
 * The parser is generated from grammar.peggy when this module loads, as core/query/grammar.ts does: tsx and
 * node run the sources as they are, with no build step and no generated file to keep in step with the grammar
 * (generation takes a few milliseconds, once per process).
 */
const parser = peggy.generate(readFileSync(new URL('./grammar.peggy', import.meta.url), 'utf8'), { output: 'parser', allowedStartRules: ['Rule', 'Template'] });

/** A computed value: none, one string, or a list of strings (a multi-valued entry). */
export type Value = null | string | string[];

export type Mode = 'rule' | 'template';

export type Node =
  | { kind: 'template'; parts: Part[]; offset: number }
  | { kind: 'call'; name: string; args: Node[]; offset: number }
  | { kind: 'lookup'; multi: boolean; path: (string | number)[]; offset: number }
  | { kind: 'list'; items: Node[]; offset: number }
  | { kind: 'string'; value: string; offset: number }
  | { kind: 'number'; value: number; offset: number }
  | { kind: 'null'; offset: number }
  | { kind: 'now'; offset: number };

type Part = { kind: 'text'; text: string; offset: number } | { kind: 'block'; expression: Node; offset: number };

export interface Position {
  offset: number;
  line: number;
  column: number;
}

/** Why a rule was refused: `syntax` (it does not parse), `evaluation` (it fails on this data), `limit` (a bound). */
export type TemplateErrorKind = 'syntax' | 'evaluation' | 'limit';

export class TemplateError extends Error {
  constructor(
    message: string,
    readonly kind: TemplateErrorKind,
    /** Offset in the rule's text (0-based, UTF-16 units). */
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TemplateError';
  }

  /** Line and column (1-based) of the offset in `text`. */
  positionIn(text: string): Position {
    return positionOf(text, this.offset);
  }
}

export function positionOf(text: string, offset: number): Position {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { offset, line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** The tree of a rule (`rule`: one expression) or a template string (`template`: text with blocks). */
export function parseTemplate(text: string, mode: Mode): Node {
  if (text.length > TEMPLATE_LIMITS.maxLength) throw new TemplateError(`a ${mode === 'rule' ? 'computation rule' : 'template string'} is limited to ${TEMPLATE_LIMITS.maxLength} characters`, 'limit', TEMPLATE_LIMITS.maxLength);
  try {
    return parser.parse(text, { startRule: mode === 'rule' ? 'Rule' : 'Template', maxDepth: TEMPLATE_LIMITS.maxDepth }) as Node;
  } catch (err) {
    const e = err as Error & { location?: { start: { offset: number } }; templateDepthOffset?: number };
    if (e.templateDepthOffset !== undefined) throw new TemplateError(e.message, 'limit', e.templateDepthOffset);
    if (e instanceof parser.SyntaxError && e.location) throw new TemplateError(e.message, 'syntax', e.location.start.offset);
    // A stack overflow the depth bound did not prevent is still a refusal, never a 500.
    if (e instanceof RangeError) throw new TemplateError('the rule is nested too deeply', 'limit', 0);
    throw err;
  }
}

export interface EvaluateOptions {
  /** The clock of NOW (epoch ms). */
  now?: () => number;
  /** The datasources `Lookup` reads (loaded before the evaluation, which stays pure): none, Lookup fails. */
  lookups?: LookupTables;
}

/**
 * Datasource records a rule may read with `Lookup("cmdb", key, "field")`, loaded before it is evaluated
 * (core/datasources: the last good fetch of each datasource the rule names, lookupsIn()).
 */
export interface LookupTables {
  /** The datasource's records by key, or why it cannot be read (unknown, never fetched). */
  table(datasource: string): LookupTable | string;
}

export interface LookupTable {
  /** The record whose key field is `key` (undefined: none). */
  find(key: string): Record<string, unknown> | undefined;
}

/** The datasources a rule's Lookup calls name (their first argument, a quoted name): what to load before evaluating it. */
export function lookupsIn(node: Node): string[] {
  const names = new Set<string>();
  const visit = (n: Node | Part): void => {
    if (n.kind === 'call') {
      if (n.name === 'Lookup' && n.args[0]?.kind === 'string') names.add(n.args[0].value);
      n.args.forEach(visit);
    } else if (n.kind === 'list') n.items.forEach(visit);
    else if (n.kind === 'template') n.parts.forEach(visit);
    else if (n.kind === 'block') visit(n.expression);
  };
  visit(node);
  return [...names];
}

/**
 * The data a rule reads: a flat dictionary (`{"csr.subject.cn": "a", "csr.san.dnsname": ["a", "b"]}`, the
 * vendor's form), nested objects (`{csr: {subject: {cn: "a"}}}`), or both. A path is looked up as the
 * longest flat key that prefixes it, then walked through objects and arrays (`[0]` or `.0`; negative
 * indexes count from the end).
 */
export type Dictionary = Record<string, unknown>;

/** Parses and evaluates: the value, or a TemplateError with its offset. */
export function computeTemplate(text: string, mode: Mode, data: Dictionary, options: EvaluateOptions = {}): Value {
  return evaluateTemplate(parseTemplate(text, mode), data, options);
}

export function evaluateTemplate(node: Node, data: Dictionary, options: EvaluateOptions = {}): Value {
  return new Evaluation(data, options.now ?? Date.now, options.lookups).run(node);
}

type Fn = (e: Evaluation, args: Node[], at: number) => Value;

class Evaluation {
  private steps = 0;
  private readonly deadline: number;
  private readonly regexes = new Map<string, { re: RegExp; full: RegExp; subjectLimit: number }>();

  constructor(
    private readonly data: Dictionary,
    private readonly now: () => number,
    readonly lookups: LookupTables | undefined,
  ) {
    this.deadline = Date.now() + TEMPLATE_LIMITS.maxMillis;
  }

  run(node: Node): Value {
    if (node.kind !== 'template') return this.eval(node);
    let out = '';
    for (const part of node.parts) {
      this.step(part.offset);
      if (part.kind === 'text') out += part.text;
      else {
        const value = this.eval(part.expression);
        out += value === null ? '' : typeof value === 'string' ? value : value.join(', ');
      }
      if (out.length > TEMPLATE_LIMITS.maxOutput) throw new TemplateError(`the result exceeds ${TEMPLATE_LIMITS.maxOutput} characters`, 'limit', part.offset);
    }
    return out;
  }

  step(at: number, count = 1): void {
    this.steps += count;
    if (this.steps > TEMPLATE_LIMITS.maxSteps) throw new TemplateError(`the evaluation exceeds ${TEMPLATE_LIMITS.maxSteps} steps`, 'limit', at);
    if (Date.now() > this.deadline) throw new TemplateError(`the evaluation exceeds ${TEMPLATE_LIMITS.maxMillis} ms`, 'limit', at);
  }

  eval(node: Node): Value {
    this.step(node.offset);
    switch (node.kind) {
      case 'string':
        return node.value;
      case 'number':
        return String(node.value);
      case 'null':
        return null;
      case 'now':
        return new Date(this.now()).toISOString();
      case 'list': {
        const items: string[] = [];
        for (const item of node.items) {
          const v = this.eval(item);
          if (v === null) continue;
          if (typeof v === 'string') items.push(v);
          else items.push(...v);
        }
        return this.checked(items, node.offset);
      }
      case 'lookup':
        return this.lookup(node);
      case 'call': {
        const fn = FUNCTIONS[node.name];
        if (!fn) throw new TemplateError(`unknown function ${node.name} (functions: ${Object.keys(FUNCTIONS).join(', ')})`, 'evaluation', node.offset);
        return this.checked(fn(this, node.args, node.offset), node.offset);
      }
      case 'template':
        return this.run(node);
    }
  }

  /** A value within the size bounds. */
  checked(value: Value, at: number): Value {
    if (value === null) return null;
    if (typeof value === 'string') {
      if (value.length > TEMPLATE_LIMITS.maxOutput) throw new TemplateError(`a value exceeds ${TEMPLATE_LIMITS.maxOutput} characters`, 'limit', at);
      return value;
    }
    if (value.length > TEMPLATE_LIMITS.maxItems) throw new TemplateError(`a list exceeds ${TEMPLATE_LIMITS.maxItems} items`, 'limit', at);
    let size = 0;
    for (const item of value) size += item.length;
    if (size > TEMPLATE_LIMITS.maxOutput) throw new TemplateError(`a list exceeds ${TEMPLATE_LIMITS.maxOutput} characters`, 'limit', at);
    this.step(at, value.length);
    return value;
  }

  private lookup(node: Extract<Node, { kind: 'lookup' }>): Value {
    const raw = resolvePath(this.data, node.path);
    const name = node.path.join('.');
    const scalar = (v: unknown): string | null => {
      if (v === null || v === undefined) return null;
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw new TemplateError(`${name} is not a value (an object or a nested list)`, 'evaluation', node.offset);
    };
    if (Array.isArray(raw)) {
      if (raw.length > TEMPLATE_LIMITS.maxItems) throw new TemplateError(`${name} has more than ${TEMPLATE_LIMITS.maxItems} values`, 'limit', node.offset);
      const items = raw.map(scalar).filter((v): v is string => v !== null);
      if (!node.multi) return items[0] ?? null;
      return items.length === 0 ? null : this.checked(items, node.offset);
    }
    const one = scalar(raw);
    if (one === null) return null;
    return this.checked(node.multi ? [one] : one, node.offset);
  }

  // ---- Helpers for the functions.

  single(node: Node, fn: string): string | null {
    const v = this.eval(node);
    if (v === null || typeof v === 'string') return v;
    if (v.length <= 1) return v[0] ?? null;
    throw new TemplateError(`${fn} takes one value here, not a list of ${v.length}`, 'evaluation', node.offset);
  }

  list(node: Node): string[] {
    const v = this.eval(node);
    return v === null ? [] : typeof v === 'string' ? [v] : v;
  }

  integer(node: Node, fn: string): number {
    const v = this.single(node, fn);
    const n = v === null ? NaN : Number(v);
    if (!Number.isInteger(n)) throw new TemplateError(`${fn}: expected an integer, got ${v === null ? 'NULL' : JSON.stringify(v)}`, 'evaluation', node.offset);
    return n;
  }

  text(node: Node, fn: string): string {
    const v = this.single(node, fn);
    if (v === null) throw new TemplateError(`${fn}: this argument may not be NULL`, 'evaluation', node.offset);
    return v;
  }

  /** A checked regular expression (core/query/regex.ts: no backreferences, no nested or ambiguous repetition), compiled once per evaluation. */
  regex(node: Node, fn: string): { re: RegExp; full: RegExp; subjectLimit: number } {
    const source = this.text(node, fn);
    const cached = this.regexes.get(source);
    if (cached) return cached;
    if (source.length > TEMPLATE_LIMITS.maxRegexLength) throw new TemplateError(`${fn}: regular expressions are limited to ${TEMPLATE_LIMITS.maxRegexLength} characters`, 'limit', node.offset);
    let pattern: string;
    try {
      pattern = checkRegex(source).pattern;
    } catch (err) {
      if (err instanceof RegexError) throw new TemplateError(`${fn}: ${err.message} (at ${err.index} in the pattern)`, 'evaluation', node.offset);
      throw err;
    }
    const unbounded = unboundedRepetitions(source);
    if (unbounded > TEMPLATE_LIMITS.maxRegexUnbounded) throw new TemplateError(`${fn}: at most ${TEMPLATE_LIMITS.maxRegexUnbounded} unbounded repetitions (*, +, {n,}, {n,m} with m > 32) in a regular expression`, 'limit', node.offset);
    const compiled = {
      re: new RegExp(pattern, 'u'),
      full: new RegExp(`^(?:${pattern})$`, 'u'),
      subjectLimit: unbounded >= 2 ? TEMPLATE_LIMITS.maxRegexSubjectTwo : TEMPLATE_LIMITS.maxRegexSubject,
    };
    this.regexes.set(source, compiled);
    return compiled;
  }

  subject(value: string, limit: number, fn: string, at: number): string {
    if (value.length > limit) throw new TemplateError(`${fn}: this regular expression applies to values of at most ${limit} characters (got ${value.length})`, 'limit', at);
    return value;
  }
}

/** The value at a path: the longest flat key that prefixes it, then objects and arrays. Own properties only. */
export function resolvePath(data: Dictionary, path: readonly (string | number)[]): unknown {
  for (let k = path.length; k >= 1; k--) {
    const key = path.slice(0, k).join('.');
    if (!Object.hasOwn(data, key)) continue;
    let current: unknown = data[key];
    for (const segment of path.slice(k)) {
      if (Array.isArray(current)) {
        const index = Number(segment);
        if (!Number.isInteger(index)) return undefined;
        current = current.at(index);
      } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, String(segment))) {
        current = (current as Record<string, unknown>)[String(segment)];
      } else return undefined;
    }
    return current;
  }
  return undefined;
}

/** Unbounded repetitions of a pattern: `*`, `+`, `{n,}` and `{n,m}` with m > 32, outside classes and escapes. */
export function unboundedRepetitions(pattern: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '*' || c === '+') count++;
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (m && m[2] !== undefined && (m[3] === '' || Number(m[3]) > 32)) count++;
    }
  }
  return count;
}

const arity = (name: string, args: Node[], at: number, min: number, max = min): void => {
  if (args.length < min || args.length > max) {
    const expected = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw new TemplateError(`${name} takes ${expected} argument${expected === '1' ? '' : 's'}, not ${args.length}`, 'evaluation', at);
  }
};

/** Applies `fn` to a value or to each item of a list (items answering null are dropped). */
const each = (value: Value, fn: (s: string) => string | null): Value => {
  if (value === null) return null;
  if (typeof value === 'string') return fn(value);
  const out = value.map(fn).filter((v): v is string => v !== null);
  return out;
};

const stringFn =
  (name: string, fn: (s: string) => string | null): Fn =>
  (e, args, at) => {
    arity(name, args, at, 1);
    return each(e.eval(args[0]!), fn);
  };

const afterFirst = (s: string, sep: string): string | null => {
  const i = s.indexOf(sep);
  return i < 0 ? null : s.slice(i + sep.length);
};

const beforeFirst = (s: string, sep: string): string | null => {
  const i = s.indexOf(sep);
  return i < 0 ? null : s.slice(0, i);
};

/** 1-based `start`, inclusive 1-based `end` (the vendor's documented examples: Substr("STRING", 2) → "TRING"). */
const oneBased = (length: number, start: number, end?: number): [number, number] => {
  const from = start < 0 ? Math.max(0, length + start) : Math.max(0, start - 1);
  const to = end === undefined ? length : end < 0 ? length + end + 1 : Math.min(length, end);
  return [from, Math.max(from, to)];
};

const orElse: Fn = (e, args, at) => {
  arity('OrElse', args, at, 1, Infinity);
  for (const arg of args) {
    const v = e.eval(arg);
    if (v !== null && !(Array.isArray(v) && v.length === 0)) return v;
  }
  return null;
};

const substr: Fn = (e, args, at) => {
  arity('Substr', args, at, 2, 3);
  const value = e.eval(args[0]!);
  const start = e.integer(args[1]!, 'Substr');
  const end = args[2] ? e.integer(args[2], 'Substr') : undefined;
  return each(value, (s) => {
    const [from, to] = oneBased(s.length, start, end);
    return s.slice(from, to);
  });
};

const split: Fn = (e, args, at) => {
  arity('Split', args, at, 2, 3);
  const value = e.single(args[0]!, 'Split');
  const sep = e.text(args[1]!, 'Split');
  if (sep === '') throw new TemplateError('Split: the separator may not be empty', 'evaluation', args[1]!.offset);
  if (value === null) return null;
  const parts = value.split(sep);
  e.step(at, parts.length);
  if (!args[2]) return e.checked(parts, at);
  return parts.at(e.integer(args[2], 'Split')) ?? null;
};

/**
 * `Lookup("cmdb", {{csr.subject.cn}}, "owner")`: the `owner` field (a dotted path inside the record) of the
 * record of datasource `cmdb` whose key field is the key; a list of keys gives the list of their values. The
 * datasource is a quoted name, so what a rule reads is known before it runs (lookupsIn). No record: NULL.
 */
const lookup: Fn = (e, args, at) => {
  arity('Lookup', args, at, 3);
  const source = args[0]!;
  if (source.kind !== 'string') throw new TemplateError('Lookup: the datasource must be a quoted name ("cmdb")', 'evaluation', source.offset);
  if (!e.lookups) throw new TemplateError('Lookup: no datasource can be read here', 'evaluation', at);
  const table = e.lookups.table(source.value);
  if (typeof table === 'string') throw new TemplateError(`Lookup: ${table}`, 'evaluation', source.offset);
  const keyValue = e.eval(args[1]!);
  const keys = keyValue === null ? [] : typeof keyValue === 'string' ? [keyValue] : keyValue;
  const field = e.text(args[2]!, 'Lookup');
  const path = field.split('.');
  const out: string[] = [];
  for (const key of keys) {
    e.step(at);
    const record = table.find(key);
    const value = record === undefined ? undefined : resolvePath(record, path);
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue;
      if (typeof item === 'object') throw new TemplateError(`Lookup: ${field} of "${key}" is not a value (an object)`, 'evaluation', args[2]!.offset);
      out.push(String(item));
    }
  }
  if (out.length === 0) return null;
  return e.checked(Array.isArray(keyValue) || out.length > 1 ? out : out[0]!, at);
};

/** The functions of computation rules: the vendor's names (case-sensitive), plus `Default` and `Substring` for OrElse and Substr. */
const FUNCTIONS: Record<string, Fn> = {
  Upper: stringFn('Upper', (s) => s.toUpperCase()),
  Lower: stringFn('Lower', (s) => s.toLowerCase()),
  Trim: stringFn('Trim', (s) => s.trim()),
  Substr: substr,
  Substring: substr,
  Concat: (e, args, at) => {
    arity('Concat', args, at, 1, Infinity);
    const values = args.map((a) => e.eval(a));
    if (values.some((v) => v === null)) return null;
    if (values.every((v) => typeof v === 'string')) return e.checked((values as string[]).join(''), at);
    return e.checked(values.flatMap((v) => (typeof v === 'string' ? [v] : (v as string[]))), at);
  },
  Extract: (e, args, at) => {
    arity('Extract', args, at, 2, 3);
    const value = e.eval(args[0]!);
    const { re, subjectLimit } = e.regex(args[1]!, 'Extract');
    const group = args[2] ? e.integer(args[2], 'Extract') : 0;
    return each(value, (s) => re.exec(e.subject(s, subjectLimit, 'Extract', at))?.[group] ?? null);
  },
  Replace: (e, args, at) => {
    arity('Replace', args, at, 3);
    const value = e.eval(args[0]!);
    const { re, subjectLimit } = e.regex(args[1]!, 'Replace');
    const replacement = e.single(args[2]!, 'Replace') ?? '';
    const global = new RegExp(re.source, 'gu');
    return each(value, (s) => e.subject(s, subjectLimit, 'Replace', at).replace(global, replacement));
  },
  OrElse: orElse,
  Default: orElse,
  Match: (e, args, at) => {
    arity('Match', args, at, 2);
    const value = e.single(args[0]!, 'Match');
    const { full, subjectLimit } = e.regex(args[1]!, 'Match');
    return value !== null && full.test(e.subject(value, subjectLimit, 'Match', at)) ? value : null;
  },
  Get: (e, args, at) => {
    arity('Get', args, at, 2);
    return e.list(args[0]!).at(e.integer(args[1]!, 'Get')) ?? null;
  },
  First: (e, args, at) => {
    arity('First', args, at, 1);
    return e.list(args[0]!)[0] ?? null;
  },
  Last: (e, args, at) => {
    arity('Last', args, at, 1);
    return e.list(args[0]!).at(-1) ?? null;
  },
  Join: (e, args, at) => {
    arity('Join', args, at, 1, 2);
    const v = e.eval(args[0]!);
    if (v === null) return null;
    return (typeof v === 'string' ? [v] : v).join(args[1] ? (e.single(args[1], 'Join') ?? '') : ',');
  },
  Filter: (e, args, at) => {
    arity('Filter', args, at, 2);
    const items = e.list(args[0]!);
    const { full, subjectLimit } = e.regex(args[1]!, 'Filter');
    e.step(at, items.length);
    return items.filter((s) => full.test(e.subject(s, subjectLimit, 'Filter', at)));
  },
  Slice: (e, args, at) => {
    arity('Slice', args, at, 2, 3);
    const items = e.list(args[0]!);
    const [from, to] = oneBased(items.length, e.integer(args[1]!, 'Slice'), args[2] ? e.integer(args[2], 'Slice') : undefined);
    return items.slice(from, to);
  },
  Sort: (e, args, at) => {
    arity('Sort', args, at, 1);
    const items = [...e.list(args[0]!)];
    e.step(at, items.length);
    return items.sort();
  },
  Unique: (e, args, at) => {
    arity('Unique', args, at, 1);
    return [...new Set(e.list(args[0]!))];
  },
  Split: split,
  ShortenDNS: stringFn('ShortenDNS', (s) => s.split('.')[0] ?? s),
  DomainDNS: stringFn('DomainDNS', (s) => afterFirst(s, '.')),
  EmailUser: stringFn('EmailUser', (s) => (s.includes('@') ? s.slice(0, s.lastIndexOf('@')) : null)),
  EmailDomain: stringFn('EmailDomain', (s) => (s.includes('@') ? s.slice(s.lastIndexOf('@') + 1) : null)),
  SamAccountNameUser: stringFn('SamAccountNameUser', (s) => afterFirst(s, '\\')),
  SamAccountNameDomain: stringFn('SamAccountNameDomain', (s) => beforeFirst(s, '\\')),
  Lookup: lookup,
};

/** The function names a rule may call. */
export const TEMPLATE_FUNCTIONS: readonly string[] = Object.keys(FUNCTIONS);
