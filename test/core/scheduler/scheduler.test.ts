import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel, testConfig } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';

const fast = { scheduler: { processEveryMs: 50 } };
const jobRow = (kernel: Kernel, name: string) => kernel.db.knex('scheduler_jobs').where({ name }).first();

t.test('now, schedule and every jobs run, carrying their tenant and data', async (t) => {
  const kernel = await bootKernel(t, fast);
  const runs: { name: string; tenant: string; data: unknown }[] = [];
  for (const name of ['once-now', 'once-later', 'repeating']) {
    kernel.scheduler.define(name, async ({ tenant, data }) => void runs.push({ name, tenant, data }));
  }
  const scheduledAt = Date.now();
  await kernel.scheduler.now('once-now', { n: 1 }, { tenant: 'acme' });
  await kernel.scheduler.schedule('in 1 second', 'once-later', { n: 2 });
  await kernel.scheduler.every('1 second', 'repeating', { n: 3 });
  await until('the three kinds of job to run', () => ['once-now', 'once-later', 'repeating'].every((n) => runs.some((r) => r.name === n)));
  t.same(runs.find((r) => r.name === 'once-now'), { name: 'once-now', tenant: 'acme', data: { n: 1 } }, 'tenant and data reach the handler');
  t.equal(runs.find((r) => r.name === 'once-later')?.tenant, 'default');
  t.ok(Date.now() - scheduledAt >= 900, 'the scheduled job waited for its time');
  await until('the repeating job to run again', () => runs.filter((r) => r.name === 'repeating').length >= 2, 5_000);
  t.pass('the repeating job repeats');
  t.equal(runs.filter((r) => r.name === 'once-now').length, 1, 'a one-off job runs once');
});

t.test('a repeating job survives a restart with its next run kept', async (t) => {
  const config = await testConfig(t, fast);
  const first = await bootKernel(t, {}, { config });
  let firstRuns = 0;
  first.scheduler.define('heartbeat', async () => void firstRuns++);
  await first.scheduler.every('2 seconds', 'heartbeat', {});
  await until('a first run', () => firstRuns > 0);
  const before = await jobRow(first, 'heartbeat');
  await first.stop();

  const second = await bootKernel(t, {}, { config });
  const kept = await jobRow(second, 'heartbeat');
  t.equal(kept.id, before.id, 'the same job, persisted');
  t.equal(kept.repeat_interval, '2 seconds');
  t.ok(Number(kept.next_run_at) >= Number(before.last_run_at), 'its next run is kept');
  t.equal(kept.locked_at, null, 'not left locked by the stopped node');
  let secondRuns = 0;
  second.scheduler.define('heartbeat', async () => void secondRuns++);
  await until('a run on the restarted node', () => secondRuns > 0, 6_000);
  t.pass('the repeating job runs again after the restart');
});

t.test('concurrency limits and priority are honoured', async (t) => {
  const kernel = await bootKernel(t, fast);
  let active = 0;
  let peak = 0;
  let done = 0;
  kernel.scheduler.define(
    'limited',
    async () => {
      peak = Math.max(peak, ++active);
      await new Promise((r) => setTimeout(r, 150));
      active--;
      done++;
    },
    { concurrency: 2 },
  );
  for (let i = 0; i < 6; i++) await kernel.scheduler.now('limited', { i });
  await until('six runs', () => done === 6);
  t.equal(peak, 2, 'never more than the concurrency limit at once');

  const order: number[] = [];
  kernel.scheduler.define('ranked', async ({ data }) => void order.push(data.rank as number), { concurrency: 1 });
  // Same due time, different priorities: the higher priority runs first.
  const due = new Date(Date.now() - 1000);
  const jobs = [];
  for (const [rank, priority] of [[3, -10], [1, 20], [2, 0]] as const) {
    const job = kernel.scheduler.agenda.create('ranked', { rank, __tenant: 'default' });
    job.schedule(due).priority(priority);
    jobs.push(job.save());
  }
  await Promise.all(jobs);
  await until('three ranked runs', () => order.length === 3);
  t.same(order, [1, 2, 3], 'ran by priority');
});

t.test('a failing job is retried with backoff and ends failed with its error kept', async (t) => {
  const kernel = await bootKernel(t, fast);
  const attempts: number[] = [];
  kernel.scheduler.define(
    'flaky',
    async () => {
      attempts.push(Date.now());
      throw new Error('upstream CA answered 503');
    },
    { retry: { retries: 2, delayMs: 300 } },
  );
  await kernel.scheduler.now('flaky', {});
  await until('three attempts', () => attempts.length === 3);
  await until('the job to be marked failed', async () => Number((await jobRow(kernel, 'flaky'))?.fail_count) === 3 && (await jobRow(kernel, 'flaky')).next_run_at === null);
  const row = await jobRow(kernel, 'flaky');
  t.equal(row.fail_reason, 'upstream CA answered 503', 'the error is kept');
  t.ok(row.failed_at, 'failed at a known time');
  const gaps = [attempts[1]! - attempts[0]!, attempts[2]! - attempts[1]!];
  t.ok(gaps[0]! >= 300, `first retry after the backoff delay (${gaps[0]} ms)`);
  t.ok(gaps[1]! >= 600, `backoff grows exponentially (${gaps[1]} ms)`);
  await new Promise((r) => setTimeout(r, 700));
  t.equal(attempts.length, 3, 'no attempt after the limit');
  const state = await kernel.scheduler.agenda.queryJobs({ name: 'flaky' });
  t.equal(state.jobs[0]?.state, 'failed');
});

