import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { CORE_MIGRATIONS } from '../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../core/db/migrator.js';

/**
 * TEST_POSTGRES_URL=postgres://user@host:5432/<base> selects the PostgreSQL tests; they are only registered
 * when it is set (the kernel itself runs on SQLite or MySQL, so these test the engine-neutral parts on pg).
 */
export const postgresUrl = (): string | undefined => process.env.TEST_POSTGRES_URL || undefined;

export interface FreshPostgres {
  knex: Knex;
  /** The knex config of that database, to open a second pool on it (another node). */
  config: Knex.Config;
}

/**
 * A fresh database `<base>_<random>` on the TEST_POSTGRES_URL server with the core migrations applied,
 * dropped at teardown (test files run in parallel). `<base>` need not exist; the user must be allowed to
 * create databases, connecting to the `postgres` maintenance database.
 */
export async function freshPostgres(t: { teardown(fn: () => unknown): void }): Promise<FreshPostgres> {
  const base = postgresUrl();
  if (!base) throw new Error('TEST_POSTGRES_URL is not set');
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || 'certwright_test'}_${randomBytes(4).toString('hex')}`;
  // The base name is only a prefix (as with TEST_DATABASE_URL); databases are created from the maintenance database.
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  const admin = knexFactory({ client: 'pg', connection: adminUrl.toString(), pool: { min: 0, max: 1 } });
  await admin.raw('CREATE DATABASE ??', [name]);
  url.pathname = `/${name}`;
  const config: Knex.Config = { client: 'pg', connection: url.toString(), pool: { min: 0, max: 10 } };
  const knex = knexFactory(config);
  t.teardown(async () => {
    await knex.destroy();
    // FORCE (PostgreSQL 13+): a pool a failed test left open does not keep the database alive.
    await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    await admin.destroy();
  });
  await migrateLatest(knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  return { knex, config };
}
