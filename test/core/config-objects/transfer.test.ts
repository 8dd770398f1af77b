/**
 * Configuration export/import (core/config-objects/transfer): a round trip of every registered type
 * between two instances (secrets sealed under a passphrase, never in clear), an exact dry run that writes
 * nothing, all-or-nothing conflicts, malformed documents answered as problems, and per-type rights.
 */
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { SECRETS, x509Cert } from './fixtures/core.js';
import { loadFixtures } from './fixtures/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EXPORT = '/api/v1/system/configurations/export';
const IMPORT = '/api/v1/system/configurations/import';
const PASSPHRASE = 'correct horse battery staple';
const FIXTURES = await loadFixtures();
/** Every secret value of instance A: none may appear in clear in an export, an answer or a log line. */
const CLEAR = [...FIXTURES.values()].flatMap((f) => f.clear ?? []).map((s) => s.replace(/-----[A-Z ]+-----/g, '').trim().slice(0, 64));

const capture = new LogCapture();
const a = await bootKernel(t, {}, { capture });
const adminA = caller(a, ADMIN_HEADERS);
// In reference order: an object's references exist before it.
for (const type of a.configObjects.types()) {
  const fixture = FIXTURES.get(type.decl.type);
  if (!fixture) continue;
  await fixture.prepare?.(a, adminA);
  for (const row of fixture.rows) {
    const res = await adminA(row.method, row.base, row.body);
    if (res.statusCode >= 300) throw new Error(`fixture ${type.decl.type}: ${res.statusCode} ${res.body}`);
  }
}

/** Rows of the registry's table, objects of every type (some keep their own table) and events. */
const counts = async (k: Kernel) => {
  const perType: Record<string, number> = {};
  for (const type of k.configObjects.types()) perType[type.decl.type] = (await k.configObjects.listStored(type.decl.type, 'default')).length;
  return {
    rows: Number((await k.db.knex('config_objects').count({ n: '*' }).first())!.n),
    perType,
    events: Number((await k.db.knex('events').count({ n: '*' }).first())!.n),
  };
};
const noClear = (t: Test, text: string, what: string) => {
  for (const secret of CLEAR) t.notOk(text.includes(secret), `${what}: no secret in clear`);
};
/** The document without what differs between two exports of the same objects (time, salt, ciphertexts). */
const comparable = (doc: Json): Json => ({ ...doc, info: { ...doc.info, createdAt: '<time>' } });
/** Every secret of every object of instance `k`, opened by the registry. */
async function openedSecrets(k: Kernel): Promise<Json> {
  const out: Json = {};
  for (const type of k.configObjects.types()) {
    if (type.secrets.length === 0 && !type.decl.hooks?.secretsOf) continue;
    for (const stored of await k.configObjects.listStored(type.decl.type, 'default')) out[`${type.decl.type}/${stored.name}`] = await k.configObjects.resolve(type.decl.type, 'default', stored.name);
  }
  return out;
}

let plain: Json;
let sealed: Json;

t.test('every registered type has a fixture (a new type needs one here)', async (t) => {
  for (const type of a.configObjects.types()) t.ok(FIXTURES.get(type.decl.type), `${type.decl.type} has fixtures`);
});

