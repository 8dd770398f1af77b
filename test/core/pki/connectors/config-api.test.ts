import t from 'tap';
import { ADMIN_HEADERS } from '../../../helpers/kernel.js';
import { createPrincipal } from '../../../helpers/security.js';
import { fakeCa } from '../../../fixtures/pki-connectors/fake-ca.js';
import { bootFake, createConnector, createQueue, fakeSlot, moduleOf, uniqueKey } from './helpers.js';

const URL = '/api/v1/pki/connectors/';

t.test('connectors: create, read, replace, delete; secrets sealed at rest and masked everywhere', async (t) => {
  const kernel = await bootFake(t, true);
  const key = uniqueKey('crud');
  const body = { name: 'fake-one', type: 'fake-ca', description: 'first', configuration: { key, token: 'top-secret-token', auth: { user: 'alice', password: 'nested-secret-pw' } } };
  const created = await createConnector(kernel, body);
  t.match(created, { name: 'fake-one', type: 'fake-ca', enabled: true, queue: 'default', version: 1, description: 'first', createdBy: 'administrator' });
  t.match(created._id, /^[0-9a-f]{24}$/);
  t.same(created.configuration, { key, token: '********', auth: { user: 'alice', password: '********' }, retryAfterSeconds: 0.2, delayMs: 0 }, 'defaults filled in, secrets masked at any depth');

  const get = await kernel.app.inject({ method: 'GET', url: `${URL}fake-one`, headers: ADMIN_HEADERS });
  t.equal(get.statusCode, 200);
  t.equal(get.headers['content-type'], 'application/json');
  t.same(get.json().configuration, created.configuration);
  const list = await kernel.app.inject({ method: 'GET', url: URL, headers: ADMIN_HEADERS });
  t.same(list.json().map((c: { name: string }) => c.name), ['fake-one']);

  // At rest: no clear secret in the row, nor in any event.
  const row = (await kernel.db.knex('pki_connectors').where({ name: 'fake-one' }).first()) as { configuration: string };
  t.notMatch(row.configuration, /top-secret-token|nested-secret-pw/);
  t.match(row.configuration, /\$sealed/);
  const events = (await kernel.db.knex('events').where({ object_id: 'fake-one' }).select('code', 'payload')) as { code: string; payload: string }[];
  t.same(events.map((e) => e.code), ['PKI-CONNECTOR-CREATED']);
  t.notMatch(events.map((e) => e.payload).join(), /top-secret-token|nested-secret-pw/);
  t.match(events[0]!.payload, /\*\*\*\*\*\*\*\*/);

  // The instance gets the secrets in clear.
  const test = await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: { name: 'fake-one' } });
  t.same(test.json(), { ok: true, detail: 'fake: connected as alice' });
  t.match(fakeSlot(key).configs.at(-1), { token: 'top-secret-token', auth: { user: 'alice', password: 'nested-secret-pw' } });

  // PUT: masked secrets sent back keep their value; a new one replaces; null clears.
  const put = await kernel.app.inject({
    method: 'PUT',
    url: URL,
    headers: ADMIN_HEADERS,
    payload: { ...created, description: 'second', configuration: { ...(created.configuration as object), auth: { user: 'bob', password: '********' }, token: null } },
  });
  t.equal(put.statusCode, 200, put.body);
  t.match(put.json(), { version: 2, description: 'second' });
  t.same(put.json().configuration.auth, { user: 'bob', password: '********' });
  t.equal(put.json().configuration.token, undefined, 'null cleared the token');
  await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: { name: 'fake-one' } });
  const latest = fakeSlot(key).configs.at(-1)!;
  t.match(latest, { auth: { user: 'bob', password: 'nested-secret-pw' } }, 'the new version is instantiated with the kept secret');
  t.equal(latest.token, undefined);

  // Disabled: the gateway refuses it (PKI-CONN-003) and exists() says no.
  await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...body, enabled: false } });
  t.equal(await moduleOf(kernel).gateway.exists('default', 'fake-one'), false);
  await t.rejects(moduleOf(kernel).gateway.issue('default', 'fake-one', { requestId: 'a'.repeat(24), csrPem: 'x', profile: 'p' }), { code: 'PKI-CONN-003' });

  const del = await kernel.app.inject({ method: 'DELETE', url: `${URL}fake-one`, headers: ADMIN_HEADERS });
  t.equal(del.statusCode, 204);
  const gone = await kernel.app.inject({ method: 'GET', url: `${URL}fake-one`, headers: ADMIN_HEADERS });
  t.equal(gone.statusCode, 404);
  t.match(gone.json(), { error: 'PKI-CONN-003' });
  const codes = ((await kernel.db.knex('events').where({ object_id: 'fake-one' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);
  t.same(codes, ['PKI-CONNECTOR-CREATED', 'PKI-CONNECTOR-UPDATED', 'PKI-CONNECTOR-UPDATED', 'PKI-CONNECTOR-DELETED']);
});

t.test('connectors: refused input answers specific problems and writes nothing', async (t) => {
  const kernel = await bootFake(t, true);
  const key = uniqueKey('bad');
  const post = (payload: Record<string, unknown>) => kernel.app.inject({ method: 'POST', url: URL, headers: ADMIN_HEADERS, payload });

  const unknownType = await post({ name: 'x', type: 'no-such-type', configuration: {} });
  t.equal(unknownType.statusCode, 400);
  t.match(unknownType.json(), { error: 'PKI-CONN-006', detail: /no-such-type.*fake-ca/ });

  const missingKey = await post({ name: 'x', type: 'fake-ca', configuration: {} });
  t.match(missingKey.json(), { error: 'PKI-CONN-002', status: 400, detail: /configuration.*key/ });
  const extra = await post({ name: 'x', type: 'fake-ca', configuration: { key, nope: 1 } });
  t.match(extra.json(), { error: 'PKI-CONN-002', detail: /nope/ });
  const nested = await post({ name: 'x', type: 'fake-ca', configuration: { key, auth: { user: 5 } } });
  t.match(nested.json(), { error: 'PKI-CONN-002', detail: /configuration\.auth\.user/ });
  const noQueue = await post({ name: 'x', type: 'fake-ca', queue: 'nowhere', configuration: { key } });
  t.match(noQueue.json(), { error: 'PKI-CONN-002', detail: /nowhere/ });
  const schema = await post({ type: 'fake-ca', configuration: { key } });
  t.equal(schema.statusCode, 400);
  t.match(schema.json(), { error: 'PKI-CONN-002', detail: /name/ }, "the schema's refusal is the collection's -002 naming the field");
  t.equal(((await kernel.db.knex('pki_connectors').count({ n: '*' }).first()) as { n: number }).n, 0, 'nothing written');

  await createConnector(kernel, { name: 'x', type: 'fake-plain', configuration: { key } });
  const again = await post({ name: 'x', type: 'fake-ca', configuration: { key } });
  t.match(again.json(), { error: 'PKI-CONN-004', status: 400 });
  const putUnknown = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { name: 'y', type: 'fake-ca', configuration: { key } } });
  t.match(putUnknown.json(), { error: 'PKI-CONN-003', status: 404 });
  const delUnknown = await kernel.app.inject({ method: 'DELETE', url: `${URL}y`, headers: ADMIN_HEADERS });
  t.equal(delUnknown.statusCode, 404);
  const connectUnknown = await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: { name: 'y' } });
  t.match(connectUnknown.json(), { error: 'PKI-CONN-003' });
  const connectBad = await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: {} });
  t.match(connectBad.json(), { error: 'HTTP-003' });
});

