/**
 * PKI connectors and queues on the configuration registry (core/pki/connectors/config-type.ts,
 * queue-config-type.ts): what an administrator made through their routes exports, imports into a fresh
 * instance and works there (the connector's secrets with it, sealed under the passphrase); deletes of a
 * queue or connector something still names are refused naming it.
 */
import t from 'tap';
import { ADMIN_HEADERS } from '../../../helpers/kernel.js';
import { caller } from '../../../helpers/security.js';
import { bootFake, createConnector, createQueue, fakeSlot, uniqueKey } from './helpers.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EXPORT = '/api/v1/system/configurations/export';
const IMPORT = '/api/v1/system/configurations/import';
const PASSPHRASE = 'a long passphrase for the connectors';
const TOKEN = 'Connector-Token-Of-The-Test-93b1';
const PASSWORD = 'Connector-Password-Of-The-Test-0c4e';

t.test('a queue and a connector with secrets: export, import into a fresh instance, the connector works there', async (t) => {
  const a = await bootFake(t, true);
  const key = uniqueKey('transfer');
  await createQueue(a, { name: 'slow', retries: 2, initialDelaySeconds: 5, maxDelaySeconds: 50, throttleParallelism: 1 });
  await createConnector(a, { name: 'fake-one', type: 'fake-ca', queue: 'slow', configuration: { key, token: TOKEN, auth: { user: 'alice', password: PASSWORD } } });

  const exported = await caller(a, ADMIN_HEADERS)('POST', EXPORT, { pkiQueues: [{ name: 'slow' }], pkiConnectors: [{ name: 'fake-one' }], passphrase: PASSPHRASE });
  t.equal(exported.statusCode, 200, exported.body);
  t.notOk(exported.body.includes(TOKEN) || exported.body.includes(PASSWORD), 'no secret in clear in the export');
  const document = exported.json() as Json;
  t.same(document.items.pkiQueues, [
    { name: 'slow', description: null, retries: 2, initialDelaySeconds: 5, maxDelaySeconds: 50, paused: false, size: null, throttleParallelism: 1, throttleDuration: null, clusterWide: false },
  ]);
  const connector = document.items.pkiConnectors[0] as Json;
  t.match(connector, { name: 'fake-one', type: 'fake-ca', description: null, enabled: true, queue: 'slow', configuration: { key, auth: { user: 'alice' }, retryAfterSeconds: 0.2, delayMs: 0 } });
  t.match(connector.configuration.token, /^\$sealed:/, 'secrets sealed under the passphrase');
  t.match(connector.configuration.auth.password, /^\$sealed:/);

  const b = await bootFake(t, true);
  const adminB = caller(b, ADMIN_HEADERS);
  const imported = await adminB('POST', IMPORT, { ...document, passphrase: PASSPHRASE });
  t.equal(imported.statusCode, 200, imported.body);
  t.same(imported.json().imported, { pkiQueues: ['slow'], pkiConnectors: ['fake-one'] });

  const queue = (await adminB('GET', '/api/v1/pki/queues/slow')).json() as Json;
  t.match(queue, { name: 'slow', retries: 2, throttleParallelism: 1, state: { waiting: 0 } }, 'the queue, answered by its own route');
  const got = (await adminB('GET', '/api/v1/pki/connectors/fake-one')).json() as Json;
  t.match(got, { name: 'fake-one', type: 'fake-ca', queue: 'slow', version: 1, configuration: { token: '********', auth: { user: 'alice', password: '********' } } });
  t.match(got, { createdBy: 'administrator', updatedBy: 'administrator' }, 'written by the importer');
  const connect = await adminB('PATCH', '/api/v1/pki/connectors/connect', { name: 'fake-one' });
  t.same(connect.json(), { ok: true, detail: 'fake: connected as alice' }, 'the imported connector works');
  t.match(fakeSlot(key).configs.at(-1), { token: TOKEN, auth: { user: 'alice', password: PASSWORD } }, 'with the secrets of instance A');
  const events = (await b.db.knex('events').whereIn('object_id', ['slow', 'fake-one']).orderBy('seq').select('code', 'principal', 'payload')) as Json[];
  t.same(events.map((e) => `${e.code} ${e.principal}`), ['PKI-QUEUE-CREATED administrator', 'PKI-CONNECTOR-CREATED administrator'], 'their own event codes, naming the importer');
  t.notOk(events.some((e) => String(e.payload).includes(TOKEN)), 'no secret in an event');

  const again = (await adminB('POST', IMPORT, { ...document, passphrase: PASSPHRASE, dryRun: true })).json() as Json;
  t.same([...again.items.pkiQueues, ...again.items.pkiConnectors].map((i: Json) => i.action), ['unchanged', 'unchanged'], 'importing again changes nothing');

  // A changed setting is an update: the next call uses the new configuration (the cached instance is dropped).
  const changed = structuredClone(document);
  changed.items.pkiConnectors[0].configuration.auth.user = 'bob';
  const update = (await adminB('POST', IMPORT, { ...changed, passphrase: PASSPHRASE })).json() as Json;
  t.same(update.items.pkiConnectors, [{ name: 'fake-one', action: 'update', changed: ['configuration'] }]);
  t.same((await adminB('PATCH', '/api/v1/pki/connectors/connect', { name: 'fake-one' })).json(), { ok: true, detail: 'fake: connected as bob' });
});

