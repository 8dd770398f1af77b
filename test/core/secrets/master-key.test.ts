import t from 'tap';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { keyId, loadMasterKey, MasterKeyError } from '../../../core/secrets/index.js';

const posix = process.platform !== 'win32';

/** A fresh temp dir removed when the test ends (kept out of the repo tree). */
function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cw-master-key-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function refusedMessage(t: { ok(v: unknown, msg: string): boolean }, p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    t.ok(err instanceof MasterKeyError, `MasterKeyError, got ${String(err)}`);
    return err instanceof Error ? err.message : '';
  }
  t.ok(false, 'expected a MasterKeyError');
  return '';
}

t.test('config key: hex and base64 accepted', async (t) => {
  const dataDir = tempDir(t);
  const raw = randomBytes(32);
  for (const text of [
    raw.toString('hex'),
    raw.toString('hex').toUpperCase(),
    raw.toString('base64'),
    raw.toString('base64url'),
    `${raw.toString('base64')}\n`,
  ]) {
    const { key, source } = await loadMasterKey({ fromEnvOrConfig: text, dataDir });
    t.equal(source, 'config');
    t.same(key, raw, `accepted ${JSON.stringify(text.slice(0, 6))}…`);
  }
  t.same(readdirSync(dataDir), [], 'no key file written when configured');
});

t.test('config key: bad values refused without echoing them', async (t) => {
  const dataDir = tempDir(t);
  const short = randomBytes(31);
  const long = randomBytes(33);
  const bad = [
    short.toString('hex'),
    short.toString('base64'),
    short.toString('base64url'),
    long.toString('base64'),
    `${randomBytes(32).toString('hex')}00`,
    'correct horse battery staple',
    'my-master-password',
    `${randomBytes(32).toString('base64')}!`,
  ];
  for (const text of bad) {
    const msg = await refusedMessage(t, loadMasterKey({ fromEnvOrConfig: text, dataDir }));
    t.ok(msg.length > 0, 'has a message');
    t.notOk(msg.includes(text.trim()), `message does not contain the value: ${msg}`);
    t.notOk(msg.includes(text.slice(0, 8)), 'nor a prefix of it');
  }
});

t.test('empty or null config falls back to the key file', async (t) => {
  for (const fromEnvOrConfig of ['', null, undefined]) {
    const dataDir = tempDir(t);
    const { source } = await loadMasterKey({ fromEnvOrConfig, dataDir });
    t.equal(source, 'created');
  }
});

t.test('key file created on first call, reused on the second', async (t) => {
  const dataDir = join(tempDir(t), 'nested', 'data');
  const first = await loadMasterKey({ dataDir });
  t.equal(first.source, 'created');
  t.equal(first.key.length, 32);
  const path = join(dataDir, 'master.key');
  if (posix) t.equal(statSync(path).mode & 0o777, 0o600, 'mode 0600');
  const contents = readFileSync(path, 'utf8');
  t.match(contents, /^[A-Za-z0-9+/]{43}=\n$/, 'base64 + newline');
  t.same(Buffer.from(contents.trim(), 'base64'), first.key);
  t.same(readdirSync(dataDir), ['master.key'], 'no temp files left behind');

  const second = await loadMasterKey({ dataDir });
  t.equal(second.source, 'file');
  t.same(second.key, first.key);
  t.equal(keyId(second.key), keyId(first.key));
});

t.test('group/other readable key file is refused', { skip: !posix && 'POSIX modes only' }, async (t) => {
  const dataDir = tempDir(t);
  await loadMasterKey({ dataDir });
  const path = join(dataDir, 'master.key');
  for (const mode of [0o644, 0o640, 0o604]) {
    chmodSync(path, mode);
    const msg = await refusedMessage(t, loadMasterKey({ dataDir }));
    t.match(msg, 'chmod 600');
    t.match(msg, path);
  }
  chmodSync(path, 0o600);
  t.equal((await loadMasterKey({ dataDir })).source, 'file', 'accepted again after chmod 600');
});

t.test('corrupt key file is refused', async (t) => {
  const dataDir = tempDir(t);
  const path = join(dataDir, 'master.key');
  const key = randomBytes(32).toString('base64');
  for (const contents of ['', '\n', `${key.slice(0, 20)}\n`, `${randomBytes(31).toString('base64')}\n`, 'not a key\n']) {
    writeFileSync(path, contents, { mode: 0o600 });
    chmodSync(path, 0o600);
    const msg = await refusedMessage(t, loadMasterKey({ dataDir }));
    t.match(msg, /corrupt or truncated/);
    if (contents.trim()) t.notOk(msg.includes(contents.trim()), 'contents not echoed');
  }
});

t.test('keyId identifies the key without revealing it', async (t) => {
  const key = randomBytes(32);
  t.match(keyId(key), /^[0-9a-f]{16}$/);
  t.equal(keyId(key), keyId(Buffer.from(key)));
  t.not(keyId(key), keyId(randomBytes(32)));
  t.notOk(key.toString('hex').includes(keyId(key)));
});

t.test('concurrent calls on an empty dir agree on one key', async (t) => {
  const dataDir = join(tempDir(t), 'fresh');
  const results = await Promise.all(Array.from({ length: 8 }, () => loadMasterKey({ dataDir })));
  const ids = new Set(results.map((r) => keyId(r.key)));
  t.equal(ids.size, 1, 'same key everywhere');
  t.equal(results.filter((r) => r.source === 'created').length, 1, 'exactly one creator');
  t.same(readdirSync(dataDir), ['master.key'], 'no temp files left behind');
});

t.test('concurrent processes on an empty dir agree on one key', async (t) => {
  const dataDir = join(tempDir(t), 'fresh');
  const moduleUrl = new URL('../../../core/secrets/master-key.ts', import.meta.url).href;
  const script =
    `const m = await import(${JSON.stringify(moduleUrl)});` +
    `const r = await m.loadMasterKey({ dataDir: ${JSON.stringify(dataDir)} });` +
    `console.log(m.keyId(r.key) + ' ' + r.source);`;
  const run = promisify(execFile);
  const cwd = fileURLToPath(new URL('../../../', import.meta.url));
  const outs = await Promise.all(
    Array.from({ length: 4 }, () =>
      run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd }),
    ),
  );
  const lines = outs.map((o) => o.stdout.trim());
  const ids = new Set(lines.map((l) => l.split(' ')[0]));
  t.equal(ids.size, 1, `same key in every process: ${lines.join(', ')}`);
  t.equal(lines.filter((l) => l.endsWith(' created')).length, 1, 'exactly one creator');
  const fromFile = await loadMasterKey({ dataDir });
  t.ok(ids.has(keyId(fromFile.key)), 'file holds that key');
});
