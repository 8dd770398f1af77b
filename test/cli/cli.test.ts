import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { freshDatabaseUrl } from '../helpers/database.js';
import { tempDir } from '../helpers/kernel.js';
import { writePlugin, writeProtocolPlugin } from '../helpers/plugins.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/certwright.js');

async function cliEnv(t: Test, extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const url = await freshDatabaseUrl(t);
  // TLS_PORT 0: HTTPS on a port the system picks (the default 9443 would collide between test files).
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CERTWRIGHT_DATA_DIR: tempDir(t), LOG_LEVEL: 'warn', TLS_PORT: '0', ...extra };
  if (url) env.DATABASE_URL = url;
  return env;
}

const run = (args: string[], env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });
}

t.test('a bad configuration value stops the boot with one line naming it', async (t) => {
  const result = run(['serve'], await cliEnv(t, { PORT: 'abc' }));
  t.not(result.status, 0, 'non-zero exit');
  const lines = result.stderr.trim().split('\n');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /PORT/);
  t.match(lines[0], /integer/);
});

t.test('plugins validate names the bad field, and accepts a good plugin', async (t) => {
  const dir = tempDir(t);
  const broken = writePlugin(dir, 'broken', { id: 'Not Valid', kind: 'protocol', version: 'one' }, 'export default {}');
  const bad = run(['plugins', 'validate', broken], await cliEnv(t));
  t.equal(bad.status, 1);
  t.match(bad.stderr, /id: must match pattern/);
  t.match(bad.stderr, /version: must match pattern/);
  t.match(bad.stderr, /capability: is required/, 'a protocol plugin must name its capability');

  const noEntry = writePlugin(dir, 'no-entry', { id: 'no-entry', kind: 'storage', entry: 'missing.ts' }, '');
  const missing = run(['plugins', 'validate', noEntry], await cliEnv(t));
  t.equal(missing.status, 1);
  t.match(missing.stderr, /entry: missing\.ts does not exist/);

  const good = run(['plugins', 'validate', join(ROOT, 'plugins/trigger-log')], await cliEnv(t));
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /ok: trigger-log@1\.0\.0 \(trigger-channel\)/);
});

t.test('plugins list shows the built-in plugins with their state', async (t) => {
  const result = run(['plugins', 'list'], await cliEnv(t));
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, /^ID\s+KIND\s+VERSION\s+STATE/m);
  t.match(result.stdout, /^trigger-log\s+trigger-channel\s+1\.0\.0\s+ready\s+built-in/m);
  t.match(result.stdout, /^identity-local\s+identity-provider\s+1\.0\.0\s+ready\s+built-in/m);
  const json = run(['plugins', 'list', '--json'], await cliEnv(t));
  const listed = JSON.parse(json.stdout) as { id: string; kind: string; state: string }[];
  t.same(
    listed.map((p) => `${p.id} ${p.kind} ${p.state}`).sort(),
    [
      'acme-upstream pki-connector ready',
      'dcv-digicert dcv-provider ready',
      'dcv-dns dcv-provider ready',
      'dcv-exec dcv-provisioner ready',
      'dcv-powerdns dcv-provisioner ready',
      'dcv-rfc2136 dcv-provisioner ready',
      'identity-local identity-provider ready',
      'identity-oidc identity-provider ready',
      'identity-x509 identity-provider ready',
      'local-ca pki-connector ready',
      'protocol-acme protocol ready',
      'protocol-est protocol ready',
      'protocol-mdm protocol ready',
      'protocol-scep protocol ready',
      'trigger-email trigger-channel ready',
      'trigger-log trigger-channel ready',
      'trigger-mattermost trigger-channel ready',
      'trigger-slack trigger-channel ready',
      'trigger-teams trigger-channel ready',
      'trigger-webhook trigger-channel ready',
    ],
  );
});

t.test('migrate applies the migrations and exits', async (t) => {
  const env = await cliEnv(t);
  const result = run(['migrate'], env);
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, /migrations applied/);
  const again = run(['migrate'], env);
  t.equal(again.status, 0, 'idempotent');
});

t.test('SIGTERM: in-flight requests finish, then the process exits 0', async (t) => {
  const plugins = tempDir(t);
  writeProtocolPlugin(plugins, 'webra', `scope.route({ method: 'GET', url: '/fixture/slow', handler: async () => { process.stdout.write('slow request entered\\n'); await new Promise((r) => setTimeout(r, 1500)); return { finished: true }; } });`);
  const configFile = join(tempDir(t), 'config.yaml');
  writeFileSync(configFile, `plugins:\n  paths: ["${plugins}"]\n`);
  const port = await freePort();
  const env = await cliEnv(t, { PORT: String(port), HOST: '127.0.0.1', CERTWRIGHT_CONFIG: configFile, LOG_LEVEL: 'info' });
  const child = spawn(process.execPath, [BIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  t.teardown(() => child.kill('SIGKILL'));

  const base = `http://127.0.0.1:${port}`;
  // Readiness polling, not a timing assertion: a loaded CI machine boots slower.
  const waitFor = async (what: string, check: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 600; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}: ${output}`);
  };
  await waitFor('the service', () => fetch(`${base}/healthz`).then((r) => r.ok, () => false));
  const slow = fetch(`${base}/fixture/slow`, { headers: { host: 'localhost' } });
  // The signal goes once the request is in the handler (a fixed pause lost that race on a loaded machine).
  await waitFor('the slow request to start', () => output.includes('slow request entered'));
  child.kill('SIGTERM');
  const answer = await slow;
  const answeredAt = Date.now();
  t.equal(answer.status, 200, `the in-flight request completed: ${output}`);
  t.same(await answer.json(), { finished: true });
  t.equal(await exited, 0, 'exit code 0');
  // Bounded generously: on a loaded machine the stop itself (plugins, database) takes a moment.
  t.ok(Date.now() - answeredAt < 10_000, `the process exits promptly once the request is done (${Date.now() - answeredAt} ms)`);
  t.match(output, /shutting down/);
  t.match(output, /"msg":"stopped"/);
  await t.rejects(fetch(`${base}/healthz`), 'no longer accepting connections');
});
