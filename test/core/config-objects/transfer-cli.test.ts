/**
 * `certwright config export|import` as child processes: instance A (booted here, the CLI pointed at its
 * database and data dir) exports, a fresh instance B (only ever opened by the CLI) imports.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { freshDatabaseUrl } from '../../helpers/database.js';
import { passphraseFromEnv } from '../../../core/config-objects/transfer/cli.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = join(ROOT, 'bin/certwright.js');
const SECRET = 'Cli-Export-Secret-Of-The-Test-5d21';
const PASSPHRASE = 'a passphrase for the cli test';

const run = (args: string[], env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });

// Each start of the CLI loads the sources through tsx: seconds each, more on a loaded machine.
t.setTimeout(400_000);
const a = await bootKernel(t);
const admin = caller(a, ADMIN_HEADERS);
for (const [base, body] of [
  ['/api/v1/security/credentials/', { name: 'pw', type: 'password', login: 'svc', password: { value: SECRET } }],
  ['/api/v1/proxy/httpproxies/', { name: 'corp', host: 'proxy.example', port: 3128, credentials: 'pw' }],
  ['/api/v1/system/terms-of-services/', { name: 'tos', contents: [{ lang: 'en', value: '# Terms' }] }],
] as const) {
  const res = await admin('POST', base, body);
  if (res.statusCode !== 201) throw new Error(res.body);
}

const envOf = (dataDir: string, url: string | null): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  CERTWRIGHT_DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  CW_PASSPHRASE: PASSPHRASE,
  CW_WRONG: 'not the passphrase at all',
  ...(url ? { DATABASE_URL: url } : {}),
});
const envA = envOf(a.config.dataDir, a.config.database.url);
const withoutTime = (doc: Json): Json => ({ ...doc, info: { ...doc.info, createdAt: '<time>' } });
/** Sealed values differ at each export (fresh salt and IVs): compared by shape only. */
const withoutCiphertexts = (doc: Json): Json => JSON.parse(JSON.stringify(withoutTime(doc)).replace(/"\$sealed:[^"]+"/g, '"<sealed>"').replace(/"salt":"[^"]+"/, '"salt":"<salt>"'));

t.test('config export prints the document: secrets left out, or sealed under --passphrase-env', async (t) => {
  const exported = run(['config', 'export'], envA);
  t.equal(exported.status, 0, 'exit 0', { stderr: exported.stderr });
  t.notMatch(exported.stdout, SECRET, 'no secret in the output');
  const viaHttp = (await admin('POST', '/api/v1/system/configurations/export', {})).json() as Json;
  t.same(withoutTime(JSON.parse(exported.stdout)), withoutTime(viaHttp), 'the document the API exports');

  // Checked before the kernel boots (the command then exits 2): in process, to spare a CLI start.
  t.throws(() => passphraseFromEnv('CW_NOT_SET', {}), /CW_NOT_SET/, 'a passphrase variable that is not set');
  t.throws(() => passphraseFromEnv('CW_SHORT', { CW_SHORT: 'short' }), /at least 12/, 'a short passphrase');
});

t.test('config import into a fresh instance: --dry-run, conflicts exit 1, then the import', async (t) => {
  const sealed = run(['config', 'export', '--types', 'credential,proxies', '--passphrase-env', 'CW_PASSPHRASE'], envA);
  t.equal(sealed.status, 0, 'exit 0', { stderr: sealed.stderr });
  t.notMatch(sealed.stdout, SECRET, 'no secret in clear');
  const document = JSON.parse(sealed.stdout) as Json;
  t.same(Object.keys(document.items), ['credentials', 'proxies'], '--types selects types (by type or export key)');
  t.match(document.items.credentials[0].password.value, /^\$sealed:/);
  const file = join(tempDir(t), 'config.json');
  writeFileSync(file, sealed.stdout);

  const dirB = tempDir(t);
  const urlB = await freshDatabaseUrl(t);
  const envB = envOf(dirB, urlB);
  const dry = run(['config', 'import', file, '--dry-run', '--passphrase-env', 'CW_PASSPHRASE'], envB);
  t.equal(dry.status, 0, 'exit 0', { stderr: dry.stderr });
  t.match(JSON.parse(dry.stdout), { dryRun: true, applied: false, items: { credentials: [{ name: 'pw', action: 'create' }], proxies: [{ name: 'corp', action: 'create' }] } });

  const wrong = run(['config', 'import', file, '--passphrase-env', 'CW_WRONG'], envB);
  t.equal(wrong.status, 1, 'conflicts: exit 1');
  const refused = JSON.parse(wrong.stdout) as Json;
  t.match(refused, { dryRun: false, applied: false, imported: {} });
  t.match(refused.items.credentials[0], { action: 'conflict', reason: /wrong passphrase/ });

  const real = run(['config', 'import', file, '--passphrase-env', 'CW_PASSPHRASE'], envB);
  t.equal(real.status, 0, 'exit 0', { stderr: real.stderr });
  t.match(JSON.parse(real.stdout), { applied: true, imported: { credentials: ['pw'], proxies: ['corp'] } }, 'created: neither the dry run nor the refused import wrote');
  t.notMatch(real.stdout + real.stderr, SECRET, 'no secret in the report');

  // B opened in process: it holds what A exported, the secret included.
  const b = await bootKernel(t, { dataDir: dirB, database: { url: urlB } });
  const back = (await caller(b, ADMIN_HEADERS)('POST', '/api/v1/system/configurations/export', { credentials: [{ name: 'pw' }], proxies: [{ name: 'corp' }], passphrase: PASSPHRASE })).json() as Json;
  t.same(withoutCiphertexts(back), withoutCiphertexts(document), 'B exports what A exported');
  t.equal(((await b.configObjects.resolve('credential', 'default', 'pw')) as Json).password.value, SECRET, 'and its secret opens to the value of A');
  const events = await b.db.knex('events').where({ code: 'CONFIG-CREATED', principal: 'cli' });
  t.same(events.map((e: Json) => e.object_id).sort(), ['corp', 'pw'], 'the CLI acts as principal cli');
});
