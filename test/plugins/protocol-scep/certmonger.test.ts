/**
 * SCEP with certmonger 0.79: its scep-submit helper reads GetCACaps (-c) and GetCACert (-C), and a full
 * enrollment runs through the certmonger daemon on a private D-Bus socket (getcert add-scep-ca, then getcert
 * request with a one-time challenge, waiting for the certificate): AES-256 and the strongest advertised
 * digest, a GET PKIOperation, an X.509 v1 self-signed signer. The certificate verifies with `openssl verify`.
 * Runs on SQLite and MariaDB.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { opensslVerifies, run, scepKernel } from './scep-kernel.js';

const scep = await scepKernel(t);
const url = `${scep.http}/scep/default/pkiclient.exe`;
const SUBMIT = '/usr/lib/certmonger/scep-submit';
// Every client call is bounded: a call that hangs fails its assertion with what it printed, instead of the file
// running into tap's timeout with nothing to say (a MariaDB CI run once did).
const BOUND = { timeout: 30_000 } as const;

t.test('scep-submit -c and -C: capabilities and the CA/RA certificates', async (t) => {
  const caps = await run(SUBMIT, ['-u', url, '-c'], BOUND);
  const listed = caps.stdout.split(/\s+/).filter(Boolean);
  for (const cap of ['AES', 'SHA-256', 'SHA-512', 'POSTPKIOperation', 'Renewal', 'SCEPStandard']) t.ok(listed.includes(cap), `GetCACaps lists ${cap}`);
  const certs = await run(SUBMIT, ['-u', url, '-C'], BOUND);
  t.ok((certs.stdout.match(/BEGIN CERTIFICATE/g) ?? []).length >= 2, 'the RA and the CA certificates');
});

t.test('a full enrollment through the certmonger daemon', async (t) => {
  const d = join(scep.dir, 'certmonger');
  for (const sub of ['requests', 'cas', 'tmp', 'out']) mkdirSync(join(d, sub), { recursive: true });
  const env = { ...process.env, CERTMONGER_REQUESTS_DIR: join(d, 'requests'), CERTMONGER_CAS_DIR: join(d, 'cas'), CERTMONGER_TMPDIR: join(d, 'tmp'), CERTMONGER_PVT_ADDRESS: `unix:path=${join(d, 'cm.sock')}` };
  const daemon = spawn('certmonger', ['-n', '-L', '-P', join(d, 'cm.sock'), '-d', '1'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  daemon.stderr.on('data', (c: Buffer) => (log += c.toString()));
  t.teardown(() => void daemon.kill('SIGTERM'));
  for (let i = 0; i < 50 && !existsSync(join(d, 'cm.sock')); i++) await new Promise((r) => setTimeout(r, 100));
  t.ok(existsSync(join(d, 'cm.sock')), 'the daemon listens on its private socket');
  // The socket file appears before the daemon answers on it: wait until `getcert list` gets an answer.
  let ready = false;
  for (let i = 0; i < 20 && !ready; i++) {
    ready = await run('getcert', ['list'], { env, timeout: 5_000 }).then(
      () => true,
      async () => (await new Promise((r) => setTimeout(r, 250)), false),
    );
  }
  t.ok(ready, `the daemon answers getcert${ready ? '' : `: ${log.slice(-1000)}`}`);
  await run('getcert', ['add-scep-ca', '-c', 'Certwright', '-u', url], { env, ...BOUND });
  const challenge = await scep.challenge('default');
  const key = join(d, 'out', 'k.pem');
  const cert = join(d, 'out', 'c.pem');
  const requested = await run('getcert', ['request', '-c', 'Certwright', '-k', key, '-f', cert, '-N', 'CN=cm1.example', '-L', challenge, '-w', '--wait-timeout', '60'], { env, timeout: 90_000 }).then(
    (r) => r.stdout + r.stderr,
    (e: { stdout?: string; stderr?: string }) => `failed: ${e.stdout ?? ''}${e.stderr ?? ''}`,
  );
  const listed = (await run('getcert', ['list'], { env, ...BOUND })).stdout;
  if (!existsSync(cert)) t.comment(`getcert: ${requested.trim()}\n${listed}\ncertmonger: ${log.slice(-2000)}`);
  t.ok(existsSync(cert), 'the certificate is written');
  t.match(listed, /status: MONITORING/, 'certmonger monitors it');
  t.ok(await opensslVerifies(scep, cert), 'openssl verify: OK');
});
