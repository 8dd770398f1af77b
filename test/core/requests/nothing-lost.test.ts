/**
 * "Nothing lost" (issue 7 item 6): a kernel in a child process submits a direct enroll and is killed
 * (SIGKILL, fault point pki-after-connector-answer) after the local CA answered and before the completion
 * transaction. A fresh kernel on the same database, running the PKI queue job, completes the request with
 * exactly one certificate and one CERTIFICATE-ISSUED event. SQLite and, with TEST_DATABASE_URL, MariaDB.
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { bootKernel, testConfig } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CHILD = join(ROOT, 'test/core/requests/crash-child.ts');

t.test('a crash between the connector answer and the database write loses nothing', async (t) => {
  const config = await testConfig(t, { pki: { queue: { leaseMs: 1500, pollEveryMs: 200 }, bootstrap: { localCa: true } }, scheduler: { processEveryMs: 100 } });
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: config.database.url ?? '', DATA_DIR: config.dataDir, CERTWRIGHT_FAULT: 'pki-after-connector-answer', LEASE_MS: '1500' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  t.equal(exit.signal, 'SIGKILL', `the child died at the fault point (${output.slice(0, 2000)})`);
  t.match(output, /submitting/);
  t.notMatch(output, /answered/, 'it never answered');

  const kernel = await bootKernel(t, {}, { config });
  const knex = kernel.db.knex;
  const requests = (await knex('requests').select('id', 'status')) as { id: string; status: string }[];
  t.equal(requests.length, 1, 'the request was written before the connector was called');
  t.equal(requests[0]!.status, 'approved', 'left approved by the crash');
  const id = requests[0]!.id;

  await until(
    'the queue completes the request',
    async () => ((await knex('requests').where({ id }).first('status')) as { status: string }).status === 'completed',
    60_000,
    100,
  );
  const row = (await knex('requests').where({ id }).first('certificate_id')) as { certificate_id: string };
  const certificates = (await knex('inv_certificates').select('id')) as { id: string }[];
  t.equal(certificates.length, 1, 'exactly one certificate');
  t.equal(row.certificate_id, certificates[0]!.id, 'the request names it');
  const issued = await knex('events').where({ code: 'CERTIFICATE-ISSUED' }).count({ n: '*' }).first();
  t.equal(Number((issued as { n: number | string }).n), 1, 'one CERTIFICATE-ISSUED event');
  const completed = await knex('events').where({ code: 'REQUEST-COMPLETED', object_id: id }).count({ n: '*' }).first();
  t.equal(Number((completed as { n: number | string }).n), 1, 'one REQUEST-COMPLETED event');
});
