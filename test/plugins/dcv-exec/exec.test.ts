/**
 * The exec provisioner against programs this test writes: a recorder (a node script that logs its argv and
 * environment to a file and keeps TXT values in a folder per name, additive and idempotent as the contract asks),
 * one that fails and one that hangs with a child of its own. The shared conformance suite runs on the recorder;
 * argv and environment must arrive unmangled (spaces, quotes, `$(...)` and backticks literally), never through
 * a shell; a failure → PermanentError with the program's stderr, cut; a hang → TransientError, the process group
 * killed.
 */
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigurationError, PermanentError, TransientError, type DcvProvisioner } from '@certwright/sdk';
import type { ProvidedServices } from '../../../core/plugins/provided.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';
import { runDcvConformance } from '../dcv-conformance.js';

const kernel = await bootKernel(t);
const provided = kernel.container.resolve('provided') as ProvidedServices;
const factory = provided.dcvProvisioners.get('exec');
if (!factory) throw new Error('the exec provisioner is not registered');
const provisioner = async (name: string, config: Record<string, unknown>): Promise<DcvProvisioner> => factory({ name, config });

const dir = tempDir(t, 'cw-dcv-exec-');
const calls = join(dir, 'calls.jsonl');
const store = join(dir, 'store');
const marker = join(dir, 'marker-must-not-exist');

const recorder = join(dir, 'record-dns');
writeFileSync(
  recorder,
  `#!${process.execPath}
const fs = require('node:fs'), path = require('node:path'), crypto = require('node:crypto');
const [action, fqdn, value] = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ argv: process.argv.slice(2), env: process.env }) + '\\n');
const folder = path.join(${JSON.stringify(store)}, fqdn);
const file = path.join(folder, crypto.createHash('sha256').update(value).digest('hex'));
if (action === 'present') { fs.mkdirSync(folder, { recursive: true }); fs.writeFileSync(file, value); }
else if (action === 'cleanup') fs.rmSync(file, { force: true });
else { process.stderr.write('unknown action ' + action + '\\n'); process.exit(2); }
`,
);
chmodSync(recorder, 0o755);

const failing = join(dir, 'failing-dns');
writeFileSync(failing, `#!/bin/sh\necho "starting $1" \nprintf 'x%.0s' $(seq 1 3000) >&2\necho >&2\necho "API said: zone example.test is locked" >&2\nexit 3\n`);
chmodSync(failing, 0o755);

const pidFile = join(dir, 'hanging.pids');
const hanging = join(dir, 'hanging-dns');
writeFileSync(hanging, `#!/bin/sh\nsleep 300 &\necho "$$ $!" > ${pidFile}\nsleep 300\n`);
chmodSync(hanging, 0o755);

const readTxt = async (fqdn: string): Promise<string[]> => {
  const folder = join(store, fqdn);
  return existsSync(folder) ? readdirSync(folder).map((f) => readFileSync(join(folder, f), 'utf8')) : [];
};
const recorded = (): { argv: string[]; env: Record<string, string> }[] =>
  existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { argv: string[]; env: Record<string, string> }) : [];

t.test('conformance against the recording program', async (t) => {
  t.equal(provided.dcvProvisioners.pluginOf('exec'), 'dcv-exec', 'registered by the dcv-exec plugin');
  const p = await provisioner('exec', { command: recorder });
  await runDcvConformance(t, p, { zone: 'exec.test', readTxt });
});

t.test('argv and environment arrive literally, no shell, no inherited secrets', async (t) => {
  process.env.CERTWRIGHT_TEST_SECRET = 'must-not-leak';
  t.teardown(() => delete process.env.CERTWRIGHT_TEST_SECRET);
  const p = await provisioner('exec-literal', { command: recorder, ttl: 120, environment: { DNS_API_URL: 'https://dns.example/api' } });
  const value = `a value with spaces, "double" and 'single' quotes, $(touch ${marker}), \`touch ${marker}\`; touch ${marker} && echo $HOME \\ *`;
  const before = recorded().length;
  await p.present({ fqdn: '_acme-challenge.literal.exec.test', type: 'TXT', value, zone: 'exec.test' });
  await p.cleanUp({ fqdn: '_acme-challenge.literal.exec.test', type: 'TXT', value, ttl: 30 });
  const [present, cleanup] = recorded().slice(before);
  t.same(present!.argv, ['present', '_acme-challenge.literal.exec.test', value], 'argv: action, fqdn, the value as one argument');
  t.same(cleanup!.argv, ['cleanup', '_acme-challenge.literal.exec.test', value]);
  t.match(present!.env, {
    CERTWRIGHT_DCV_ACTION: 'present',
    CERTWRIGHT_DCV_FQDN: '_acme-challenge.literal.exec.test',
    CERTWRIGHT_DCV_VALUE: value,
    CERTWRIGHT_DCV_ZONE: 'exec.test',
    CERTWRIGHT_DCV_TTL: '120',
    CERTWRIGHT_DCV_TYPE: 'TXT',
    DNS_API_URL: 'https://dns.example/api',
  });
  t.match(cleanup!.env, { CERTWRIGHT_DCV_ACTION: 'cleanup', CERTWRIGHT_DCV_ZONE: '', CERTWRIGHT_DCV_TTL: '30' });
  t.notOk('CERTWRIGHT_TEST_SECRET' in present!.env, "the service's environment is not passed on");
  t.notOk(existsSync(marker), 'nothing in the value was run');
  t.same(await readTxt('_acme-challenge.literal.exec.test'), [], 'cleaned up');
});

t.test('a failing program → PermanentError with the end of its stderr, cut', async (t) => {
  const p = await provisioner('exec-failing', { command: failing });
  const error = await p.present({ fqdn: '_acme-challenge.fail.exec.test', type: 'TXT', value: 'v' }).catch((e: unknown) => e);
  t.type(error, PermanentError);
  const message = (error as Error).message;
  t.match(message, /failing-dns present _acme-challenge\.fail\.exec\.test exited with status 3: /);
  t.match(message, /API said: zone example\.test is locked$/, 'the end of stderr');
  t.ok(message.length < 1300, `cut (${message.length} characters)`);
});

t.test('a hanging program → TransientError at the timeout, its process group killed', async (t) => {
  const p = await provisioner('exec-hanging', { command: hanging, timeoutSeconds: 1 });
  const started = Date.now();
  const error = await p.present({ fqdn: '_acme-challenge.hang.exec.test', type: 'TXT', value: 'v' }).catch((e: unknown) => e);
  t.type(error, TransientError);
  t.match((error as Error).message, /did not finish within 1 s/);
  t.ok(Date.now() - started < 5000, 'returns soon after the timeout, though a child holds its pipes');
  const pids = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
  await new Promise((r) => setTimeout(r, 300));
  for (const pid of pids) {
    // Gone, or a zombie left for a PID 1 that does not reap (containers): either way no longer running.
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
    const state = /\) (\S)/.exec(stat)?.[1];
    t.ok(state === undefined || state === 'Z' || state === 'X', `process ${pid} is no longer running (${state ?? 'gone'})`);
  }
});

t.test('configuration errors: a relative path, a missing program', async (t) => {
  await t.rejects(Promise.resolve().then(() => provisioner('exec-relative', { command: 'record-dns' })), /absolute program path/);
  const p = await provisioner('exec-missing', { command: join(dir, 'no-such-program') });
  const error = await p.present({ fqdn: '_acme-challenge.missing.exec.test', type: 'TXT', value: 'v' }).catch((e: unknown) => e);
  t.type(error, ConfigurationError);
  t.match((error as Error).message, /no such file/);
});
