import type { Knex } from 'knex';
import type { Engine } from './engine.js';

/** A WHERE fragment for knex's whereRaw: SQL built from fixed text only, every value bound. */
export interface SqlCondition {
  sql: string;
  bindings: Knex.Value[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `data` is JSON text in every engine (the migration's `data` column). */
const DATA = 'data';

/** What PostgreSQL would receive: the value through JSON.stringify (undefined keys dropped, dates as strings). */
const normalise = (value: unknown): Json => JSON.parse(JSON.stringify(value) ?? 'null') as Json;

const isObject = (value: Json): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON path member, double-quoted so any key works (dots, spaces); SQLite and MySQL both accept \" and \\ inside. */
const member = (key: string): string => `."${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * A JSON path inside `data`: a literal (bound as a parameter), or an SQL expression with its own bindings
 * (json_each's fullkey, when matching array elements on SQLite).
 */
type Path = { literal: string } | { sql: string; bindings: Knex.Value[] };
const pathSql = (path: Path): { sql: string; bindings: Knex.Value[] } => ('literal' in path ? { sql: '?', bindings: [path.literal] } : path);
const childPath = (path: Path, key: string): Path =>
  'literal' in path ? { literal: `${path.literal}${member(key)}` } : { sql: `(${path.sql} || ?)`, bindings: [...path.bindings, member(key)] };

class ConditionList {
  readonly parts: string[] = [];
  readonly bindings: Knex.Value[] = [];
  add(sql: string, ...groups: Knex.Value[][]): void {
    this.parts.push(sql);
    for (const group of groups) this.bindings.push(...group);
  }
  build(): SqlCondition {
    return { sql: this.parts.length ? this.parts.map((p) => `(${p})`).join(' AND ') : '1 = 1', bindings: this.bindings };
  }
}

/**
 * SQLite: the JSON1 functions. Scalars compare by JSON type and value (json_type tells 1 from true and from
 * "1"); objects recurse key by key; an array contains each wanted element somewhere (json_each), and an
 * element recurses through its full path, so nested objects inside arrays work too.
 */
class SqliteContainment {
  /** One alias counter shared by nested EXISTS, so their aliases never shadow each other. */
  constructor(
    private readonly out: ConditionList,
    private readonly aliases: { next: number } = { next: 0 },
  ) {}

  at(path: Path, value: Json): void {
    const { sql, bindings: p } = pathSql(path);
    if (value === null) return this.out.add(`json_type(${DATA}, ${sql}) = 'null'`, p);
    if (typeof value === 'boolean') return this.out.add(`json_type(${DATA}, ${sql}) = '${value ? 'true' : 'false'}'`, p);
    if (typeof value === 'number') return this.out.add(`json_type(${DATA}, ${sql}) IN ('integer', 'real') AND json_extract(${DATA}, ${sql}) = ?`, p, p, [value]);
    if (typeof value === 'string') return this.out.add(`json_type(${DATA}, ${sql}) = 'text' AND json_extract(${DATA}, ${sql}) = ?`, p, p, [value]);
    if (Array.isArray(value)) {
      this.out.add(`json_type(${DATA}, ${sql}) = 'array'`, p);
      for (const element of value) {
        const alias = `je${++this.aliases.next}`;
        const inner = new ConditionList();
        new SqliteContainment(inner, this.aliases).at({ sql: `${alias}.fullkey`, bindings: [] }, element);
        const cond = inner.build();
        this.out.add(`EXISTS (SELECT 1 FROM json_each(${DATA}, ${sql}) AS ${alias} WHERE ${cond.sql})`, p, cond.bindings);
      }
      return;
    }
    this.out.add(`json_type(${DATA}, ${sql}) = 'object'`, p);
    for (const [key, child] of Object.entries(value)) this.at(childPath(path, key), child);
  }
}

/**
 * MySQL/MariaDB: JSON_CONTAINS has PostgreSQL's containment rules for objects and arrays, except that it
 * also finds a scalar inside an array; PostgreSQL's @> does not (below the top level), hence the type guard.
 */
class MysqlContainment {
  constructor(private readonly out: ConditionList) {}

  at(path: string, value: Json): void {
    const type = `JSON_TYPE(JSON_EXTRACT(${DATA}, ?))`;
    if (isObject(value)) {
      this.out.add(`${type} = 'OBJECT'`, [path]);
      for (const [key, child] of Object.entries(value)) this.at(`${path}${member(key)}`, child);
      return;
    }
    if (Array.isArray(value)) return this.out.add(`${type} = 'ARRAY' AND JSON_CONTAINS(${DATA}, ?, ?)`, [path], [JSON.stringify(value), path]);
    this.out.add(`${type} <> 'ARRAY' AND JSON_CONTAINS(${DATA}, ?, ?)`, [path], [JSON.stringify(value), path]);
  }
}

/**
 * `data` contains `value`: PostgreSQL's `data @> value::jsonb` (the PostgreSQL backend's data filter), every
 * key of an object present with a contained value, recursively; arrays contain each wanted element.
 */
export function dataContains(engine: Engine, value: unknown): SqlCondition {
  const json = normalise(value);
  if (engine === 'postgres') return { sql: `CAST(${DATA} AS jsonb) @> CAST(? AS jsonb)`, bindings: [JSON.stringify(json)] };
  const out = new ConditionList();
  if (engine === 'sqlite') new SqliteContainment(out).at({ literal: '$' }, json);
  else new MysqlContainment(out).at('$', json);
  return out.build();
}

/** { a: { b: value } } for the path ['a', 'b']: containment at a path is containment of the wrapped value. */
const wrap = (path: readonly string[], value: unknown): unknown => path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);

/**
 * A `unique` key 'data.<path>' against a value. Strings, numbers and booleans compare as text, like the
 * PostgreSQL backend's `data->>'key' = String(value)` (so 123 matches "123"); the dotted path walks nested
 * objects. null matches a JSON null, and objects/arrays match by containment (PostgreSQL compares those to
 * String(value), "[object Object]", which never matches).
 */
export function dataPathEquals(engine: Engine, path: readonly string[], value: unknown): SqlCondition {
  if (value === null || typeof value === 'object') return dataContains(engine, wrap(path, value));
  const text = String(value);
  if (engine === 'postgres') {
    const pgPath = `{${path.map((k) => `"${k.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
    return { sql: `(CAST(${DATA} AS jsonb) #>> CAST(? AS text[])) = ?`, bindings: [pgPath, text] };
  }
  const jsonPath = `$${path.map(member).join('')}`;
  if (engine === 'sqlite') {
    // json_extract gives 1/0 for true/false; PostgreSQL's ->> gives 'true'/'false', and NULL for a JSON null.
    return {
      sql: `(CASE json_type(${DATA}, ?) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL ELSE CAST(json_extract(${DATA}, ?) AS TEXT) END) = ?`,
      bindings: [jsonPath, jsonPath, text],
    };
  }
  return {
    sql: `JSON_TYPE(JSON_EXTRACT(${DATA}, ?)) <> 'NULL' AND JSON_UNQUOTE(JSON_EXTRACT(${DATA}, ?)) = CAST(? AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_bin`,
    bindings: [jsonPath, jsonPath, text],
  };
}
