import type { Knex } from 'knex';
import { isMysql } from './dialect.js';

type Db = Knex | Knex.Transaction;
export type Row = Record<string, unknown>;

interface SqliteStatement {
  run(bindings: unknown[]): { changes: number };
  all(bindings: unknown[]): Row[];
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
interface MysqlConnection {
  query(options: { sql: string }, values: unknown[], done: (err: Error | null, result: unknown) => void): void;
}
type TransactionClient<C> = { acquireConnection(): Promise<C> };

/** A statement run on a transaction's own connection: the rows it changed, or the rows it read. */
interface Direct {
  run(sql: string, bindings: unknown[]): Promise<number>;
  all(sql: string, bindings: unknown[]): Promise<Row[]>;
}

/**
 * The hot statements of a write transaction (an enrollment writes about a dozen), run without knex's
 * query builder and runner: inside an open transaction, each goes straight to the transaction's connection
 * (SQLite: its cached prepared statement, core/db/connection.ts; MySQL/MariaDB: mysql2's query, which binds
 * the values as under knex). knex's building, compiling and running of such a statement cost more of the
 * main thread than SQLite executing it (bench/enroll profile: knex about 18% of the kernel's main thread).
 * The SQL is what knex would send.
 *
 * Only a transaction's statements take this path: the connection is then the transaction's alone (knex
 * holds it until the commit), so a statement cannot land in another caller's transaction. Anything else
 * (no transaction, a transaction already ended, which knex refuses) goes through knex.
 */
async function directOf(db: Db): Promise<Direct | undefined> {
  const trx = db as Partial<Knex.Transaction>;
  if (trx.isTransaction !== true || trx.isCompleted?.()) return undefined;
  // One per transaction: its connection does not change while it is open.
  let direct = directs.get(db);
  if (direct === undefined) {
    direct = (await directOnConnection(db)) ?? null;
    directs.set(db, direct);
  }
  return direct ?? undefined;
}

const directs = new WeakMap<Db, Direct | null>();

async function directOnConnection(db: Db): Promise<Direct | undefined> {
  const client = db.client.config.client as string;
  if (client === 'better-sqlite3') {
    const conn = await (db.client as unknown as TransactionClient<SqliteConnection>).acquireConnection();
    return {
      run: async (sql, bindings) => conn.prepare(sql).run(bindings.map(bindable)).changes,
      all: async (sql, bindings) => conn.prepare(sql).all(bindings.map(bindable)),
    };
  }
  if (client === 'mysql2') {
    const conn = await (db.client as unknown as TransactionClient<MysqlConnection>).acquireConnection();
    const query = (sql: string, bindings: unknown[]): Promise<unknown> =>
      new Promise((resolve, reject) => conn.query({ sql }, bindings.map(nullable), (err, result) => (err ? reject(err) : resolve(result))));
    return {
      run: async (sql, bindings) => Number(((await query(sql, bindings)) as { affectedRows?: number }).affectedRows ?? 0),
      all: async (sql, bindings) => (await query(sql, bindings)) as Row[],
    };
  }
  return undefined;
}

/** Values as knex binds them on better-sqlite3 (dates as milliseconds, booleans as 0/1); undefined as NULL. */
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  return value;
}

/** mysql2 formats values itself, as under knex; undefined as NULL. */
const nullable = (value: unknown): unknown => (value === undefined ? null : value);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A quoted identifier; names come from code, and anything else is refused rather than quoted. */
function quoted(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`statements: ${JSON.stringify(name)} is not an identifier`);
  return `\`${name}\``;
}

/** The same refusal on the knex path (which would quote any name): both engines treat a bad name alike. */
function checked(...names: string[]): void {
  for (const name of names) quoted(name);
}

/** SQL texts by shape (table, columns): built once. Shapes come from code, so this stays small. */
const texts = new Map<string, string>();
const MAX_TEXTS = 1024;

function textOf(key: string, build: () => string): string {
  let sql = texts.get(key);
  if (sql === undefined) {
    sql = build();
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(key, sql);
  }
  return sql;
}

/** `col = ?` (or `col is null`) joined by AND, and the values bound; a null compares as knex's where does. */
function conditions(where: Row, bindings: unknown[]): string {
  const keys = Object.keys(where);
  for (const k of keys) if (where[k] !== null) bindings.push(where[k]);
  return textOf(`w\u0000${keys.map((k) => (where[k] === null ? `${k}\u0001` : k)).join(',')}`, () => keys.map((k) => (where[k] === null ? `${quoted(k)} is null` : `${quoted(k)} = ?`)).join(' and '));
}

/** Runs a write statement in `db` as `db.raw` would (SQL both engines read); answers the rows it changed. */
export async function runWrite(db: Db, sql: string, bindings: readonly unknown[]): Promise<number> {
  const direct = await directOf(db);
  if (direct) return direct.run(sql, [...bindings]);
  const result = (await db.raw(sql, bindings as Knex.RawBinding[])) as unknown;
  // The driver's own count: knex's raw answers mysql2's [ResultSetHeader { affectedRows }, fields] (0 for a
  // row INSERT IGNORE skipped) and better-sqlite3's { changes } (sqlite3_changes of that statement). Not
  // knex's insert() result: on better-sqlite3 its lastID is the connection's last rowid, stale after a no-op.
  const info = (Array.isArray(result) ? result[0] : result) as { affectedRows?: number; changes?: number } | undefined;
  return Number(info?.affectedRows ?? info?.changes ?? 0);
}

