/**
 * No secret value appears in clear anywhere a user or an operator can look (issue 25 "Must show"): after
 * objects with known secret values are created, every collection GET, the cookbook, both export forms,
 * every event and every log line are grepped for them, and so are the registry's rows at rest.
 */
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';
import { loadFixtures } from './fixtures/index.js';

const capture = new LogCapture();
const kernel = await bootKernel(t, { log: { level: 'debug' } }, { capture });
const admin = caller(kernel, ADMIN_HEADERS);

const privateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const fixtures = await loadFixtures();
const SECRETS: Record<string, string> = {
  password: 'Clear-Password-Value-3b9e',
  token: 'Clear-Token-Value-5c0d',
  keyBody: privateKey.split('\n')[1]!, // one line of the PEM body
};
// Every secret the fixtures carry (PEM keys by their first body line).
for (const [type, fixture] of fixtures) (fixture.clear ?? []).forEach((value, i) => (SECRETS[`${type}#${i}`] = value.replace(/-----[A-Z ]+-----/g, '').trim().slice(0, 64)));

t.before(async () => {
  const objects: [string, Record<string, unknown>][] = [
    ['/api/v1/security/credentials/', { name: 'leak-pw', type: 'password', login: 'svc', password: { value: SECRETS.password } }],
    ['/api/v1/security/credentials/', { name: 'leak-tok', type: 'raw', secret: { value: SECRETS.token } }],
    ['/api/v1/security/credentials/', { name: 'leak-kp', type: 'keypair', store: { value: privateKey } }],
    ['/api/v1/proxy/httpproxies/', { name: 'leak-px', host: 'proxy.example', port: 3128, credentials: 'leak-pw' }],
  ];
  for (const [base, body] of objects) {
    const res = await admin('POST', base, body);
    if (res.statusCode !== 201) throw new Error(`${base}: ${res.body}`);
  }
  // The export fixtures too: an object of every type, with the secrets of each kind (a connector's
  // schema-named settings, a trigger's channel secret…), in reference order.
  for (const type of kernel.configObjects.types()) {
    const fixture = fixtures.get(type.decl.type);
    for (const row of fixture?.rows ?? []) {
      const res = await admin(row.method, row.base, row.body);
      if (res.statusCode >= 300) throw new Error(`fixture ${type.decl.type}: ${res.body}`);
    }
  }
  // A rotation: the new value must not leak either, nor the old one.
  const rotated = await admin('PUT', '/api/v1/security/credentials/', { name: 'leak-tok', type: 'raw', secret: { value: `${SECRETS.token}-2` } });
  if (rotated.statusCode !== 200) throw new Error(rotated.body);
});

const leaks = (text: string): string[] => Object.entries(SECRETS).filter(([, v]) => text.includes(v)).map(([k]) => k);

t.test('no GET of any configuration type answers a secret', async (t) => {
  for (const type of kernel.configObjects.types()) {
    const list = await admin('GET', type.decl.basePath);
    t.equal(list.statusCode, 200, `${type.decl.basePath} lists`);
    t.same(leaks(list.body), [], `${type.decl.type}: no secret in the list`);
    for (const object of list.json() as Record<string, unknown>[]) {
      const one = await admin('GET', `${type.decl.basePath}${encodeURIComponent(String(object[type.key]))}`);
      t.same(leaks(one.body), [], `${type.decl.type}/${String(object[type.key])}: none in the object`);
    }
  }
  t.match((await admin('GET', '/api/v1/security/credentials/leak-pw')).json(), { password: { value: '********' } }, 'answered masked');
});

t.test('the cookbook and both export forms hold none', async (t) => {
  const adoc = await admin('GET', '/api/v1/adoc');
  t.equal(adoc.statusCode, 200);
  t.same(leaks(adoc.body), [], 'cookbook');
  const plain = await admin('POST', '/api/v1/system/configurations/export', {});
  t.equal(plain.statusCode, 200);
  t.same(leaks(plain.body), [], 'export without a passphrase');
  const sealed = await admin('POST', '/api/v1/system/configurations/export', { passphrase: 'a long export passphrase' });
  t.equal(sealed.statusCode, 200);
  t.same(leaks(sealed.body), [], 'export sealed under a passphrase');
  t.match(sealed.body, '$sealed:', 'the sealed form carries them sealed');
});

t.test('no event, log line or stored row holds one', async (t) => {
  const events = await kernel.db.knex('events').select('payload');
  t.ok(events.length > 0);
  t.same(leaks(events.map((e: { payload: string }) => e.payload).join('\n')), [], 'events');
  t.same(leaks(capture.text), [], 'log lines (at debug level)');
  const rows = await kernel.db.knex('config_objects').select('body');
  t.same(leaks(rows.map((r: { body: string }) => r.body).join('\n')), [], 'rows at rest are sealed');
  // The collections that keep their own tables seal theirs too.
  for (const table of ['pki_connectors', 'triggers', 'security_identity_providers']) {
    const stored = await kernel.db.knex(table).select('*');
    t.ok(stored.length > 0, `${table} holds the fixtures' objects`);
    t.same(leaks(JSON.stringify(stored)), [], `${table} rows at rest are sealed`);
  }
});
