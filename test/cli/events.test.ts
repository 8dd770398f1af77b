import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { Kernel } from '../../core/kernel.js';
import { bootKernel, tempDir } from '../helpers/kernel.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/certwright.js');

const run = (args: string[], env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });

/** A kernel with `count` events; the CLI's environment points at the same database and data dir (master key). */
async function setup(t: Test, count: number): Promise<{ kernel: Kernel; env: NodeJS.ProcessEnv; dir: string }> {
  const kernel = await bootKernel(t, { events: { checkpoint: { everyEvents: 1000, everyMinutes: 60 } } });
  for (let i = 1; i <= count; i++) await kernel.events.append({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success', objectType: 'certificate', objectId: `c${i}`, payload: { n: i } });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CERTWRIGHT_DATA_DIR: kernel.config.dataDir, LOG_LEVEL: 'warn' };
  if (kernel.config.database.url) env.DATABASE_URL = kernel.config.database.url;
  return { kernel, env, dir: tempDir(t) };
}

t.test('events export writes a bundle that events verify accepts', async (t) => {
  const { kernel, env, dir } = await setup(t, 9);
  const file = join(dir, 'bundle.json');
  const exported = run(['events', 'export', '--from', '2', '--to', '7', '--out', file], env);
  t.equal(exported.status, 0, exported.stderr);
  t.match(exported.stdout, /exported 6 events, seq 2\.\.7, 1 checkpoints/);
  const bundle = JSON.parse(readFileSync(file, 'utf8'));
  t.equal(bundle.events.length, 6);

  // Verification needs no database: an empty environment.
  const verified = run(['events', 'verify', file], { PATH: process.env.PATH });
  t.equal(verified.status, 0, verified.stderr);
  const keyId = bundle.keys[0].keyId as string;
  t.equal(verified.stdout.trim(), `OK: 6 events, seq 2..7, 1 checkpoints, key ${keyId} (the bundled key was trusted: pin a known public key with --key <file>)`);

  const keyFile = join(dir, 'events.pub');
  writeFileSync(keyFile, (await kernel.db.knex('event_signing_keys').first()).public_key);
  const pinned = run(['events', 'verify', file, '--key', keyFile], { PATH: process.env.PATH });
  t.equal(pinned.status, 0, pinned.stderr);
  t.match(pinned.stdout, new RegExp(`^OK: 6 events, seq 2\\.\\.7, 1 checkpoints, key ${keyId} \\(pinned by --key\\)`));

  // The whole chain to stdout, with ISO date bounds.
  const all = run(['events', 'export', '--from', '2000-01-01T00:00:00Z', '--to', new Date(Date.now() + 60_000).toISOString()], env);
  t.equal(all.status, 0, all.stderr);
  t.same(JSON.parse(all.stdout).events.map((e: { seq: number }) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.match(all.stderr, /exported 9 events, seq 1\.\.9/);
});

t.test('events verify names the broken event of an edited bundle', async (t) => {
  const { env, dir } = await setup(t, 6);
  const file = join(dir, 'bundle.json');
  t.equal(run(['events', 'export', '--out', file], env).status, 0);
  const original = JSON.parse(readFileSync(file, 'utf8'));
  const edited = (name: string, edit: (b: typeof original) => void) => {
    const b = structuredClone(original);
    edit(b);
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify(b, null, 2));
    return run(['events', 'verify', path], { PATH: process.env.PATH });
  };
  const id = (seq: number) => original.events[seq - 1].id as string;

  let result = edited('payload', (b) => (b.events[2].payload = '{"n":42}'));
  t.equal(result.status, 1);
  t.equal(result.stdout.trim(), `BROKEN at seq 3 (id ${id(3)}): event content does not match its hash`);

  result = edited('removed', (b) => b.events.splice(3, 1));
  t.equal(result.status, 1);
  t.equal(result.stdout.trim(), 'BROKEN at seq 4 (id none): event 4 is missing');

  result = edited('checkpoint', (b) => (b.checkpoints[0].signedAt += 1));
  t.equal(result.status, 1);
  t.equal(result.stdout.trim(), `BROKEN at seq 6 (id ${id(6)}): checkpoint 6 has an invalid signature`);

  const garbage = join(dir, 'garbage.json');
  writeFileSync(garbage, '{"not": "a bundle"}');
  result = run(['events', 'verify', garbage], { PATH: process.env.PATH });
  t.equal(result.status, 2, 'not a bundle');
  t.match(result.stderr, /not a proof bundle/);
  result = run(['events', 'verify', file, '--key', garbage], { PATH: process.env.PATH });
  t.equal(result.status, 2, 'not a key');
  t.match(result.stderr, /--key/);
});

t.test('events export: bad bounds exit 2, a broken chain exits 1, and neither leaves a file', async (t) => {
  const { kernel, env, dir } = await setup(t, 4);
  const file = join(dir, 'bundle.json');
  let result = run(['events', 'export', '--from', 'last tuesday', '--out', file], env);
  t.equal(result.status, 2);
  t.match(result.stderr, /--from: expected a seq/);
  result = run(['events', 'export', '--to', '99', '--out', file], env);
  t.equal(result.status, 2);
  t.match(result.stderr, /past the chain head \(4\)/);

  await kernel.db.knex('events').where({ seq: 2 }).update({ payload: '{"n":-1}' });
  result = run(['events', 'export', '--out', file], env);
  t.equal(result.status, 1);
  t.match(result.stderr, /BROKEN at seq 2 \(id [0-9a-f]{24}\): event content does not match its hash/);
  t.notOk(existsSync(file) || existsSync(`${file}.partial`), 'no bundle written');
});