/** SQLite's limit on bound variables per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const SQLITE_MAX_VARIABLES = 32_766;
/** Rows per statement on MySQL/MariaDB at most (the packet budget usually decides first). */
const MYSQL_MAX_ROWS = 1000;
/** Characters of values per MySQL statement, by server (a transaction shares its knex's config object). */
const packetBudgets = new WeakMap<object, Promise<number>>();

/**
 * Characters of values per MySQL statement: a quarter of max_allowed_packet (UTF-8 and escaping can triple a
 * value; mysql2 inlines values in the statement it sends), at most 8 MiB; 256 KiB when the server does not say.
 */
function packetBudget(db: Db): Promise<number> {
  const key = db.client.config as object;
  let budget = packetBudgets.get(key);
  if (budget === undefined) {
    budget = (async () => {
      try {
        const [rows] = (await db.raw('select @@max_allowed_packet as m')) as [{ m: number | string }[]];
        const packet = Number(rows[0]?.m ?? 0);
        return packet > 0 ? Math.min(packet / 4, 8 * 1024 * 1024) : 256 * 1024;
      } catch {
        return 256 * 1024;
      }
    })();
    packetBudgets.set(key, budget);
  }
  return budget;
}

/**
 * Inserts `rows` (values in `columns` order; undefined is NULL) with multi-row INSERTs, as few as SQLite's
 * bound-variable limit and, on MySQL/MariaDB, the packet budget allow.
 */
export async function insertValues(db: Db, table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
  if (rows.length === 0) return;
  const mysql = isMysql(db);
  const maxRows = mysql ? MYSQL_MAX_ROWS : Math.max(1, Math.floor(SQLITE_MAX_VARIABLES / columns.length));
  // One row is one statement whatever its size: the hot single-row inserts neither wait for the budget nor size rows.
  const budget = mysql && rows.length > 1 ? await packetBudget(db) : Infinity;
  for (let start = 0; start < rows.length; ) {
    let end = start;
    let size = 0;
    while (end < rows.length && end - start < maxRows) {
      if (budget !== Infinity) {
        let rowSize = 16;
        for (const v of rows[end]!) rowSize += typeof v === 'string' ? v.length + 4 : 12;
        if (end > start && size + rowSize > budget) break;
        size += rowSize;
      }
      end++;
    }
    const count = end - start;
    const sql = textOf(`i\u0000${table}\u0000${count}\u0000${columns.join(',')}`, () => {
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      return `insert into ${quoted(table)} (${columns.map(quoted).join(', ')}) values ${new Array(count).fill(tuple).join(', ')}`;
    });
    const bindings: unknown[] = [];
    for (let i = start; i < end; i++) for (const v of rows[i]!) bindings.push(v === undefined ? null : v);
    await runWrite(db, sql, bindings);
    start = end;
  }
}

/** Inserts `rows` (insertValues; the columns are the union of the rows' keys, a missing value NULL). */
export async function insertRows(db: Db, table: string, rows: object | readonly object[]): Promise<void> {
  const list = (Array.isArray(rows) ? rows : [rows]) as readonly Row[];
  if (list.length === 0) return;
  const columns = list.length === 1 ? Object.keys(list[0]!) : [...new Set(list.flatMap((r) => Object.keys(r)))];
  await insertValues(db, table, columns, list.map((r) => columns.map((c) => r[c])));
}

/** `update table set … where …` (equalities); answers the rows changed. */
export async function updateWhere(db: Db, table: string, where: Row, set: Row): Promise<number> {
  const direct = await directOf(db);
  if (!direct) {
    checked(table, ...Object.keys(where), ...Object.keys(set));
    return db(table).where(where).update(set);
  }
  const columns = Object.keys(set);
  const bindings: unknown[] = columns.map((c) => set[c]);
  const condition = conditions(where, bindings);
  const sql = textOf(`u\u0000${table}\u0000${columns.join(',')}\u0000${condition}`, () => `update ${quoted(table)} set ${columns.map((c) => `${quoted(c)} = ?`).join(', ')} where ${condition}`);
  return direct.run(sql, bindings);
}

/** `delete from table where …` (equalities), except rows where every column of `unless` equals its value. */
export async function deleteWhere(db: Db, table: string, where: Row, unless?: Row): Promise<number> {
  const direct = await directOf(db);
  if (!direct) {
    checked(table, ...Object.keys(where), ...Object.keys(unless ?? {}));
    const q = db(table).where(where);
    return unless ? q.whereNot((n) => void n.where(unless)).delete() : q.delete();
  }
  const bindings: unknown[] = [];
  const condition = conditions(where, bindings);
  const except = unless ? conditions(unless, bindings) : undefined;
  const sql = textOf(`d\u0000${table}\u0000${condition}\u0000${except ?? ''}`, () => `delete from ${quoted(table)} where ${condition}${except ? ` and not (${except})` : ''}`);
  return direct.run(sql, bindings);
}

/** The first row matching `where` (equalities), its `columns` only; undefined when none. */
export async function firstWhere(db: Db, table: string, where: Row, columns: readonly string[]): Promise<Row | undefined> {
  const direct = await directOf(db);
  if (!direct) {
    checked(table, ...Object.keys(where), ...columns);
    return (await db(table).where(where).first(...columns)) as Row | undefined;
  }
  const bindings: unknown[] = [];
  const condition = conditions(where, bindings);
  const sql = textOf(`s\u0000${table}\u0000${columns.join(',')}\u0000${condition}`, () => `select ${columns.map(quoted).join(', ')} from ${quoted(table)} where ${condition} limit 1`);
  return (await direct.all(sql, bindings))[0];
}
