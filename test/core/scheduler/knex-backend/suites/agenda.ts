import { Agenda, type Job } from 'agenda';
import type { Test } from 'tap';
import { KnexBackend } from '../../../../../core/scheduler/knex-backend/index.js';
import { countJobs, until, type DbFactory } from '../harness.js';

/**
 * Agenda starts a lockLifetime/2 timer beside every run (its "still alive" check) and does not clear it when
 * the run ends: with the default 10-minute lifetime the test process would stay alive 5 minutes after the
 * last run. A short lifetime keeps those timers short; the jobs here take milliseconds.
 */
const LOCK_LIFETIME = 2_000;

/** Stops an Agenda at teardown if the test did not (it may already be stopped, or its pool gone). */
const stopAtTeardown = (t: Test, agenda: Agenda) => t.teardown(() => agenda.stop().catch(() => undefined));

/** A real Agenda 6 on the knex backend. */
export function agendaSuite(t: Test, db: DbFactory): void {
  t.test('Agenda runs now, scheduled and repeating jobs; failures and logs are stored', async (t) => {
    const { knex, engine } = await db.open(t);
    const backend = new KnexBackend(knex);
    t.equal(backend.name, `knex/${engine}`);
    const agenda = new Agenda({ backend, processEvery: 100, defaultLockLifetime: LOCK_LIFETIME, logging: true, name: 'it-node' });
    stopAtTeardown(t, agenda);
    const runs: Record<'now' | 'later' | 'repeat', { at: number; data: unknown }[]> = { now: [], later: [], repeat: [] };
    for (const name of ['now', 'later', 'repeat'] as const) {
      agenda.define(name, async (job: Job) => void runs[name].push({ at: Date.now(), data: job.attrs.data }));
    }
    agenda.define('boom', async () => {
      throw new Error('it broke');
    });
    await agenda.start();

    const scheduledAt = Date.now();
    await agenda.now('now', { n: 1 });
    await agenda.schedule('in 1 second', 'later', { n: 2 });
    await agenda.every('1 second', 'repeat', { n: 3 });
    await agenda.now('boom');
    await until('the three kinds of job to run', () => runs.now.length > 0 && runs.later.length > 0 && runs.repeat.length > 0);
    t.same(runs.now[0]?.data, { n: 1 }, 'the handler gets the job data');
    t.ok(runs.later[0]!.at - scheduledAt >= 900, 'the scheduled job waited for its time');
    await until('the repeating job to run again', () => runs.repeat.length >= 2, 5_000);
    t.pass('the repeating job repeats');
    await agenda.every('1 second', 'repeat', { n: 3 });
    t.equal(await countJobs(knex, 'repeat'), 1, 'every() keeps one job per name');

    await until('the one-off job to be stored as completed', async () => (await agenda.queryJobs({ name: 'now' })).jobs[0]?.state === 'completed');
    const [done] = (await agenda.queryJobs({ name: 'now' })).jobs;
    t.equal(done?.lockedAt, undefined, 'unlocked after the run');
    t.equal(done?.nextRunAt, null, 'a one-off job has no next run');
    t.ok(done?.lastFinishedAt, 'its finish is recorded');
    t.equal(runs.now.length, 1, 'a one-off job runs once');

    await until('the failing job to be stored as failed', async () => (await agenda.queryJobs({ name: 'boom' })).jobs[0]?.state === 'failed');
    t.match((await agenda.queryJobs({ name: 'boom' })).jobs[0], { failCount: 1, failReason: 'it broke' });

    // Agenda writes its log entries without waiting for them.
    await until('the log entries', async () => (await agenda.getLogs({ jobName: 'boom', event: 'fail' })).total > 0);
    const logs = await agenda.getLogs({ jobName: 'now' });
    t.same(new Set(logs.entries.map((e) => e.event)), new Set(['locked', 'start', 'success', 'complete']));
    t.equal(logs.entries[0]?.agendaName, 'it-node');

    await agenda.stop();
    t.equal(await knex('scheduler_jobs').whereNotNull('locked_at').whereNotNull('next_run_at').first(), undefined, 'stop() leaves no waiting job locked');
    t.ok(await knex('scheduler_jobs').count({ n: '*' }), 'the pool is still open: the backend does not own it');
  });

  t.test('two Agenda nodes on one database run each job exactly once', async (t) => {
    const { knex, secondPool } = await db.open(t);
    const nodes = [knex, secondPool()].map((pool, i) => new Agenda({ backend: new KnexBackend(pool), processEvery: 50, defaultLockLifetime: LOCK_LIFETIME, name: `node-${i}` }));
    const runs = new Map<string, string[]>();
    for (const node of nodes) {
      stopAtTeardown(t, node);
      node.define(
        'probe',
        async (job: Job) => {
          const id = String(job.attrs._id);
          runs.set(id, [...(runs.get(id) ?? []), node.attrs.name ?? '?']);
          await new Promise((resolve) => setTimeout(resolve, 5));
        },
        { concurrency: 10 },
      );
    }
    const JOBS = 60;
    for (let i = 0; i < JOBS; i++) await nodes[i % 2]!.now('probe', { i });
    await Promise.all(nodes.map((node) => node.start()));
    await until('every job to run', () => runs.size === JOBS, 20_000);
    // Let both nodes poll a few more times: a second run of any job would show now.
    const settle = Date.now() + 300;
    await until('both nodes to settle', async () => Date.now() > settle && (await knex('scheduler_jobs').whereNotNull('locked_at').first()) === undefined);
    await Promise.all(nodes.map((node) => node.stop()));
    const twice = [...runs].filter(([, by]) => by.length > 1);
    t.same(twice, [], 'no job ran twice');
    t.equal(runs.size, JOBS);
    t.comment(`runs per node: ${nodes.map((n) => `${n.attrs.name}=${[...runs.values()].filter((by) => by[0] === n.attrs.name).length}`).join(', ')}`);
  });
}