t.test('export: the catalogue, the document without secrets, and with secrets sealed', async (t) => {
  const catalogue = await adminA('GET', EXPORT);
  t.equal(catalogue.statusCode, 200);
  const cat = catalogue.json() as Json;
  t.same(Object.keys(cat), a.configObjects.types().map((x) => x.decl.exportKey), 'one key per type, in reference order');
  t.same(cat.credentials, [{ name: 'pw' }, { name: 'raw', description: 'an API key' }, { name: 'ssh' }, { name: 'tls' }], 'names (and descriptions), sorted');
  t.ok(cat.systemConfigurations.some((i: Json) => i.name === 'internal_monitor'), 'system configuration entries named by their key field (type)');

  const res = await adminA('POST', EXPORT, {});
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /application\/json/);
  noClear(t, res.body, 'export without passphrase');
  plain = res.json();
  t.match(plain.info, { version: '1', product: 'certwright', secrets: 'omitted' });
  t.ok(!Number.isNaN(Date.parse(plain.info.createdAt)), 'createdAt is a date');
  t.same(Object.keys(plain.items), a.configObjects.types().map((x) => x.decl.exportKey), 'every type, in reference order');
  for (const [key, list] of Object.entries(plain.items as Record<string, Json[]>)) {
    t.ok(list.length > 0, `${key}: objects exported`);
    t.notOk(JSON.stringify(list).includes('"_id"'), `${key}: no _id`);
  }
  const pw = plain.items.credentials.find((c: Json) => c.name === 'pw');
  t.same(pw, { name: 'pw', type: 'password', login: 'svc', password: {}, targets: ['proxy'] }, 'the secret is left out, the rest kept');
  t.same(plain.items.credentials.map((c: Json) => c.name), ['pw', 'raw', 'ssh', 'tls'], 'sorted by name');
  t.same(plain.items.proxies, [FIXTURES.get('http-proxy')!.rows[0]!.body], 'a proxy exported as it was created');

  const selected = await adminA('POST', EXPORT, { proxies: [{ name: 'corp' }], storages: [{ name: 'db' }] });
  t.same(Object.keys(selected.json().items).sort(), ['proxies', 'storages'], 'a selection exports only its types');
  t.same(selected.json().items.storages.map((s: Json) => s.name), ['db'], 'and only its names');

  const withPassphrase = await adminA('POST', EXPORT, { passphrase: PASSPHRASE });
  t.equal(withPassphrase.statusCode, 200);
  noClear(t, withPassphrase.body, 'export with passphrase');
  sealed = withPassphrase.json();
  t.match(sealed.info.secrets, { kdf: 'pbkdf2-sha256', cipher: 'aes-256-gcm', salt: /^[A-Za-z0-9_-]{22}$/ });
  t.ok(sealed.info.secrets.iterations >= 310_000, 'at least 310,000 PBKDF2 iterations');
  const byName = Object.fromEntries(sealed.items.credentials.map((c: Json) => [c.name, c]));
  t.match(byName.pw.password.value, /^\$sealed:[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'password sealed');
  t.match(byName.raw.secret.value, /^\$sealed:/, 'raw secret sealed');
  t.match(byName.tls.store.value, /^\$sealed:/, 'x509 private key sealed');
  t.equal(byName.tls.store.certificate, x509Cert, 'the certificate is not a secret');
  t.match(byName.ssh.store.value, /^\$sealed:/, 'keypair private key sealed');
});

t.test('import into a fresh instance: an exact dry run that writes nothing, then the round trip', async (t) => {
  const b = await bootKernel(t);
  const adminB = caller(b, ADMIN_HEADERS);
  const before = await counts(b);

  const dry = await adminB('POST', IMPORT, { ...sealed, dryRun: true, passphrase: PASSPHRASE });
  t.equal(dry.statusCode, 200, dry.body);
  const report = dry.json() as Json;
  t.match(report, { dryRun: true, applied: false, imported: {} });
  noClear(t, dry.body, 'the dry run report');
  const actions = (key: string) => Object.fromEntries((report.items[key] as Json[]).map((i) => [i.name, i.changed ? `${i.action} ${i.changed.join(',')}` : i.action]));
  t.same(actions('credentials'), { pw: 'create', raw: 'create', ssh: 'create', tls: 'create' });
  t.same(actions('proxies'), { corp: 'create' }, 'a proxy referencing a credential created earlier in the same document');
  t.same(actions('termsOfServices'), { tos: 'create' });
  t.same(actions('storages'), { db: 'create', default: 'unchanged', reports: 'create' }, 'the bootstrapped default storage is unchanged');
  t.same(
    actions('systemConfigurations'),
    { interface_customization: 'update announcements,headerStart', internal_monitor: 'update cron', license: 'unchanged', storage: 'update archiveStorage,magicLinkReportStorage' },
    'bootstrapped entries: updated with the changed fields, or unchanged',
  );
  if (b.configObjects.get('password-policy')) t.equal(actions('passwordPolicies').strong, 'create');
  t.same(await counts(b), before, 'the dry run wrote no object and no event');
  t.equal(await b.configObjects.resolve('credential', 'default', 'pw'), null, 'nothing created');

  const real = await adminB('POST', IMPORT, { ...sealed, passphrase: PASSPHRASE });
  t.equal(real.statusCode, 200, real.body);
  const result = real.json() as Json;
  t.match(result, { dryRun: false, applied: true });
  t.same(result.items, report.items, 'the import did what the dry run said');
  t.same(result.imported.credentials, ['pw', 'raw', 'ssh', 'tls']);
  t.same(result.imported.storages, ['db', 'reports'], 'unchanged objects are not imported');
  t.same(result.imported.systemConfigurations, ['interface_customization', 'internal_monitor', 'storage']);

  const events = await b.db.knex('events').where({ code: 'CONFIG-CREATED', principal: 'administrator' });
  t.same(events.map((e: Json) => `${e.object_type}/${e.object_id}`).filter((l: string) => l.startsWith('credential/')).sort(), ['credential/pw', 'credential/raw', 'credential/ssh', 'credential/tls'], 'CONFIG-CREATED events name the importer');
  for (const e of await b.db.knex('events').select('payload')) noClear(t, String(e.payload), 'event payload');

  // The round trip: B's export is A's (apart from its time), and every secret opens to the same value.
  t.same(comparable((await adminB('POST', EXPORT, {})).json()), comparable(plain), 'export of B = export of A');
  const sealedB = (await adminB('POST', EXPORT, { passphrase: PASSPHRASE })).json() as Json;
  t.same(Object.keys(sealedB.items), Object.keys(sealed.items));
  t.same(await openedSecrets(b), await openedSecrets(a), 'every secret of B opens to the value of A');
  t.same((await openedSecrets(a))['credential/pw'].password.value, SECRETS.password, 'the comparison is of real values');

  // Importing the same document again changes nothing.
  const again = (await adminB('POST', IMPORT, { ...sealed, passphrase: PASSPHRASE, dryRun: true })).json() as Json;
  t.ok(Object.values(again.items as Record<string, Json[]>).every((list) => list.every((i) => i.action === 'unchanged')), 'a second import: every object unchanged');
  // A document without secrets keeps the current ones.
  const keep = await adminB('POST', IMPORT, plain);
  t.equal(keep.statusCode, 200, keep.body);
  t.same(keep.json().imported, {}, 'secrets left out are not a change');
  t.equal(((await b.configObjects.resolve('credential', 'default', 'raw')) as Json).secret.value, SECRETS.raw, 'and are kept');
});

