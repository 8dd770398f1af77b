import type { Knex } from 'knex';

/** The SQL engines the backend speaks. MySQL covers MariaDB. */
export type Engine = 'sqlite' | 'mysql' | 'postgres';

/**
 * How a job is found and locked atomically:
 * - 'skip-locked': a short transaction SELECT … FOR UPDATE SKIP LOCKED, then UPDATE (PostgreSQL, MariaDB ≥ 10.6,
 *   MySQL ≥ 8.0.1). Concurrent pollers skip each other's rows instead of queueing behind them.
 * - 'conditional-update': pick a candidate, then UPDATE … WHERE id = ? AND <the same guard>; the guard is
 *   re-evaluated on the current row, so only one poller's UPDATE matches (SQLite, older MySQL/MariaDB).
 */
export type LockStrategy = 'skip-locked' | 'conditional-update';

const CLIENT_ENGINES: Readonly<Record<string, Engine>> = {
  'better-sqlite3': 'sqlite',
  sqlite3: 'sqlite',
  sqlite: 'sqlite',
  mysql: 'mysql',
  mysql2: 'mysql',
  mariadb: 'mysql',
  pg: 'postgres',
  'pg-native': 'postgres',
  pgnative: 'postgres',
  postgres: 'postgres',
  postgresql: 'postgres',
};

/** The engine behind a knex instance, from its configured client (or, for a client class, its dialect). */
export function detectEngine(knex: Knex): Engine {
  // knex types `client` as any; only these two documented fields are read.
  const client = knex.client as { config?: { client?: unknown }; dialect?: unknown };
  for (const candidate of [client.config?.client, client.dialect]) {
    if (typeof candidate === 'string' && CLIENT_ENGINES[candidate]) return CLIENT_ENGINES[candidate];
  }
  throw new Error(`knex scheduler backend: unsupported knex client ${String(client.config?.client ?? client.dialect)} (use better-sqlite3, mysql2 or pg)`);
}

export interface ServerInfo {
  /** As the server reports it, e.g. "3.53.2", "10.11.19-MariaDB-0+deb12u1", "15.20". */
  version: string;
  /** Whether SELECT … FOR UPDATE SKIP LOCKED is available. */
  skipLocked: boolean;
  /**
   * Whether the pool's sessions already run READ COMMITTED (PostgreSQL's default; Certwright's MySQL
   * connections set it), so locking transactions need not ask for it: one round trip less each.
   */
  readCommitted: boolean;
  /** MariaDB: anonymous compound statements (BEGIN NOT ATOMIC … END), so a whole claim can go in one round trip. */
  compoundStatements: boolean;
}

const atLeast = (version: string, min: readonly number[]): boolean => {
  const parts = (version.match(/^\d+(?:\.\d+)*/)?.[0] ?? '0').split('.').map(Number);
  for (let i = 0; i < min.length; i++) {
    const have = parts[i] ?? 0;
    const want = min[i] ?? 0;
    if (have !== want) return have > want;
  }
  return true;
};

/** Asks the server its version once, to choose the lock strategy. */
export async function probeServer(knex: Knex, engine: Engine): Promise<ServerInfo> {
  const versionSql = { sqlite: 'sqlite_version()', mysql: 'VERSION()', postgres: "current_setting('server_version')" }[engine];
  const row = (await knex.select(knex.raw(`${versionSql} AS v`)).first()) as { v?: unknown } | undefined;
  const version = String(row?.v ?? '');
  if (engine === 'sqlite') return { version, skipLocked: false, readCommitted: false, compoundStatements: false };
  if (engine === 'postgres') {
    const level = (await knex.select(knex.raw("current_setting('transaction_isolation') AS l")).first()) as { l?: unknown } | undefined;
    return { version, skipLocked: atLeast(version, [9, 5]), readCommitted: String(level?.l) === 'read committed', compoundStatements: false };
  }
  const mariadb = /mariadb/i.test(version);
  // MariaDB has SKIP LOCKED since 10.6; MySQL since 8.0.1.
  const skipLocked = mariadb ? atLeast(version, [10, 6]) : atLeast(version, [8, 0, 1]);
  // MariaDB names it tx_isolation; MySQL 8 transaction_isolation.
  const variable = mariadb ? '@@SESSION.tx_isolation' : '@@SESSION.transaction_isolation';
  const session = (await knex.select(knex.raw(`${variable} AS l, @@SESSION.sql_mode AS m`)).first()) as { l?: unknown; m?: unknown } | undefined;
  // Anonymous compound statements since MariaDB 10.1.1, anchored types (TYPE OF) since 10.3, in the default
  // syntax (sql_mode ORACLE has its own); MySQL has neither.
  const compoundStatements = mariadb && atLeast(version, [10, 3]) && !/ORACLE/i.test(String(session?.m ?? ''));
  return { version, skipLocked, readCommitted: String(session?.l) === 'READ-COMMITTED', compoundStatements };
}

/** Deadlocks and serialization failures: the transaction was rolled back and may simply be run again. */
export function isRetryableConflict(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  return e.code === 'ER_LOCK_DEADLOCK' || e.errno === 1213 || e.code === '40P01' || e.code === '40001';
}

/** Runs fn, running it again (a few times, after a short random pause) when the database reports a deadlock. */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}

/** The error for a scheduler table that is not there: the migration that creates it has not run. */
export const missingTableError = (table: string): Error =>
  new Error(`scheduler table "${table}" does not exist: the core migration 0003_scheduler has not been applied (run \`certwright migrate\`)`);
