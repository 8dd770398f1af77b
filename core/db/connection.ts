import { resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { sqliteRegexp } from '../query/sqlite-regexp.js';
import { createPrivateSqliteFile } from './file-modes.js';

export type DatabaseEngine = 'sqlite' | 'mysql';

export interface DatabaseOptions {
  /** null: <dataDir>/certwright.db. */
  url: string | null;
  dataDir: string;
  pool: { min: number; max: number };
}

export interface Database {
  knex: Knex;
  engine: DatabaseEngine;
  /** For logs: the URL with any password removed. */
  displayUrl: string;
  /** SQLite: the database file. */
  filename?: string;
}

/** Rows ANALYZE samples per index on SQLite (PRAGMA analysis_limit). */
const ANALYSIS_LIMIT = 1000;
/** How often SQLite's planner statistics are refreshed (PRAGMA optimize). */
const OPTIMIZE_EVERY_MS = 60 * 60_000;

/**
 * WAL pages between automatic checkpoints (4 KiB pages: a WAL of up to about 16 MiB). The kernel raises it once
 * its checkpoint worker runs (core/db/wal-checkpointer.ts); tools and tests opening the file keep this.
 */
export const WAL_AUTOCHECKPOINT = 4000;

/**
 * SQLite's page cache (KiB; the default is 2 MiB). An enrollment touches pages of a dozen tables and their
 * indexes; with 2 MiB, pages a commit group needed had been evicted and were read again through the OS; a larger cache
 * took about 15% off the kernel's main-thread CPU per enrollment (bench/enroll). One connection: this is
 * the whole of it.
 */
const PAGE_CACHE_KIB = 64 * 1024;

/** Prepared statements kept per SQLite connection (by SQL text, least recently used dropped first). */
const STATEMENT_CACHE = 256;
/**
 * Characters of SQL text the kept statements add up to at most, and the longest SQL kept at all. A prepared
 * statement's native memory grows with its text (SQLite's program: about 15 bytes per character of SQL, 85 for a
 * long `in (?, ?, …)` list: 820 KB for 5,000 placeholders), and the count alone did not bound it: 256 distinct
 * large searches (a query may bind up to 30,000 values) pinned hundreds of MB outside the JavaScript heap
 * (issue 24: +71 MB outside the heap from 40,000 to 60,000 requests of bench/soak.ts). The statements that
 * repeat (enrollment writes, reads by id, paged searches) are short: 89 characters at the median, 1,500 at the
 * most, so 256 of them fit; long texts are the ones that vary from call to call (their lists). Worst case kept:
 * about 11 MB. A statement not kept is freed with its JavaScript object, at the next scavenge.
 */
export const STATEMENT_CACHE_MAX_CHARS = 128 * 1024;
export const STATEMENT_CACHE_MAX_SQL = 4 * 1024;

/**
 * knex prepares every statement it runs on better-sqlite3 afresh (`connection.prepare(sql)` per query):
 * a profile of an enrollment spent 12% of its CPU there. The same SQL text gets the same prepared statement
 * back instead: knex runs it to completion at once (all() or run(), synchronous, one connection), so one is
 * never in use twice, and SQLite re-prepares a statement by itself after a schema change. Nothing here sets
 * safeIntegers per query (knex would then change it on the shared statement). Answers what the cache holds
 * (tests of its bounds).
 */
export function cacheStatements(conn: { prepare(sql: string): unknown }): () => { entries: number; chars: number } {
  const prepare = conn.prepare.bind(conn);
  const cache = new LRUCache<string, object>({ max: STATEMENT_CACHE, maxSize: STATEMENT_CACHE_MAX_CHARS, sizeCalculation: (_statement, sql) => sql.length || 1 });
  conn.prepare = (sql: string): unknown => {
    const cached = cache.get(sql);
    if (cached !== undefined) return cached;
    const statement = prepare(sql);
    if (sql.length <= STATEMENT_CACHE_MAX_SQL && typeof statement === 'object' && statement !== null) cache.set(sql, statement);
    return statement;
  };
  return () => ({ entries: cache.size, chars: cache.calculatedSize });
}

export function sqliteFileOf(url: string | null, dataDir: string): string {
  if (url === null) return resolve(dataDir, 'certwright.db');
  const path = url.replace(/^sqlite:(\/\/)?/, '');
  return resolve(dataDir, path);
}

/** Opens the configured database: SQLite (better-sqlite3, WAL) by default, MySQL/MariaDB (mysql2) by URL. */
export function openDatabase(options: DatabaseOptions): Database {
  const url = options.url;
  if (url === null || url.startsWith('sqlite:')) {
    const filename = sqliteFileOf(url, options.dataDir);
    createPrivateSqliteFile(filename, options.dataDir);
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(
          conn: {
            pragma(sql: string): unknown;
            function(name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown): unknown;
            prepare(sql: string): unknown;
          },
          done: (err: Error | null, conn: unknown) => void,
        ) {
          cacheStatements(conn);
          // WAL lets readers run beside the writer; busy_timeout makes a second process wait, not fail.
          conn.pragma('journal_mode = WAL');
          conn.pragma('synchronous = NORMAL');
          // Checkpoint the WAL every WAL_AUTOCHECKPOINT pages instead of SQLite's 1,000: an enrollment writes
          // about 80 WAL frames (two commits over a dozen indexed tables), so at 1,000 a committing writer
          // stopped for a checkpoint (page copies and, with NORMAL, the only fsync) every dozen
          // enrollments; a longer interval copies a page rewritten meanwhile once (bench/enroll).
          conn.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`);
          conn.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
          conn.pragma('foreign_keys = ON');
          conn.pragma('busy_timeout = 5000');
          // The query languages' `matches` / `within` (`col REGEXP ?`): SQLite has the operator, not the function.
          conn.function('regexp', { deterministic: true }, (pattern, value) => sqliteRegexp(pattern, value));
          // Planner statistics (SQLite's advice for long-lived connections): without them SQLite picks
          // plans by rule, e.g. at 200,000 certificates `status is valid` through the not_after range
          // and a sort (190 ms) instead of the (tenant, revoked, id) index (0.3 ms). analysis_limit makes
          // ANALYZE sample, so this stays cheap on any size; OPTIMIZE_EVERY_MS refreshes it as tables grow.
          conn.pragma(`analysis_limit = ${ANALYSIS_LIMIT}`);
          conn.pragma('optimize = 0x10002');
          done(null, conn);
        },
      },
    });
    // `PRAGMA optimize` re-analyses only the tables whose size changed much since their last ANALYZE.
    // The timer holds the instance weakly and stops once it is gone or destroyed (its queries fail).
    const ref = new WeakRef(knex);
    const timer = setInterval(() => {
      const live = ref.deref();
      if (!live) clearInterval(timer);
      else live.raw('PRAGMA optimize').catch(() => clearInterval(timer));
    }, OPTIMIZE_EVERY_MS);
    timer.unref();
    return { knex, engine: 'sqlite', displayUrl: `sqlite:${filename}`, filename };
  }
  const parsed = new URL(url.replace(/^mariadb:/, 'mysql:'));
  const knex = knexFactory({
    client: 'mysql2',
    connection: {
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : 3306,
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      database: decodeURIComponent(parsed.pathname.slice(1)),
      charset: 'utf8mb4',
      supportBigNumbers: true,
      timezone: 'Z',
    },
    pool: {
      min: options.pool.min,
      max: options.pool.max,
      // READ COMMITTED, as PostgreSQL: locking reads take no gap locks (the scheduler's SKIP LOCKED claims
      // would otherwise block inserts of new jobs), and transactions need not set it one by one.
      afterCreate(conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', (err) => done(err, conn));
      },
    },
  });
  parsed.password = parsed.password ? '***' : '';
  return { knex, engine: 'mysql', displayUrl: parsed.toString() };
}