t.test('connectors: connect reports failures; materials imports the chain into the CAs once', async (t) => {
  const kernel = await bootFake(t, true);
  await createConnector(kernel, { name: 'down', type: 'fake-ca', configuration: { key: uniqueKey('down') } });
  await createConnector(kernel, { name: 'boom', type: 'fake-ca', configuration: { key: uniqueKey('throws') } });
  const connect = (name: string) => kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: { name } });
  t.same((await connect('down')).json(), { ok: false, detail: 'fake: unreachable' });
  t.same((await connect('boom')).json(), { ok: false, detail: 'fake: connection exploded' });

  const materials = await kernel.app.inject({ method: 'PATCH', url: `${URL}materials`, headers: ADMIN_HEADERS, payload: { name: 'down' } });
  t.equal(materials.statusCode, 200);
  t.same(materials.json(), { chain: [fakeCa().certPem] });
  const cas = async () => (await kernel.app.inject({ method: 'GET', url: '/api/v1/cas/', headers: ADMIN_HEADERS })).json() as { name: string; trusted?: boolean }[];
  t.match(await cas(), [{ name: 'Fake Issuing CA' }]);
  await kernel.app.inject({ method: 'PATCH', url: `${URL}materials`, headers: ADMIN_HEADERS, payload: { name: 'boom' } });
  t.equal((await cas()).length, 1, 'the same CA is not imported twice');
});

