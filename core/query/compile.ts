import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { invalidQuery, oneOf } from './failure.js';
import { operatorsOf, resolveField, type FieldRef } from './fields.js';
import { MAX_DEPTH, MAX_PARAMETERS } from './limits.js';
import type { CheckedRegex } from './regex.js';
import { regexOf, scalarOf, type Scalar } from './values.js';
import type { CompileContext, FieldDefinition, FieldStorage, Operator, QueryLanguage, QueryNode } from './types.js';

/**
 * Query tree → WHERE clauses on a knex builder over `language.table` (aliased `ctx.table`).
 *
 * - Values are always bound parameters; identifiers come only from the field table (knex quotes them).
 * - Two-valued logic: `not` is pushed down to the comparisons (De Morgan), and each comparison has a
 *   negative form that counts NULL as "not matching" (`col IS NULL OR NOT (col = ?)`, `NOT EXISTS`),
 *   so a row is in exactly one of `x` and `not x` whatever its NULLs.
 * - Everything that can fail (fields, values, dates, regexes, size) is decided here, eagerly: knex only
 *   runs the where-callbacks when it renders SQL (once per clone), and they must not throw or count.
 * - Long `and`/`or` lists are grouped by GROUP_SIZE, so SQLite's expression depth limit (1000) and the
 *   parameter limit (MAX_PARAMETERS) bound a query instead of failing it in the database.
 */
export function applyQuery(qb: Knex.QueryBuilder, ast: QueryNode, language: QueryLanguage, ctx: CompileContext): Knex.QueryBuilder {
  const plan = new Planner(language, ctx).plan(ast, false);
  if (plan.kind === 'false') qb.whereRaw('1 = 0');
  else if (plan.kind !== 'true') add(qb, plan, 'and');
  return qb;
}

/** One equality on a `distinct` side field: the query an index of that side table answers in id order. */
export interface SideEquality {
  storage: Extract<FieldStorage, { kind: 'side' }>;
  /** The key of a parametric field (`label.env` → `env`). */
  key: string | undefined;
  value: string;
}

/**
 * `ast` when it is exactly one positive equality (`label.env equals "prod"`, `metadata.x in ["a"]`) on a
 * side field declared `distinct`, its value checked as applyQuery would; otherwise undefined.
 */
export function sideEqualityOf(ast: QueryNode, language: QueryLanguage, ctx: CompileContext): SideEquality | undefined {
  if (ast.kind !== 'compare' || (ast.operator !== 'equals' && ast.operator !== 'in')) return undefined;
  const planner = new Planner(language, ctx);
  const { field, key } = planner.fieldRefOf(ast);
  const storage = field.storage;
  if (storage.kind !== 'side' || storage.distinct !== true || storage.numeric === true || field.type !== 'string') return undefined;
  if (storage.keyColumn && key === undefined) return undefined;
  const values = [...new Set(ast.values.map((l) => scalarOf(field, ast.operator, l, ctx.now)))];
  if (values.length !== 1 || typeof values[0] !== 'string') return undefined;
  return { storage, key, value: values[0] };
}

/**
 * When `ast` is one positive comparison on a side field, the side ids it matches in `ctx.tenant` (the
 * uncorrelated list applyQuery's `id IN (…)` reads): a caller may count a bounded prefix of it to learn
 * whether the matches are dense. Undefined for any other query.
 */
export function sideMatchesOf(ast: QueryNode, language: QueryLanguage, ctx: CompileContext & { tenant: string }): Knex.QueryBuilder | undefined {
  if (ast.kind !== 'compare' || NEGATIVE[ast.operator] !== undefined) return undefined;
  return new Planner(language, ctx).sideMatches(ast);
}

/** Adds conditions to a builder (AND-ed with what it has). Pure: may run once per rendering. */
type Emit = (b: Knex.QueryBuilder) => void;

type Plan = { kind: 'true' } | { kind: 'false' } | { kind: 'atom'; emit: Emit } | { kind: 'group'; conj: boolean; items: Plan[] };

const GROUP_SIZE = 50;
const NEGATIVE: Partial<Record<Operator, Operator>> = { 'not equals': 'equals', 'not in': 'in', 'not exists': 'exists' };

function add(b: Knex.QueryBuilder, plan: Plan, join: 'and' | 'or'): void {
  const where = (fn: Emit) => (join === 'and' ? b.where(fn) : b.orWhere(fn));
  if (plan.kind === 'atom') where(plan.emit);
  else if (plan.kind === 'group') where((inner) => plan.items.forEach((item) => add(inner, item, plan.conj ? 'and' : 'or')));
  // 'true' / 'false' never reach here: group() folds them away.
}

