import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { onMysql } from '../../../helpers/database.js';
import { bootKernel, tempDir } from '../../../helpers/kernel.js';
import { until } from '../../../helpers/until.js';
import { csrFor } from '../../../fixtures/pki-connectors/fake-ca.js';
import { bootFake, createConnector, fakeSlot, moduleOf, recordCompletions, requestId, script, uniqueKey } from './helpers.js';

const WORKER = resolve(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/pki-connectors/crash-worker.ts');
const csr = csrFor('durable.example');

t.test('racing queue passes — in one process, and on MariaDB from a second kernel on the same database — run each item once', async (t) => {
  const a = await bootFake(t, true);
  // SQLite is one node's database: two passes race inside one kernel there.
  const b = onMysql() ? await bootKernel(t, {}, { config: a.config }) : a;
  const completions = await recordCompletions(onMysql() ? [a, b] : [a]);
  const key = uniqueKey('race');
  await createConnector(a, { name: 'race', type: 'fake-ca', configuration: { key, retryAfterSeconds: 0, delayMs: 20 } });
  const N = 24;
  script(key, ...Array<'pending'>(N).fill('pending'), 'issued');
  const ids = Array.from({ length: N }, requestId);
  for (const id of ids) t.match(await moduleOf(a).gateway.issue('default', 'race', { requestId: id, csrPem: csr, profile: 'p' }), { status: 'queued' });

  const ga = moduleOf(a).gateway;
  const gb = moduleOf(b).gateway;
  const attempted = await Promise.all([ga.drain(), gb.drain(), ga.drain(), gb.drain()]);
  t.equal(
    attempted.reduce((x, y) => x + y, 0),
    N,
    `each item attempted once across the passes (${attempted.join(' + ')})`,
  );
  const done = await completions();
  t.equal(done.length, N);
  t.same(new Set(done.map((c) => c.requestId)), new Set(ids));
  const polls = fakeSlot(key).calls.filter((c) => c.op === 'poll');
  t.equal(polls.length, N, 'the connector was polled once per item');
  t.equal(new Set(polls.map((c) => c.pollToken)).size, N);
  t.equal(((await a.db.knex('pki_queue_items').count({ n: '*' }).first()) as { n: number }).n, 0);
});

t.test('a crash between the answer and the completion loses nothing: the lease ends, the job finishes the item once', async (t) => {
  const first = await bootFake(t, false, { pki: { queue: { pollEveryMs: 300, leaseMs: 1500 }, bootstrap: { localCa: false, keyType: 'ec-secp256r1' } } });
  await recordCompletions([first]);
  const key = uniqueKey('crash');
  await createConnector(first, { name: 'crashy', type: 'fake-ca', configuration: { key } });
  const config = first.config;
  await first.stop();

  const id = requestId();
  const configFile = join(tempDir(t), 'config.json');
  writeFileSync(configFile, JSON.stringify({ ...config, scheduler: { ...config.scheduler, enabled: false } }));
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, CONFIG_FILE: configFile, CONNECTOR: 'crashy', REQUEST_ID: id, CERTWRIGHT_FAULT: 'pki-after-connector-answer' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  t.equal(exit.signal, 'SIGKILL', `the worker died at the fault point (${out.trim()})`);
  t.match(out, /calling/);
  t.notMatch(out, /answered/);

  // The second node: its job takes the item over once the lease ended.
  const second = await bootKernel(t, {}, { config });
  const stranded = (await second.db.knex('pki_queue_items').where({ request_id: id }).first()) as { state: string; attempts: number } | undefined;
  t.match(stranded, { state: 'running', attempts: 1 }, 'the item is still there, held by the dead attempt');
  const completions = await recordCompletions([second]);
  t.equal((await completions()).length, 0, 'nothing was recorded by the dead node');
  // Normally within a second or two (lease end, then the next 300 ms run); the bound is for a loaded CI machine,
  // where one MariaDB run took longer than 15 s (the property is that it completes, once).
  await until('the job completes the stranded item', async () => (await completions()).length === 1, 60_000);
  t.match(await completions(), [{ requestId: id, outcome: { status: 'issued', certificatePem: /BEGIN CERTIFICATE/ } }]);
  t.equal(await moduleOf(second).gateway.queueState('default', id), null);
  t.same(
    fakeSlot(key).calls.filter((c) => c.op === 'issue').map((c) => c.requestId),
    [id],
    'called again with the same request id (connectors deduplicate on it)',
  );
});
