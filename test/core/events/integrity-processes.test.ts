import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const WRITER = join(ROOT, 'test/core/events/integrity-append-writer.ts');

/** A writer process on the kernel's database (MariaDB, or the SQLite file in its data dir). */
function startWriter(t: Test, kernel: Kernel, name: string, count: number): { proc: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', WRITER], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: kernel.config.database.url ?? '', DATA_DIR: kernel.config.dataDir, WRITER: name, COUNT: String(count) },
    stdio: ['pipe', 'pipe', 'pipe'],
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

t.test('two processes appending at once keep one valid chain', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 } });
  const count = 150;
  const writers = [startWriter(t, kernel, 'p1', count), startWriter(t, kernel, 'p2', count)];
  await until('both writers ready', () => writers.every((w) => w.output().includes('ready')), 60_000, 50);
  for (const w of writers) w.proc.stdin!.write('go\n');
  // This process appends too: three writers on one chain.
  for (let n = 0; n < 30; n++) await kernel.events.append({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success', payload: { writer: 'kernel', n } });
  for (const w of writers) t.equal(await w.exited, 0, w.output());

  const rows = (await kernel.db.knex('events').orderBy('seq').select('seq', 'payload')) as { seq: number | string; payload: string }[];
  t.same(rows.map((r) => Number(r.seq)), Array.from({ length: 2 * count + 30 }, (_, i) => i + 1), 'seq 1..N without gaps or duplicates');
  const byWriter = new Map<string, number>();
  for (const r of rows) {
    const { writer } = JSON.parse(r.payload) as { writer: string };
    byWriter.set(writer, (byWriter.get(writer) ?? 0) + 1);
  }
  t.same(Object.fromEntries(byWriter), { p1: count, p2: count, kernel: 30 }, "every writer's events are in the chain");
  const interleaved = rows.slice(1).filter((r, i) => JSON.parse(r.payload).writer !== JSON.parse(rows[i]!.payload).writer).length;
  t.ok(interleaved > 2, `the writers did run at once (${interleaved} hand-overs)`);

  const api = caller(kernel, ADMIN_HEADERS);
  const { id } = (await api('GET', '/api/v1/events/integrity/run')).json() as { id: string };
  let run: { id: string; status: string; checked: number } = { id: '', status: 'running', checked: 0 };
  await until('the integrity run to finish', async () => {
    run = (await api('GET', '/api/v1/events/integrity/')).json();
    return run.id === id && run.status !== 'running';
  }, 30_000, 50);
  t.equal(run.status, 'succeeded');
  t.equal(run.checked, 2 * count + 30);
});
