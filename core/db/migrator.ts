import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import knexFactory, { type Knex } from 'knex';

/** A migration is code: a name and an `up` (and optional `down`) taking knex. */
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down?(knex: Knex): Promise<void>;
}

/** Feeds knex's migrator from an in-memory list, so migrations need no file-system conventions. */
class ListSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly list: readonly Migration[]) {}
  getMigrations(): Promise<Migration[]> {
    return Promise.resolve([...this.list]);
  }
  getMigrationName(m: Migration): string {
    return m.name;
  }
  getMigration(m: Migration): Promise<Knex.Migration> {
    return Promise.resolve({ up: (k: Knex) => m.up(k), down: (k: Knex) => (m.down ? m.down(k) : Promise.resolve()) });
  }
}

export const CORE_MIGRATIONS_TABLE = 'cw_migrations';

/** Each plugin keeps its own history table, so plugins never see each other's migrations. */
export function pluginMigrationsTable(pluginId: string): string {
  const slug = pluginId.replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 32);
  const hash = createHash('sha256').update(pluginId).digest('hex').slice(0, 8);
  return `cw_migrations_p_${slug}_${hash}`;
}

/**
 * Applies pending migrations, one node at a time: nodes booting at once on one database wait for each other
 * here instead of failing.
 *
 * knex's own lock is not enough for that. Before it takes its lock, knex creates its history and lock tables
 * when they are missing (look, then create) and inserts the lock row when the table is empty (look, then
 * insert): on a fresh database, nodes booting at once failed on "table already exists", and two lock rows made
 * every later boot fail on "Migration table is already locked" for good (3 runs in 10 of three nodes at once on
 * MariaDB). And a node that finds the lock taken fails at once rather than waiting (on MySQL/MariaDB migration
 * DDL commits knex's transaction, so the lock row is seen taken while another node migrates). So:
 * - MySQL/MariaDB: the whole of it runs under a named lock (GET_LOCK) held on a connection of its own, asked
 *   for without waiting, again every POLL_MS: no statement waits on another node's migrations (a blocked
 *   GET_LOCK would), and the lock goes with its session if its node dies. A lock row left taken by a node
 *   that died mid-migration still fails the boot, as knex always did, with its advice (knex migrate:unlock).
 * - SQLite: the history and lock tables (knex's columns) and the lock row are created if missing, each in one
 *   statement that cannot collide with another node's; knex then runs the pending migrations in one
 *   transaction, atomic on SQLite, which another node's write waits for (busy_timeout); a node whose wait
 *   outlasted the busy timeout tries again.
 */
export async function migrateLatest(knex: Knex, migrations: readonly Migration[], tableName: string): Promise<string[]> {
  const latest = async () => {
    const [, applied] = (await knex.migrate.latest({ migrationSource: new ListSource(migrations), tableName })) as [number, string[]];
    return applied;
  };
  const client: unknown = knex.client.config.client;
  if (client === 'mysql2') return underNamedLock(knex, tableName, latest);
  // (PostgreSQL, on which the scheduler backend's suites run, but no kernel: knex as it is.)
  if (client !== 'better-sqlite3') return latest();
  await createHistoryTables(knex, tableName);
  for (const deadline = Date.now() + WAIT_FOR_OTHER_NODE_MS; ; ) {
    try {
      return await latest();
    } catch (err) {
      if (!isBusy(err) || Date.now() > deadline) throw err;
      await sleep(POLL_MS);
    }
  }
}

/** How long a node waits for the migrations another node is running. */
const WAIT_FOR_OTHER_NODE_MS = 10 * 60_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SQLITE_BUSY, as better-sqlite3 raises it (knex reports a busy lock update as a MigrationLocked error with its message). */
const isBusy = (err: unknown): boolean => {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'SQLITE_BUSY' || (e instanceof Error && e.name === 'MigrationLocked' && /database is locked/.test(String(e.message)));
};

async function underNamedLock<T>(knex: Knex, tableName: string, fn: () => Promise<T>): Promise<T> {
  // Its own one-connection pool: the lock must stay with one session while knex uses the kernel's pool, whatever
  // size that is. knex types `client` as any; its config is the one the kernel opened the pool with.
  const config = (knex.client as { config: Knex.Config }).config;
  const session = knexFactory({ ...config, pool: { min: 0, max: 1 } });
  // A name per database and history table (GET_LOCK names are server-wide; MySQL takes 64 characters at most).
  const name = session.raw("CONCAT('certwright-migrate-', SHA1(CONCAT(DATABASE(), '.', ?)))", [tableName]);
  try {
    for (const deadline = Date.now() + WAIT_FOR_OTHER_NODE_MS; ; ) {
      const [rows] = (await session.raw('SELECT GET_LOCK(?, 0) AS got', [name])) as [{ got: number | null }[]];
      if (Number(rows[0]?.got) === 1) break;
      if (Date.now() > deadline) throw new Error(`migrations (${tableName}): another node has been running them for ${WAIT_FOR_OTHER_NODE_MS / 60_000} minutes`);
      await sleep(POLL_MS);
    }
    try {
      return await fn();
    } finally {
      await session.raw('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    await session.destroy();
  }
}

/** knex's history and lock tables and its lock row, as knex creates them, each created only if missing. */
async function createHistoryTables(knex: Knex, tableName: string): Promise<void> {
  const ifMissing = (builder: Knex.SchemaBuilder) => builder.toSQL().map((q) => q.sql.replace(/^create table /i, 'create table if not exists '));
  const statements = [
    ...ifMissing(
      knex.schema.createTable(tableName, (t) => {
        t.increments();
        t.string('name');
        t.integer('batch');
        t.timestamp('migration_time');
      }),
    ),
    ...ifMissing(
      knex.schema.createTable(`${tableName}_lock`, (t) => {
        t.increments('index').primary();
        t.integer('is_locked');
      }),
    ),
  ];
  for (const sql of statements) await knex.raw(sql);
  // The row knex inserts into an empty table, in one statement (SQLite runs a write statement under the write
  // lock from its start, so two nodes cannot both find the table empty).
  await knex.raw('insert into ?? (??) select 0 where not exists (select 1 from ??)', [`${tableName}_lock`, 'is_locked', `${tableName}_lock`]);
}

export async function pendingMigrations(knex: Knex, migrations: readonly Migration[], tableName: string): Promise<number> {
  const [, pending] = (await knex.migrate.list({ migrationSource: new ListSource(migrations), tableName })) as [unknown[], unknown[]];
  return pending.length;
}

/** Loads a plugin's migration folder: every .ts/.js module, in file-name order, named by file name. */
export async function loadMigrationFolder(folder: string): Promise<Migration[]> {
  const files = readdirSync(folder)
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts'))
    .sort();
  const list: Migration[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(resolve(folder, file)).href)) as Partial<Migration> & { default?: Partial<Migration> };
    const up = mod.up ?? mod.default?.up;
    if (typeof up !== 'function') throw new Error(`migration ${file} exports no up(knex)`);
    list.push({ name: file.replace(/\.(ts|js|mjs)$/, ''), up, down: mod.down ?? mod.default?.down });
  }
  return list;
}
