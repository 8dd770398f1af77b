import type { JobParameters } from 'agenda';
import knexFactory, { type Knex } from 'knex';
import type { Test } from 'tap';
import type { Engine, LockStrategy } from '../../../../core/scheduler/knex-backend/index.js';
import { onMysql } from '../../../helpers/database.js';
import { bootKernel } from '../../../helpers/kernel.js';
import { freshPostgres } from '../../../helpers/postgres.js';

/** A migrated database for one test, and a way to open a second pool on it (a second node). */
export interface TestDb {
  knex: Knex;
  engine: Engine;
  secondPool(): Knex;
}

/** Where a suite's tests get their database: the engine is known before any database is opened. */
export interface DbFactory {
  engine: Engine;
  open(t: Test): Promise<TestDb>;
}

const secondPoolOf = (t: Test, config: Knex.Config) => (): Knex => {
  const knex = knexFactory(config);
  t.teardown(() => knex.destroy());
  return knex;
};

/**
 * The kernel's database: SQLite, or MySQL/MariaDB with TEST_DATABASE_URL. The kernel's own scheduler is
 * off, so only the test touches the jobs.
 */
export const kernelDb: DbFactory = {
  engine: onMysql() ? 'mysql' : 'sqlite',
  async open(t) {
    // (An override of `database` would replace the test database URL: the default pool, max 10, is kept.)
    const kernel = await bootKernel(t, { scheduler: { enabled: false } });
    if (kernel.db.engine !== this.engine) throw new Error(`expected the kernel on ${this.engine}, got ${kernel.db.engine}`);
    // knex types `client` as any; its config is the one the kernel opened the pool with.
    const config = (kernel.db.knex.client as { config: Knex.Config }).config;
    return { knex: kernel.db.knex, engine: kernel.db.engine, secondPool: secondPoolOf(t, config) };
  },
};

/** A fresh PostgreSQL database (TEST_POSTGRES_URL). */
export const postgresDb: DbFactory = {
  engine: 'postgres',
  async open(t) {
    const { knex, config } = await freshPostgres(t);
    return { knex, engine: 'postgres', secondPool: secondPoolOf(t, config) };
  },
};

/** The lock strategies an engine supports (the test server versions have SKIP LOCKED where the engine can). */
export const strategiesFor = (engine: Engine): LockStrategy[] => (engine === 'sqlite' ? ['conditional-update'] : ['skip-locked', 'conditional-update']);

/** A job as Agenda hands it to saveJob. */
export const job = (name: string, over: Partial<JobParameters> = {}): JobParameters => ({
  name,
  priority: 0,
  nextRunAt: new Date(),
  type: 'normal',
  data: {},
  ...over,
});

/** Polls until check() holds, failing after a bounded time instead of sleeping a fixed time. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A scheduler_jobs row by id (raw, as stored). */
export const rawRow = async (knex: Knex, id: unknown): Promise<Record<string, unknown>> =>
  (await knex('scheduler_jobs').where('id', String(id)).first()) as Record<string, unknown>;

export const ms = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** How many scheduler_jobs rows (of that name). */
export async function countJobs(knex: Knex, name?: string): Promise<number> {
  const query = knex('scheduler_jobs');
  if (name !== undefined) void query.where('name', name);
  const [row] = (await query.count({ n: '*' })) as { n: number | string }[];
  return Number(row?.n ?? 0);
}