t.test('queues: the built-in default, standard set, state, refusals', async (t) => {
  const kernel = await bootFake(t, true);
  const list = await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS });
  t.equal(list.statusCode, 200);
  t.match(list.json(), [{ name: 'default', retries: 10, initialDelaySeconds: 30, maxDelaySeconds: 3600, paused: false, state: { waiting: 0, running: 0, failed: 0, nextAttemptAt: null, lastError: null } }]);

  const created = await createQueue(kernel, { name: 'slow', retries: 3, initialDelaySeconds: 5 });
  t.match(created, { name: 'slow', retries: 3, initialDelaySeconds: 5, maxDelaySeconds: 3600, paused: false });
  const dup = await kernel.app.inject({ method: 'POST', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'slow' } });
  t.match(dup.json(), { error: 'PKI-QUEUE-004' });
  const bad = await kernel.app.inject({ method: 'POST', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'q2', initialDelaySeconds: 100, maxDelaySeconds: 10 } });
  t.match(bad.json(), { error: 'PKI-QUEUE-002' });
  const put = await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'slow', paused: true } });
  t.match(put.json(), { name: 'slow', retries: 3, paused: true });
  const putDefault = await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'default', retries: 4 } });
  t.match(putDefault.json(), { name: 'default', retries: 4 });

  await createConnector(kernel, { name: 'c', type: 'fake-ca', queue: 'slow', configuration: { key: uniqueKey('q') } });
  const inUse = await kernel.app.inject({ method: 'DELETE', url: '/api/v1/pki/queues/slow', headers: ADMIN_HEADERS });
  t.match(inUse.json(), { error: 'PKI-QUEUE-005', message: /pki-connector\/c/, referrers: ['pki-connector/c'] }, 'refused naming every connector on it');
  const delDefault = await kernel.app.inject({ method: 'DELETE', url: '/api/v1/pki/queues/default', headers: ADMIN_HEADERS });
  t.match(delDefault.json(), { error: 'PKI-QUEUE-002' });
  await kernel.app.inject({ method: 'DELETE', url: `${URL}c`, headers: ADMIN_HEADERS });
  t.equal((await kernel.app.inject({ method: 'DELETE', url: '/api/v1/pki/queues/slow', headers: ADMIN_HEADERS })).statusCode, 204);
  t.match((await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/queues/slow', headers: ADMIN_HEADERS })).json(), { error: 'PKI-QUEUE-003' });
  const codes = ((await kernel.db.knex('events').where({ object_type: 'pki-queue' }).orderBy('seq').select('code', 'object_id')) as { code: string; object_id: string }[]).map((e) => `${e.code} ${e.object_id}`);
  t.same(codes, ['PKI-QUEUE-CREATED default', 'PKI-QUEUE-CREATED slow', 'PKI-QUEUE-UPDATED slow', 'PKI-QUEUE-UPDATED default', 'PKI-QUEUE-DELETED slow']);
});

t.test('connectors and queues: read and write permissions', async (t) => {
  const kernel = await bootFake(t, true);
  const reader = await createPrincipal(kernel, 'pki-reader', { permissions: [{ value: 'configuration:pki:read' }] });
  const writer = await createPrincipal(kernel, 'pki-writer', { permissions: [{ value: 'configuration:pki:write' }] });
  const body = { name: 'p', type: 'fake-ca', configuration: { key: uniqueKey('perm') } };
  const denied = await kernel.app.inject({ method: 'POST', url: URL, headers: reader.headers, payload: body });
  t.equal(denied.statusCode, 403);
  t.equal((await kernel.app.inject({ method: 'POST', url: URL, headers: writer.headers, payload: body })).statusCode, 201);
  t.equal((await kernel.app.inject({ method: 'GET', url: URL, headers: reader.headers })).statusCode, 200);
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/queues/', headers: reader.headers })).statusCode, 200);
  t.equal((await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: reader.headers, payload: { name: 'p' } })).statusCode, 403);
});

