import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';

/**
 * The database a test file runs on. TEST_DATABASE_URL=mysql://…/<base> → a fresh database
 * `<base>_<random>` on that server, dropped at teardown (test files run in parallel). Otherwise null:
 * the kernel uses its embedded SQLite file in the test's own data dir.
 */
export async function freshDatabaseUrl(t: { teardown(fn: () => unknown): void }): Promise<string | null> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return null;
  const url = new URL(base.replace(/^mariadb:/, 'mysql:'));
  const name = `${url.pathname.slice(1) || 'certwright_test'}_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({
    client: 'mysql2',
    connection: { host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) },
    pool: { min: 0, max: 1 },
  });
  await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
  t.teardown(async () => {
    await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
    await admin.destroy();
  });
  url.pathname = `/${name}`;
  return url.toString();
}

export const onMysql = (): boolean => Boolean(process.env.TEST_DATABASE_URL);