t.test('import refusals: an unknown type or setting, a missing queue', async (t) => {
  const kernel = await bootFake(t, true);
  const admin = caller(kernel, ADMIN_HEADERS);
  const connectors = [
    { name: 'ghost-type', type: 'no-such-type', configuration: {} },
    { name: 'bad-setting', type: 'fake-ca', configuration: { key: 'k', colour: 'blue' } },
    { name: 'no-queue', type: 'fake-ca', queue: 'nowhere', configuration: { key: 'k' } },
  ];
  const res = await admin('POST', IMPORT, { info: { version: '1' }, items: { pkiConnectors: connectors }, dryRun: true });
  t.equal(res.statusCode, 200, res.body);
  const reasons = Object.fromEntries((res.json().items.pkiConnectors as Json[]).map((i) => [i.name, i.reason]));
  t.match(reasons['ghost-type'], /^type: "no-such-type" is not a PKI connector type; installed: .*fake-ca/);
  t.match(reasons['bad-setting'], /configuration must NOT have additional properties \(colour\)/);
  t.equal(reasons['no-queue'], 'queue: no PKI queue is named "nowhere"');
});

t.test('deletes through the registry: a queue a connector uses, a connector a profile uses, a credential a connector uses', async (t) => {
  const kernel = await bootFake(t, true);
  await createQueue(kernel, { name: 'slow' });
  await createConnector(kernel, { name: 'ca', type: 'fake-ca', queue: 'slow', configuration: { key: uniqueKey('del') } });
  const profile = await caller(kernel, ADMIN_HEADERS)('POST', '/api/v1/certificate/profiles/', { name: 'web', pkiConnector: 'ca' });
  t.equal(profile.statusCode, 201, profile.body);
  const actor = { principal: 'administrator' };

  await t.rejects(kernel.configObjects.remove('pki-queue', 'default', 'slow', actor), { code: 'PKI-QUEUE-005', message: 'The PKI queue "slow" is used by pki-connector/ca' });
  await t.rejects(kernel.configObjects.remove('pki-connector', 'default', 'ca', actor), { code: 'PKI-CONN-005', message: 'The PKI connector "ca" is used by profile/web' });
  await t.rejects(kernel.configObjects.remove('pki-queue', 'default', 'default', actor), { code: 'PKI-QUEUE-002' }, 'the built-in queue stays');

  // A credential a connector's settings name (acme-upstream's eab: {credentials}): its delete names the connector.
  const admin = caller(kernel, ADMIN_HEADERS);
  t.equal((await admin('POST', '/api/v1/security/credentials/', { name: 'eab', type: 'password', login: 'kid-1', password: { value: 'bWFjLWtleQ' }, targets: ['pki'] })).statusCode, 201);
  await createConnector(kernel, { name: 'acme', type: 'acme-upstream', configuration: { directoryUrl: 'https://acme.example/directory', eab: { credentials: 'eab' } } });
  const credential = await admin('DELETE', '/api/v1/security/credentials/eab');
  t.match(credential.json(), { error: 'CREDENTIALS-005', message: 'The credential "eab" is used by pki-connector/acme' });

  // The collection's own routes answer as they did.
  const route = await admin('DELETE', '/api/v1/pki/connectors/ca');
  t.match(route.json(), { error: 'PKI-CONN-005', detail: 'used by the certificate profile(s) "web"' });
});