t.test('conflicts: named in the dry run; the import refuses them all or nothing', async (t) => {
  const c = await bootKernel(t);
  const adminC = caller(c, ADMIN_HEADERS);
  const doc: Json = structuredClone(sealed);
  doc.items.proxies = [
    ...doc.items.proxies,
    { name: 'bad-port', host: 'proxy.example', port: 70000 },
    { name: 'ghost', host: 'proxy.example', port: 3128, credentials: 'nowhere' },
  ];
  const before = await counts(c);

  const wrong = await adminC('POST', IMPORT, { ...doc, dryRun: true, passphrase: 'not the passphrase at all' });
  t.equal(wrong.statusCode, 200, wrong.body);
  const items = wrong.json().items as Json;
  const reason = (key: string, name: string) => (items[key] as Json[]).find((i) => i.name === name);
  for (const name of ['pw', 'raw', 'ssh', 'tls']) t.match(reason('credentials', name), { action: 'conflict', reason: /cannot be opened \(wrong passphrase/ }, `credential ${name}: wrong passphrase`);
  t.match(reason('proxies', 'bad-port'), { action: 'conflict', reason: /^port: / }, 'an invalid object: the registry\'s message');
  t.match(reason('proxies', 'ghost'), { action: 'conflict', reason: 'credentials: no credential is named "nowhere"' }, 'a reference to nothing');
  t.match(reason('proxies', 'corp'), { action: 'conflict', reason: 'credentials: no credential is named "pw"' }, 'a reference to an object that cannot be imported');
  t.match(reason('termsOfServices', 'tos'), { action: 'create' }, 'valid objects are reported as they would be');
  noClear(t, wrong.body, 'the conflict report');

  const noPassphrase = (await adminC('POST', IMPORT, { ...doc, dryRun: true })).json() as Json;
  t.match(noPassphrase.items.credentials[0], { action: 'conflict', reason: /passphrase is needed/ }, 'sealed secrets without a passphrase');

  const refused = await adminC('POST', IMPORT, { ...doc, passphrase: 'not the passphrase at all' });
  t.equal(refused.statusCode, 400);
  t.match(refused.headers['content-type'], /problem\+json/);
  const problem = refused.json() as Json;
  t.equal(problem.error, 'CONFIG-005');
  t.match(problem.message, /cannot be imported/);
  t.same(problem.items, items, 'the refusal carries the report');
  t.same(await counts(c), before, 'nothing written: no object, no event');
  t.equal(await c.configObjects.resolve('terms-of-service', 'default', 'tos'), null, 'not even the valid objects');

  // A caller that may read but not write.
  const reader = await createPrincipal(c, 'reader', { permissions: [{ value: 'configuration:*:read' }, { value: 'configuration:system:write' }] });
  const asReader = caller(c, reader.headers);
  const readOnly = (await asReader('POST', IMPORT, { ...plain, dryRun: true })).json() as Json;
  t.match(readOnly.items.proxies[0], { action: 'conflict', reason: 'requires the permission configuration:proxies:write' });
  t.match(readOnly.items.credentials[0], { action: 'conflict', reason: 'requires the permission configuration:credentials:write' });
  t.match(readOnly.items.termsOfServices[0], { action: 'create' }, 'types it may write are not conflicts');
  const readerRefused = await asReader('POST', IMPORT, plain);
  t.equal(readerRefused.statusCode, 400);
  t.equal(readerRefused.json().error, 'CONFIG-005');
  t.same(await counts(c), before, 'nothing written');
});

t.test('malformed documents and selections: 400 problems, never a 500', async (t) => {
  const bad = async (method: 'POST', url: string, body: unknown, code: string, message?: RegExp) => {
    const res = await adminA(method, url, body);
    t.equal(res.statusCode, 400, `${JSON.stringify(body).slice(0, 60)} → 400`);
    t.match(res.headers['content-type'], /problem\+json/);
    t.equal(res.json().error, code);
    if (message) t.match(res.json().message, message);
  };
  await bad('POST', IMPORT, '{"info": ', 'HTTP-002');
  await bad('POST', IMPORT, [plain], 'CONFIG-002', /JSON object/);
  await bad('POST', IMPORT, { info: { version: '1' }, items: { colours: [] } }, 'CONFIG-002', /items\.colours: is not a known item key/);
  await bad('POST', IMPORT, { ...plain, info: { ...plain.info, version: '3.0.0' } }, 'CONFIG-002', /info\.version: "3\.0\.0"/);
  await bad('POST', IMPORT, { items: {} }, 'CONFIG-002', /info: is required/);
  await bad('POST', IMPORT, { info: { version: '1' }, items: { proxies: { corp: {} } } }, 'CONFIG-002', /items\.proxies: must be array/);
  await bad('POST', IMPORT, { info: { version: '1' }, items: { proxies: [{ host: 'x' }] } }, 'CONFIG-002', /items\.proxies\[0\]\.name: is required/);
  await bad('POST', IMPORT, { info: { version: '1', secrets: { kdf: 'md5' } }, items: {} }, 'CONFIG-002', /info\.secrets/);
  await bad('POST', IMPORT, { info: { version: '1' }, items: {}, dryRun: 'yes' }, 'CONFIG-002', /dryRun/);
  await bad('POST', EXPORT, { colours: [] }, 'CONFIG-002', /colours: is not a known item key/);
  await bad('POST', EXPORT, { passphrase: 'short' }, 'CONFIG-002', /passphrase/);
  await bad('POST', EXPORT, { proxies: [{ name: 'no-such-proxy' }] }, 'CONFIG-002', /no-such-proxy/);
  await bad('POST', EXPORT, 'nope', 'HTTP-002');
  const empty = await adminA('POST', IMPORT, { info: { version: '1' } });
  t.same(empty.json(), { dryRun: false, applied: true, items: {}, imported: {} }, 'an empty document imports nothing');
});

t.test('rights: no auth 401, the catalogue holds only readable types, wrong host 404', async (t) => {
  for (const [method, url] of [['GET', EXPORT], ['POST', EXPORT], ['POST', IMPORT]] as const) {
    const res = await a.app.inject({ method, url, headers: { host: 'localhost', 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{}' } : {}) });
    t.equal(res.statusCode, 401, `${method} ${url}: no auth → 401`);
    const evil = await a.app.inject({ method, url, headers: { host: 'evil.example', 'content-type': 'application/json', ...ADMIN_HEADERS }, ...(method === 'POST' ? { payload: '{}' } : {}) });
    t.equal(evil.statusCode, 404, `${method} ${url}: wrong host → 404`);
  }
  // Open to any authenticated principal, filtered per type: no permission = nothing to see (not a 403).
  const nobody = caller(a, (await createPrincipal(a, 'nobody')).headers);
  t.same((await nobody('GET', EXPORT)).json(), {}, 'no permission: an empty catalogue');
  t.same((await nobody('POST', EXPORT, {})).json().items, {}, 'and an empty export');
  const system = caller(a, (await createPrincipal(a, 'system-reader', { permissions: [{ value: 'configuration:system:read' }] })).headers);
  const systemTypes = a.configObjects.types().filter((x) => x.decl.section === 'system').map((x) => x.decl.exportKey);
  t.same(Object.keys((await system('GET', EXPORT)).json()), systemTypes, 'a system reader sees the system section only');
  const exported = await system('POST', EXPORT, {});
  t.same(Object.keys(exported.json().items), systemTypes);
  const denied = await system('POST', EXPORT, { credentials: [{ name: 'pw' }] });
  t.equal(denied.statusCode, 403, 'selecting a type it may not read → 403');
  t.equal(denied.json().error, 'SEC-PERM-001');
  t.match(denied.json().message, 'configuration:credentials:read');
});

t.test('no secret value in any log line', async (t) => {
  noClear(t, capture.text, 'logs');
  t.notOk(capture.text.includes(PASSPHRASE), 'nor the passphrase');
});