/** `and` (conj) / `or` of plans, constants folded, long lists nested by GROUP_SIZE. */
function group(conj: boolean, plans: Plan[]): Plan {
  const items: Plan[] = [];
  for (const p of plans) {
    if (p.kind === (conj ? 'false' : 'true')) return p;
    if (p.kind === (conj ? 'true' : 'false')) continue;
    items.push(p);
  }
  if (items.length === 0) return { kind: conj ? 'true' : 'false' };
  if (items.length === 1) return items[0]!;
  if (items.length <= GROUP_SIZE) return { kind: 'group', conj, items };
  const chunks: Plan[] = [];
  for (let i = 0; i < items.length; i += GROUP_SIZE) chunks.push(group(conj, items.slice(i, i + GROUP_SIZE)));
  return group(conj, chunks);
}

/** OR of conditions, nested like group(). */
function anyOf(emits: Emit[]): Emit {
  const plan = group(
    false,
    emits.map((emit) => ({ kind: 'atom', emit })),
  );
  return (b) => {
    if (plan.kind === 'atom') plan.emit(b);
    else if (plan.kind === 'group') add(b, plan, 'and');
  };
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** `contains` / prefix patterns for LIKE: `!` escapes `%`, `_` and itself. `!`, not `\`: a backslash
 * needs `'\\'` in MySQL string literals but `'\'` in SQLite's; `!` is the same character in both. */
const escapeLike = (text: string): string => text.replace(/[!%_]/g, (c) => `!${c}`);
const LIKE = "?? LIKE ? ESCAPE '!'";

/** By code point, as the inventory stores `value_rev` (core/inventory/record.ts). */
const reversed = (text: string): string => Array.from(text).reverse().join('');

/** The smallest string above every string starting with `prefix` (code-point order), if any. */
function successor(prefix: string): string | undefined {
  const points = Array.from(prefix);
  const cp = points.pop()!.codePointAt(0)!;
  if (cp >= 0x10ffff) return undefined;
  return points.join('') + String.fromCodePoint(cp === 0xd7ff ? 0xe000 : cp + 1);
}

/**
 * Values starting with `prefix`: a range an index can read (`>= prefix AND < successor`), plus the LIKE
 * that makes it exact on MariaDB, whose PAD SPACE collations compare `'a'` and `'a '` equal.
 */
function prefixOf(ref: string, prefix: string): Emit {
  const upper = successor(prefix);
  return (b) => {
    b.where(ref, '>=', prefix);
    if (upper !== undefined) b.where(ref, '<', upper);
    b.whereRaw(LIKE, [ref, `${escapeLike(prefix)}%`]);
  };
}

class Planner {
  private cost = 0;
  private aliases = 0;
  private readonly mysql: boolean;

  constructor(
    private readonly language: QueryLanguage,
    private readonly ctx: CompileContext,
  ) {
    this.mysql = isMysql(ctx.knex);
  }

  plan(node: QueryNode, negated: boolean, depth = 0): Plan {
    // parseQuery bounds nesting already; this bounds trees built by hand (2 levels per parenthesis).
    if (depth > 2 * MAX_DEPTH + 2) throw invalidQuery(`more than ${MAX_DEPTH} nested levels`);
    switch (node.kind) {
      case 'all':
        return { kind: negated ? 'false' : 'true' };
      case 'and':
      case 'or':
        // De Morgan: not (a and b) = not a or not b.
        return group((node.kind === 'and') !== negated, node.children.map((c) => this.plan(c, negated, depth + 1)));
      case 'not':
        return this.plan(node.child, !negated, depth + 1);
      case 'compare':
        return { kind: 'atom', emit: this.compare(node, negated) };
      case 'special':
        return { kind: 'atom', emit: this.special(node, negated) };
      default:
        throw invalidQuery(`unknown node ${JSON.stringify((node as { kind?: unknown }).kind)}`);
    }
  }

  private charge(parameters: number, position: number): void {
    this.cost += Math.max(1, parameters);
    if (this.cost > MAX_PARAMETERS) throw invalidQuery(`query too large: more than ${MAX_PARAMETERS} values and conditions`, { position });
  }

  private alias(): string {
    this.aliases += 1;
    return `cwq${this.aliases}`;
  }

  private special(node: Extract<QueryNode, { kind: 'special' }>, negated: boolean): Emit {
    const special = this.language.specials.find((s) => s.subject === node.subject && s.verb === node.verb);
    const build = special && Object.hasOwn(special.values, node.value) ? special.values[node.value] : undefined;
    if (!special || !build) throw invalidQuery(`unknown condition "${node.subject} ${node.verb} ${node.value}"`, { position: node.offset });
    this.charge(2, node.offset);
    const ctx = this.ctx;
    if (node.negated === negated) return (b) => build(b, ctx);
    // NOT (P) drops the rows where P is NULL (a nullable flag such as discovered_trusted); P is a
    // builder we cannot rewrite, so test it in a one-row subquery: EXISTS is never NULL.
    const alias = this.alias();
    return (b) =>
      void b.whereNotExists(
        ctx.knex
          .select(ctx.knex.raw('1'))
          .from(ctx.knex.raw('(select 1 as ??) as ??', ['one', alias]))
          .where((inner) => build(inner, ctx)),
      );
  }

  /** The field a comparison names, its operator and value count checked (HQL-001 otherwise). */
  fieldRefOf(node: Extract<QueryNode, { kind: 'compare' }>): FieldRef {
    return this.fieldOf(node);
  }

  private fieldOf(node: Extract<QueryNode, { kind: 'compare' }>): FieldRef {
    let ref: FieldRef | undefined;
    if (node.key !== undefined) {
      const field = this.language.fields.find((f) => f.parametric && f.name === node.field);
      if (field && node.key !== '') ref = { field, key: node.key };
    } else {
      ref = resolveField(this.language, node.field);
    }
    if (!ref) throw invalidQuery(`unknown field ${JSON.stringify(node.field)}`, { position: node.offset });
    if (!operatorsOf(ref.field).includes(node.operator)) throw invalidQuery(`${ref.field.name} does not take "${node.operator}"`, { position: node.offset });
    const listed = node.operator === 'in' || node.operator === 'not in' || node.operator === 'within';
    const expected = node.operator === 'exists' || node.operator === 'not exists' ? 0 : 1;
    if (listed ? node.values.length === 0 : node.values.length !== expected) {
      throw invalidQuery(`"${node.operator}" takes ${listed ? 'a list' : expected ? 'one value' : 'no value'}`, { position: node.offset });
    }
    return ref;
  }

  /** See sideMatchesOf: a positive comparison whose field lives in a side table. */
  sideMatches(node: Extract<QueryNode, { kind: 'compare' }>): Knex.QueryBuilder | undefined {
    const { field, key } = this.fieldOf(node);
    if (field.storage.kind !== 'side' || this.ctx.tenant === undefined) return undefined;
    const { values, regexes } = this.valuesOf(node, field, node.operator);
    // Only what the side index reads as ranges (see regex()): counting any other condition's matches
    // would scan the side table once more.
    const ranged =
      node.operator === 'equals' || node.operator === 'in'
        ? !field.storage.numeric
        : (node.operator === 'matches' || node.operator === 'within') && field.storage.reversedColumn !== undefined && regexes.every((r) => r.literal && (r.literal.start || r.literal.end));
    if (!ranged) return undefined;
    return this.sideParts(node, field, field.storage, key, node.operator, values, regexes).matching();
  }

  private valuesOf(node: Extract<QueryNode, { kind: 'compare' }>, field: FieldDefinition, operator: Operator): { values: Scalar[]; regexes: CheckedRegex[] } {
    const regexes = operator === 'matches' || operator === 'within' ? node.values.map((l) => regexOf(l)) : [];
    const values = regexes.length ? [] : [...new Set(node.values.map((l) => scalarOf(field, operator, l, this.ctx.now)))];
    return { values, regexes };
  }

  private compare(node: Extract<QueryNode, { kind: 'compare' }>, negated: boolean): Emit {
    const { field, key } = this.fieldOf(node);
    const operator = NEGATIVE[node.operator] ?? node.operator;
    const negative = negated !== (operator !== node.operator);
    const { values, regexes } = this.valuesOf(node, field, operator);
    const storage = field.storage;
    if (storage.kind === 'column' || storage.kind === 'json') {
      // knex takes a Raw wherever it takes an identifier (`??`, where, whereNull): the JSON member is used as one.
      const col = storage.kind === 'column' ? `${this.ctx.table}.${storage.column}` : (this.jsonMember(storage.column, key, node) as unknown as string);
      const hashed = storage.kind === 'column' && storage.hashKey && field.type === 'string' ? `${this.ctx.table}.${storage.hashKey}` : undefined;
      this.charge(regexes.length + values.length * (hashed ? 2 : 1), node.offset);
      if (!negative) return this.condition(field, operator, col, values, regexes, { hashed });
      if (operator === 'exists') return field.type === 'string' ? (b) => void b.whereNull(col).orWhere(col, '') : (b) => void b.whereNull(col);
      const positive = this.condition(field, operator, col, values, regexes, { hashed });
      // With a hash key (DNs), equality is decided by the hash: the DN column itself may compare
      // case-insensitively on MySQL (TEXT, database collation). A NULL either way is "not equal".
      if (hashed) return (b) => void b.whereNull(col).orWhereNull(hashed).orWhereNot(positive);
      return (b) => void b.whereNull(col).orWhereNot(positive);
    }
    return this.side(node, field, storage, key, operator, negative, values, regexes);
  }

  /**
   * The text of member `key` of the JSON object in `column`, as a SQL expression (the path bound as a
   * parameter). Keys are plain names, dotted for nested members: anything else is refused, so the path
   * never carries quotes or wildcards.
   */
  private jsonMember(column: string, key: string | undefined, node: Extract<QueryNode, { kind: 'compare' }>): Knex.Raw {
    const segments = (key ?? '').split('.');
    if (segments.some((s) => !/^[A-Za-z0-9_-]{1,64}$/.test(s))) {
      throw invalidQuery(`${node.field}.<key>: a key is letters, digits, _ and -, dotted for nested members`, { position: node.offset });
    }
    const path = `$${segments.map((s) => `."${s}"`).join('')}`;
    const ref = `${this.ctx.table}.${column}`;
    // The member as text on both engines: numbers and booleans as JSON writes them (`4`, `true`), JSON null
    // as SQL NULL (MariaDB would unquote it to "null", SQLite would answer numbers as numbers).
    return this.mysql
      ? this.ctx.knex.raw("CASE JSON_TYPE(JSON_EXTRACT(??, ?)) WHEN 'NULL' THEN NULL ELSE JSON_UNQUOTE(JSON_EXTRACT(??, ?)) END", [ref, path, ref, path])
      : this.ctx.knex.raw("CASE json_type(??, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(json_extract(??, ?) AS TEXT) END", [ref, path, ref, path]);
  }

  /** EXISTS (a side row of this main row [with this key] whose value satisfies the condition). */
  private side(
    node: Extract<QueryNode, { kind: 'compare' }>,
    field: FieldDefinition,
    storage: Extract<FieldStorage, { kind: 'side' }>,
    key: string | undefined,
    operator: Operator,
    negative: boolean,
    values: Scalar[],
    regexes: CheckedRegex[],
  ): Emit {
    const { correlated, matching } = this.sideParts(node, field, storage, key, operator, values, regexes);
    if (negative) return (b) => void b.whereNotExists(correlated());
    if (this.ctx.tenant === undefined) return (b) => void b.whereExists(correlated());
    // A scalar subquery, not EXISTS: MariaDB turns a correlated EXISTS into a semi-join and may
    // materialise the whole side range before the first row; this stays a per-row index probe.
    if (this.ctx.walk) return (b) => void b.whereRaw('(?) IS NOT NULL', [correlated().limit(1)]);
    // Positive and the tenant known: `id IN (uncorrelated subquery)`, which SQLite runs once as a list
    // read from the side table's (tenant, value…) index instead of probing it once per main row.
    return (b) => void b.whereIn(`${this.ctx.table}.${this.language.idColumn}`, matching());
  }

  /** The side condition as a subquery correlated with the main row, and as the tenant's list of matching ids. */
  private sideParts(
    node: Extract<QueryNode, { kind: 'compare' }>,
    field: FieldDefinition,
    storage: Extract<FieldStorage, { kind: 'side' }>,
    key: string | undefined,
    operator: Operator,
    values: Scalar[],
    regexes: CheckedRegex[],
  ): { correlated: () => Knex.QueryBuilder; matching: () => Knex.QueryBuilder } {
    if (storage.keyColumn && key === undefined) throw invalidQuery(`${field.name} takes a key: ${field.name}.<key>`, { position: node.offset });
    const fixed = Object.entries(storage.fixed ?? {});
    this.charge(regexes.length * 3 + values.length + fixed.length + (storage.keyColumn ? 1 : 0), node.offset);
    const { knex, table } = this.ctx;
    const alias = this.alias();
    const at = (column: string) => `${alias}.${column}`;
    const condition =
      operator === 'exists'
        ? undefined
        : this.condition(field, operator, at(storage.valueColumn), values, regexes, {
            numeric: storage.numeric === true || field.type === 'number' || field.type === 'date',
            insensitive: storage.lowercase === true,
            reversed: storage.reversedColumn ? at(storage.reversedColumn) : undefined,
          });
    const narrow = (q: Knex.QueryBuilder): Knex.QueryBuilder => {
      if (storage.keyColumn) q.where(at(storage.keyColumn), key!);
      for (const [column, value] of fixed) q.where(at(column), value);
      if (condition) condition(q);
      return q;
    };
    const correlated = (): Knex.QueryBuilder =>
      narrow(
        knex
          .select(knex.raw('1'))
          .from(`${storage.table} as ${alias}`)
          .whereRaw('?? = ??', [at(storage.foreignKey), `${table}.${this.language.idColumn}`])
          .whereRaw('?? = ??', [at(storage.tenantColumn ?? 'tenant'), `${table}.${this.language.tenantColumn}`]),
      );
    const tenant = this.ctx.tenant;
    const matching = (): Knex.QueryBuilder =>
      narrow(
        knex
          .select(at(storage.foreignKey))
          .from(`${storage.table} as ${alias}`)
          .where(at(storage.tenantColumn ?? 'tenant'), tenant ?? null),
      );
    return { correlated, matching };
  }

  /** The positive condition of `operator` on `ref` (a main-table column or a side-table value). */
  private condition(
    field: FieldDefinition,
    operator: Operator,
    ref: string,
    values: Scalar[],
    regexes: CheckedRegex[],
    options: { hashed?: string; numeric?: boolean; insensitive?: boolean; reversed?: string },
  ): Emit {
    const bound = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    // Side values are text: numbers compare as numbers (`9` < `10`), not as strings.
    const cast = options.numeric ? (this.mysql ? 'CAST(?? AS DOUBLE)' : 'CAST(?? AS REAL)') : '??';
    const placeholders = bound.map(() => '?').join(', ');
    switch (operator) {
      case 'equals':
      case 'in': {
        // `hash = sha256(v) AND col = v`: the indexed hash finds the row, the column makes it exact.
        if (options.hashed) {
          const hashed = options.hashed;
          const hashes = [...new Set(bound.map((v) => sha256(String(v))))];
          if (bound.length === 1) return (b) => void b.where(hashed, hashes[0]!).where(ref, bound[0]!);
          return (b) => void b.whereIn(hashed, hashes).whereIn(ref, bound);
        }
        if (bound.length === 1) return (b) => void b.whereRaw(`${cast} = ?`, [ref, bound[0]!]);
        return (b) => void b.whereRaw(`${cast} IN (${placeholders})`, [ref, ...bound]);
      }
      case 'before':
      case 'after': {
        const op = operator === 'before' ? '<' : '>';
        return (b) => void b.whereRaw(`${cast} ${op} ?`, [ref, bound[0]!]);
      }
      case 'contains': {
        const lower = options.insensitive ? '??' : 'LOWER(??)';
        return (b) => void b.whereRaw(`${lower} LIKE ? ESCAPE '!'`, [ref, `%${escapeLike(String(bound[0]))}%`]);
      }
      case 'matches':
      case 'within':
        return anyOf(regexes.map((r) => this.regex(r, ref, options)));
      case 'exists':
        return field.type === 'string' ? (b) => void b.whereNotNull(ref).where(ref, '<>', '') : (b) => void b.whereNotNull(ref);
      default:
        throw invalidQuery(`"${operator}" cannot be compiled (operators: ${oneOf(operatorsOf(field))})`);
    }
  }

  /**
   * A regex on `ref`. On a side value with a reversed column (SANs), a pure literal needs no regex:
   * `^a\.b$` is equality, `^www\.` a prefix range on the value, `\.example\.com$` a prefix range on the
   * reversed value — index range reads instead of a scan.
   */
  private regex(regex: CheckedRegex, ref: string, options: { insensitive?: boolean; reversed?: string }): Emit {
    const literal = regex.literal;
    if (options.reversed && literal) {
      const text = options.insensitive ? literal.text.toLowerCase() : literal.text;
      if (literal.start && literal.end) return (b) => void b.where(ref, text);
      if (literal.start) return prefixOf(ref, text);
      if (literal.end) return prefixOf(options.reversed, reversed(text));
    }
    // Inline flags: MariaDB's PCRE2 reads them; the SQLite regexp() function maps them to JS flags.
    // `(?-i)` also keeps MariaDB case-sensitive on case-insensitive collations.
    const pattern = `${options.insensitive ? '(?i)' : '(?-i)'}${regex.pattern}`;
    return (b) => void b.whereRaw('?? REGEXP ?', [ref, pattern]);
  }
}