t.test('graceful stop waits for a running job, within its bound', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 50, stopTimeoutMs: 3000 } });
  let finished = false;
  kernel.scheduler.define('slow', async () => {
    await new Promise((r) => setTimeout(r, 600));
    finished = true;
  });
  await kernel.scheduler.now('slow', {});
  await until('the job to start', async () => (await jobRow(kernel, 'slow'))?.locked_at !== null && (await jobRow(kernel, 'slow'))?.last_run_at !== null);
  await kernel.stop();
  t.ok(finished, 'the running job finished before the stop completed');
});

t.test('past its bound, stop releases the locks of jobs still running', async (t) => {
  const kernel = await bootKernel(t, fast);
  const { Scheduler } = await import('../../../core/scheduler/scheduler.js');
  const { pino } = await import('pino');
  const node = new Scheduler(kernel.db.knex, pino({ level: 'silent' }), { name: 'short-bound', processEvery: 50, defaultLockLifetime: 2_000, stopTimeoutMs: 200 });
  let release!: () => void;
  let started = false;
  const running = new Promise<void>((r) => (release = r));
  node.define('stuck', () => ((started = true), running));
  await node.start();
  await node.now('stuck', {});
  await until('the job to be running', () => started);
  const stopAt = Date.now();
  await node.stop();
  t.ok(Date.now() - stopAt < 1500, 'stop returned after its bound, not after the job');
  const row = await jobRow(kernel, 'stuck');
  t.equal(row.locked_at, null, 'the lock is released for another node');
  t.ok(Number(row.next_run_at) <= Date.now(), 'and the unfinished one-off job is due again');
  release();
  // Let the abandoned run settle before the database closes.
  await new Promise((r) => setTimeout(r, 200));
});

t.test('job names are exact: "Report" and "report" are two jobs on every database', async (t) => {
  const kernel = await bootKernel(t, fast);
  const runs: string[] = [];
  for (const name of ['Report', 'report']) kernel.scheduler.define(name, async () => void runs.push(name));
  await kernel.scheduler.agenda.every('1 second', 'Report');
  await kernel.scheduler.agenda.every('1 second', 'report');
  // (The kernel's own recurring jobs — analytics, checkpoints, triggers — are in the table too.)
  t.equal(Number((await kernel.db.knex('scheduler_jobs').whereRaw('LOWER(name) = ?', ['report']).count({ n: '*' }))[0]!.n), 2, 'two single jobs');
  await until('both to run', () => runs.includes('Report') && runs.includes('report'));
  t.pass('each ran under its own name');
});

t.test('plugins may only use the job names their manifest declares', async (t) => {
  const kernel = await bootKernel(t, fast);
  const facade = kernel.scheduler.facadeFor('vendor-plugin', ['vendor-sync']);
  t.doesNotThrow(() => facade.define('vendor-sync', async () => undefined));
  t.throws(() => facade.define('crl-refresh', async () => undefined), /did not declare job "crl-refresh"/);
});

t.test('once stop has answered, the scheduler sends no statement: the pool can be closed at once', async (t) => {
  // The kernel's own scheduler stays off: every statement on scheduler_jobs here is the node's.
  const kernel = await bootKernel(t, { scheduler: { enabled: false } });
  const { Scheduler } = await import('../../../core/scheduler/scheduler.js');
  const { pino } = await import('pino');
  const node = new Scheduler(kernel.db.knex, pino({ level: 'silent' }), { name: 'many-names', processEvery: 10, defaultLockLifetime: 2_000, stopTimeoutMs: 200 });
  // Many names: each queue filling asks for each of them in turn, so one is nearly always under way. (Before
  // the fix this failed on MariaDB, where each ask waits on the network; on SQLite a filling ends too fast to be
  // caught in the middle.) A statement that reached the pool while it was being destroyed waited there 60 s.
  for (let i = 0; i < 60; i++) node.define(`idle-${i}`, async () => undefined);
  const scanning: unknown[] = [];
  const onQuery = (q: { sql: string }): void => void (/scheduler_jobs/.test(q.sql) && scanning.push(q.sql));
  kernel.db.knex.on('query', onQuery);
  t.teardown(() => void kernel.db.knex.off('query', onQuery));
  await node.start();
  await until('the scheduler is scanning', () => scanning.length > 60);
  await node.stop();
  const atStop = scanning.length;
  await new Promise((r) => setTimeout(r, 300));
  t.same(scanning.slice(atStop), [], 'no statement on scheduler_jobs after stop answered');
});