t.test("connectors: Horizon's form — settings at the top level beside name and type", async (t) => {
  const kernel = await bootFake(t, true);
  const key = uniqueKey('top');
  const post = (payload: Record<string, unknown>) => kernel.app.inject({ method: 'POST', url: URL, headers: ADMIN_HEADERS, payload });
  const created = await post({ name: 'flat', type: 'fake-ca', key, retryAfterSeconds: 3, token: 'flat-secret', auth: { user: 'carol', password: 'flat-pw' } });
  t.equal(created.statusCode, 201, created.body);
  t.same(created.json().configuration, { key, retryAfterSeconds: 3, token: '********', auth: { user: 'carol', password: '********' }, delayMs: 0 }, 'answered under configuration, secrets masked');
  t.equal(created.json().retryAfterSeconds, undefined, 'one copy of each setting: under configuration only');
  const row = (await kernel.db.knex('pki_connectors').where({ name: 'flat' }).first()) as { configuration: string };
  t.notMatch(row.configuration, /flat-secret|flat-pw/, 'top-level secrets are sealed too');

  // GET → change one setting at the top level → PUT everything back: the top-level value wins, secrets kept.
  const current = (await kernel.app.inject({ method: 'GET', url: `${URL}flat`, headers: ADMIN_HEADERS })).json() as Record<string, unknown>;
  const put = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...current, retryAfterSeconds: 7, delayMs: null } });
  t.equal(put.statusCode, 200, put.body);
  t.match(put.json().configuration, { key, retryAfterSeconds: 7, delayMs: 0, token: '********', auth: { user: 'carol', password: '********' } }, 'top-level wins; null puts the default back');
  await kernel.app.inject({ method: 'PATCH', url: `${URL}connect`, headers: ADMIN_HEADERS, payload: { name: 'flat' } });
  t.match(fakeSlot(key).configs.at(-1), { token: 'flat-secret', auth: { password: 'flat-pw' }, retryAfterSeconds: 7 });
  const clearedSecret = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...current, token: null } });
  t.equal(clearedSecret.json().configuration.token, undefined, 'a top-level null clears a secret, as under configuration');

  const unknown = await post({ name: 'typo', type: 'fake-ca', key, retryAfterSecond: 3 });
  t.equal(unknown.statusCode, 400);
  t.match(unknown.json(), { error: 'PKI-CONN-002', detail: /"retryAfterSecond".*fake-ca.*settings: key, retryAfterSeconds/ });
  const bad = await post({ name: 'typo', type: 'fake-ca', key, retryAfterSeconds: -1 });
  t.match(bad.json(), { error: 'PKI-CONN-002', detail: /configuration\.retryAfterSeconds/ });
});

t.test('connectors: Horizon type "integrated" names local-ca; it is answered as sent', async (t) => {
  const kernel = await bootFake(t, true);
  const post = (payload: Record<string, unknown>) => kernel.app.inject({ method: 'POST', url: URL, headers: ADMIN_HEADERS, payload });
  const created = await post({ queue: 'default', name: 'horizon-ca', type: 'integrated', cryptoType: 'legacy', crlLifetime: '2 days', keyType: 'ec-secp384r1' });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'horizon-ca', type: 'integrated', queue: 'default', configuration: { keyType: 'ec-secp384r1', crlValidityHours: 48 } });
  t.equal(created.json().cryptoType, undefined);
  const row = (await kernel.db.knex('pki_connectors').where({ name: 'horizon-ca' }).first()) as { type: string; wire_type: string };
  t.same([row.type, row.wire_type], ['local-ca', 'integrated'], 'stored as the installed type, with the name it was given');
  t.same((await moduleOf(kernel).gateway.caChain('default', 'horizon-ca')).length, 2, 'a working local CA (issuing and root)');

  // Either name updates it; the answer follows the name last written.
  const current = (await kernel.app.inject({ method: 'GET', url: `${URL}horizon-ca`, headers: ADMIN_HEADERS })).json() as Record<string, unknown>;
  t.equal(current.type, 'integrated');
  const viaHorizon = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...current, crlLifetime: '24 hours' } });
  t.match(viaHorizon.json(), { type: 'integrated', version: 2, configuration: { crlValidityHours: 24, keyType: 'ec-secp384r1' } });
  const viaCertwright = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...current, type: 'local-ca' } });
  t.match(viaCertwright.json(), { type: 'local-ca', version: 3 });
  t.same((await moduleOf(kernel).gateway.caChain('default', 'horizon-ca')).length, 2);

  // Horizon fields without a local-ca meaning, and Horizon types with no plugin, are refused with the reason.
  t.match((await post({ name: 'pqc', type: 'integrated', cryptoType: 'pqc' })).json(), { error: 'PKI-CONN-002', detail: /classical keys only/ });
  t.match((await post({ name: 'odd', type: 'integrated', crlLifetime: '90 minutes' })).json(), { error: 'PKI-CONN-002', detail: /whole number of hours/ });
  t.match((await post({ name: 'import', type: 'integrated', caCert: 'PEM', caKey: { value: 'KEY' } })).json(), { error: 'PKI-CONN-002', detail: /"caCert", "caKey".*"local-ca".*Horizon fields of "integrated": cryptoType, crlLifetime/ });
  const digicert = await post({ name: 'dc', type: 'digicert', baseUrl: 'https://www.digicert.com/', apiCredentials: 'k', organizationId: 1 });
  t.equal(digicert.statusCode, 400);
  t.match(digicert.json(), { error: 'PKI-CONN-006', detail: /"digicert" is not a PKI connector type; installed: .*local-ca.*\(Horizon "integrated" = local-ca\)/ });
  const noQueue = await post({ queue: 'nowhere', name: 'q', type: 'integrated' });
  t.match(noQueue.json(), { error: 'PKI-CONN-002', detail: /nowhere/ });
});

