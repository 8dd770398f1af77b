import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel } from '../../helpers/kernel.js';
import { until as waitUntil } from '../../helpers/until.js';

const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) => waitUntil(what, check, timeoutMs, 50);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const WORKER = join(ROOT, 'test/fixtures/scheduler-worker.ts');


interface Worker {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** A scheduler node in its own process, on the kernel's database. */
function startWorker(t: Test, kernel: Kernel, name: string, env: Record<string, string> = {}): Worker {
  const proc = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: kernel.config.database.url ?? '',
      DATA_DIR: kernel.config.dataDir,
      WORKER: name,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  t.teardown(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, output: () => out, exited };
}

async function probeTable(kernel: Kernel): Promise<void> {
  await kernel.db.knex.schema.createTable('probe_runs', (table) => {
    // A second run of the same job would violate the key, and show up in that worker's output.
    table.string('job_id', 24).primary();
    table.string('worker', 16).notNullable();
    table.bigInteger('at').notNullable();
  });
}

t.test('two processes on one database never run the same job twice', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { enabled: false } });
  await probeTable(kernel);
  const workers = [startWorker(t, kernel, 'w1'), startWorker(t, kernel, 'w2')];
  await until('both workers ready', () => workers.every((w) => w.output().includes('ready')));

  const total = 240;
  const ids = new Set<string>();
  for (let i = 0; i < total; i++) ids.add((await kernel.scheduler.now('probe', { i })).id);
  await until(`${total} runs`, async () => Number((await kernel.db.knex('probe_runs').count({ n: '*' }))[0]!.n) >= total, 60_000);
  await new Promise((r) => setTimeout(r, 500));

  const runs = (await kernel.db.knex('probe_runs').select('job_id', 'worker')) as { job_id: string; worker: string }[];
  t.equal(runs.length, total, `exactly ${total} runs for ${total} jobs`);
  t.ok(runs.every((r) => ids.has(r.job_id)), 'each run is one of the jobs');
  const byWorker = { w1: runs.filter((r) => r.worker === 'w1').length, w2: runs.filter((r) => r.worker === 'w2').length };
  t.ok(byWorker.w1 > 0 && byWorker.w2 > 0, `both nodes shared the work (${byWorker.w1} / ${byWorker.w2})`);
  for (const w of workers) t.notMatch(w.output(), /Duplicate|UNIQUE|unique constraint|ER_DUP/i, 'no worker ran a job another had run');
  const unfinished = await kernel.db.knex('scheduler_jobs').where({ name: 'probe' }).whereNull('last_finished_at').count({ n: '*' });
  t.equal(Number(unfinished[0]!.n), 0, 'every job is recorded finished');
  for (const w of workers) w.proc.kill('SIGTERM');
  t.same(await Promise.all(workers.map((w) => w.exited)), [0, 0], 'workers stop cleanly');
});

t.test('a job whose worker died is run again after its lock lifetime', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { enabled: false } });
  await probeTable(kernel);
  const lockLifetime = 1500;
  const doomed = startWorker(t, kernel, 'doomed', { MODE: 'hang', LOCK_LIFETIME_MS: String(lockLifetime) });
  await until('the doomed worker ready', () => doomed.output().includes('ready'));
  const { id } = await kernel.scheduler.now('probe', {});
  await until('the doomed worker to take the job', () => doomed.output().includes(`taken ${id}`));
  const lockedAt = Number((await kernel.db.knex('scheduler_jobs').where({ id }).first()).locked_at);
  doomed.proc.kill('SIGKILL');
  await doomed.exited;

  const rescuer = startWorker(t, kernel, 'rescuer', { LOCK_LIFETIME_MS: String(lockLifetime) });
  await until('the job to be run by the other worker', async () => Boolean(await kernel.db.knex('probe_runs').where({ job_id: id }).first()), 15_000);
  const run = await kernel.db.knex('probe_runs').where({ job_id: id }).first();
  t.equal(run.worker, 'rescuer');
  t.ok(Number(run.at) >= lockedAt + lockLifetime, `taken over only once the lock expired (${Number(run.at) - lockedAt} ms after locking)`);
  rescuer.proc.kill('SIGTERM');
  t.equal(await rescuer.exited, 0);
});
