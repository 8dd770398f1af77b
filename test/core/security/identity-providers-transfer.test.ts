/**
 * Identity providers through configuration export/import: a provider of a plugin type, its secret field sealed
 * under the passphrase, imported into a fresh instance where it authenticates with the same secret.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';

const FIXTURE = resolve(dirname(fileURLToPath(import.meta.url)), '../../fixtures/identity-test-header');
const BASE = '/api/v1/security/identity/providers/';
const SELF = '/api/v1/security/principals/self';
const SECRET = 'Header-Shared-Secret-Of-The-Test-2d71';
const PASSPHRASE = 'an export passphrase long enough';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('a provider created through its routes is exported, imported into a fresh instance, and authenticates there', async (t) => {
  const capture = new LogCapture();
  const a = await bootKernel(t, { plugins: { paths: [FIXTURE] } }, { capture });
  const adminA = caller(a, ADMIN_HEADERS);
  const created = await adminA('POST', BASE, { name: 'header', type: 'test-header', config: { users: ['hdr-user'], sharedSecret: SECRET } });
  t.equal(created.statusCode, 201, created.body);

  const plain = await adminA('POST', '/api/v1/system/configurations/export', { identityProviders: [{ name: 'header' }, { name: 'local' }] });
  t.same(plain.json().items.identityProviders, [
    { name: 'header', type: 'test-header', enabled: true, config: { users: ['hdr-user'], header: 'x-test-user' } },
    { name: 'local', type: 'local', enabled: true, config: { allowBasic: true } },
  ], 'the portable form: the defaults the type filled in, the secret left out');
  const exported = await adminA('POST', '/api/v1/system/configurations/export', { identityProviders: [{ name: 'header' }, { name: 'local' }], passphrase: PASSPHRASE });
  t.notMatch(exported.body, SECRET, 'sealed, never in clear');
  const sealed = exported.json() as Json;
  t.match(sealed.items.identityProviders[0].config.sharedSecret, /^\$sealed:/);

  const b = await bootKernel(t, { plugins: { paths: [FIXTURE] } }, { capture });
  const adminB = caller(b, ADMIN_HEADERS);
  const headerUser = { host: 'localhost', 'x-test-user': 'hdr-user', 'x-test-secret': SECRET };
  t.equal((await b.app.inject({ url: SELF, headers: headerUser })).statusCode, 401, 'no such provider before the import');
  const dry = await adminB('POST', '/api/v1/system/configurations/import', { ...sealed, passphrase: PASSPHRASE, dryRun: true });
  t.same(dry.json().items.identityProviders, [{ name: 'header', action: 'create' }, { name: 'local', action: 'unchanged' }], 'the first-start `local` is the same');
  const imported = await adminB('POST', '/api/v1/system/configurations/import', { ...sealed, passphrase: PASSPHRASE });
  t.equal(imported.statusCode, 200, imported.body);
  t.same(imported.json().imported, { identityProviders: ['header'] });

  const read = await adminB('GET', `${BASE}header`);
  t.match(read.json(), { name: 'header', type: 'test-header', enabled: true, config: { users: ['hdr-user'], sharedSecret: '********' } }, 'answered by its own route, masked');
  t.equal((await b.app.inject({ url: SELF, headers: headerUser })).statusCode, 200, 'it authenticates with the secret of the first instance');
  t.equal((await b.app.inject({ url: SELF, headers: { ...headerUser, 'x-test-secret': 'wrong' } })).statusCode, 401, 'and with that one only');
  t.same((await b.app.inject({ url: `${BASE}dynamic/enabled`, headers: { host: 'localhost' } })).json(), [{ name: 'header', type: 'test-header' }, { name: 'local', type: 'local' }]);

  const again = await adminB('POST', '/api/v1/system/configurations/import', { ...sealed, passphrase: PASSPHRASE, dryRun: true });
  t.same(again.json().items.identityProviders.map((i: { action: string }) => i.action), ['unchanged', 'unchanged'], 'a second import changes nothing');
  t.notMatch(capture.text, SECRET, 'no log line holds the secret');
  for (const e of await b.db.knex('events').select('payload')) t.notMatch(String(e.payload), SECRET, 'nor any event');
});

t.test('an import that would leave no enabled provider, or names an unknown type, is a conflict', async (t) => {
  const k = await bootKernel(t);
  const admin = caller(k, ADMIN_HEADERS);
  const doc = { info: { version: '1' }, items: { identityProviders: [{ name: 'local', type: 'local', enabled: false, config: { allowBasic: true } }] } };
  const dry = await admin('POST', '/api/v1/system/configurations/import', { ...doc, dryRun: true });
  t.match(dry.json().items.identityProviders, [{ name: 'local', action: 'conflict', reason: /last enabled identity provider/ }]);
  const unknownType = await admin('POST', '/api/v1/system/configurations/import', { info: { version: '1' }, items: { identityProviders: [{ name: 'x', type: 'teleport' }] }, dryRun: true });
  t.match(unknownType.json().items.identityProviders, [{ name: 'x', action: 'conflict', reason: /Unknown identity provider type "teleport"/ }], "the type's plugin validates");
});