t.test("queues: Horizon's bounds — size, throttleParallelism, throttleDuration, clusterWide", async (t) => {
  const kernel = await bootFake(t, true);
  const QUEUES = '/api/v1/pki/queues/';
  const post = (payload: Record<string, unknown>) => kernel.app.inject({ method: 'POST', url: QUEUES, headers: ADMIN_HEADERS, payload });
  const put = (payload: Record<string, unknown>) => kernel.app.inject({ method: 'PUT', url: QUEUES, headers: ADMIN_HEADERS, payload });
  const builtIn = (await kernel.app.inject({ method: 'GET', url: `${QUEUES}default`, headers: ADMIN_HEADERS })).json();
  t.match(builtIn, { name: 'default', size: null, throttleParallelism: null, throttleDuration: null, clusterWide: false }, 'no bound unless set');

  const created = await post({ name: 'bounded', size: 10, clusterWide: true, description: 'Issuance', throttleDuration: '1 second', throttleParallelism: 5 });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'bounded', size: 10, clusterWide: true, description: 'Issuance', throttleDuration: '1 second', throttleParallelism: 5, retries: 10, paused: false });
  const event = (await kernel.db.knex('events').where({ code: 'PKI-QUEUE-CREATED', object_id: 'bounded' }).first('payload')) as { payload: string };
  t.match(JSON.parse(event.payload), { queue: { size: 10, throttleParallelism: 5, throttleDuration: '1 second', clusterWide: true } });

  // PUT: left out keeps, null clears (a duration cannot outlive its parallelism).
  t.match((await put({ name: 'bounded', size: 20 })).json(), { size: 20, throttleParallelism: 5, throttleDuration: '1 second', clusterWide: true });
  t.match((await put({ name: 'bounded', throttleParallelism: null })).json(), { error: 'PKI-QUEUE-002', detail: /throttleDuration needs throttleParallelism/ });
  t.match((await put({ name: 'bounded', throttleParallelism: null, throttleDuration: null, size: null, clusterWide: null })).json(), {
    size: null,
    throttleParallelism: null,
    throttleDuration: null,
    clusterWide: false,
  });

  for (const [body, detail] of [
    [{ name: 'q', size: 0 }, /size must be a whole number from 1/],
    [{ name: 'q', size: 1, throttleParallelism: -2 }, /throttleParallelism must be a whole number from 1/],
    [{ name: 'q', size: 1, throttleParallelism: 1, throttleDuration: 'soon' }, /throttleDuration must be a positive duration/],
    [{ name: 'q', size: 1, throttleParallelism: 1, throttleDuration: '0 seconds' }, /throttleDuration must be a positive duration/],
    [{ name: 'q', size: 1, throttleDuration: '5 seconds' }, /throttleDuration needs throttleParallelism/],
  ] as const) {
    const res = await post(body);
    t.equal(res.statusCode, 400, JSON.stringify(body));
    t.match(res.json(), { error: 'PKI-QUEUE-002', detail }, JSON.stringify(body));
  }
  t.equal((await kernel.app.inject({ method: 'GET', url: `${QUEUES}q`, headers: ADMIN_HEADERS })).statusCode, 404, 'nothing written');
});
