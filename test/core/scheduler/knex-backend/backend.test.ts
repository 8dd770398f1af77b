import { Agenda } from 'agenda';
import knexFactory, { type Knex } from 'knex';
import t from 'tap';
import { KnexBackend, detectEngine } from '../../../../core/scheduler/knex-backend/index.js';

/** An empty in-memory SQLite database: no migrations. */
const emptySqlite = (t: { teardown(fn: () => unknown): void }): Knex => {
  const knex = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
  t.teardown(() => knex.destroy());
  return knex;
};

t.test('the engine comes from the knex client', async (t) => {
  const clients: [string, string][] = [
    ['better-sqlite3', 'sqlite'],
    ['mysql2', 'mysql'],
    ['pg', 'postgres'],
  ];
  for (const [client, engine] of clients) {
    // knex opens no connection until the first query.
    const knex = knexFactory({ client, connection: {}, useNullAsDefault: true });
    t.equal(detectEngine(knex), engine, client);
    t.equal(new KnexBackend(knex).name, `knex/${engine}`);
    await knex.destroy();
  }
  t.equal(new KnexBackend(emptySqlite(t), { engine: 'mysql' }).name, 'knex/mysql', 'or is given');
});

t.test('connect names the missing migration; the backend never owns the pool', async (t) => {
  const knex = emptySqlite(t);
  const backend = new KnexBackend(knex);
  t.equal(backend.ownsConnection, false);
  t.equal(backend.notificationChannel, undefined, 'no notification channel: Agenda polls');
  await t.rejects(backend.connect(), /scheduler table "scheduler_jobs" does not exist: the core migration 0003_scheduler has not been applied/);
  await knex.schema.createTable('scheduler_jobs', (table) => table.string('id'));
  await t.rejects(backend.connect(), /"scheduler_job_logs" does not exist/);
  await backend.disconnect();
  t.ok(await knex.raw('select 1'), 'disconnect leaves the pool open');
});

t.test('connect does not fail when the owner has already closed the pool', async (t) => {
  // Agenda calls connect() from its constructor and leaves a rejection unhandled: a kernel that stops (or
  // fails to boot) right after creating its scheduler must not crash the process.
  const knex = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
  await knex.destroy();
  const agenda = new Agenda({ backend: new KnexBackend(knex) });
  await t.resolves(agenda.ready, 'ready, with nothing to connect to');
});
