import t from 'tap';
import { ADMIN_HEADERS } from '../../../helpers/kernel.js';
import { until } from '../../../helpers/until.js';
import { VERSION_CHECK_MS } from '../../../../core/pki/connectors/instances.js';
import { csrFor, fakeCa } from '../../../fixtures/pki-connectors/fake-ca.js';
import { bootFake, createConnector, createQueue, fakeSlot, moduleOf, recordCompletions, requestId, script, uniqueKey } from './helpers.js';

const csr = csrFor('queue.example');

t.test('issue: a final answer completes at once, in the handler, and leaves no item', async (t) => {
  const kernel = await bootFake(t, true);
  const completions = await recordCompletions([kernel]);
  const key = uniqueKey('direct');
  await createConnector(kernel, { name: 'direct', type: 'fake-ca', configuration: { key } });
  const { gateway } = moduleOf(kernel);
  const id = requestId();
  const result = await gateway.issue('default', 'direct', { requestId: id, csrPem: csr, profile: 'p' });
  t.equal(result.status, 'issued');
  t.match(result, { certificatePem: /BEGIN CERTIFICATE/, chainPem: [/BEGIN CERTIFICATE/] });
  t.match(await completions(), [{ requestId: id, operation: 'issue', outcome: { status: 'issued' } }]);
  t.equal(await gateway.queueState('default', id), null);
  t.equal(fakeSlot(key).calls.filter((c) => c.op === 'issue').length, 1);
  t.match(fakeSlot(key).calls[0], { op: 'issue', requestId: id });

  // The connector learns where Certwright publishes its CRL and OCSP.
  const { config } = kernel;
  t.same(gateway.publicationOf('direct'), {
    crlUrl: `http://${config.server.host}:${config.server.port}/pki/direct/crl`,
    ocspUrl: `http://${config.server.host}:${config.server.port}/pki/direct/ocsp`,
    caIssuersUrl: `http://${config.server.host}:${config.server.port}/pki/direct/ca`,
  });

  script(key, 'rejected');
  const rejectedId = requestId();
  t.same(await gateway.issue('default', 'direct', { requestId: rejectedId, csrPem: csr, profile: 'p' }), { status: 'rejected', reason: 'fake: refused by policy' });
  script(key, 'misconfigured');
  const misconfiguredId = requestId();
  t.match(await gateway.issue('default', 'direct', { requestId: misconfiguredId, csrPem: csr, profile: 'p' }), { status: 'rejected', reason: /misconfigured: fake: bad credentials/ });
  script(key, 'permanent');
  t.match(await gateway.issue('default', 'direct', { requestId: requestId(), csrPem: csr, profile: 'p' }), { status: 'rejected', reason: 'fake: never' });
  t.equal((await completions()).length, 4);
  t.equal(((await kernel.db.knex('pki_queue_items').count({ n: '*' }).first()) as { n: number }).n, 0);

  await t.rejects(gateway.issue('default', 'nope', { requestId: requestId(), csrPem: csr, profile: 'p' }), { code: 'PKI-CONN-003' });
  t.same(await gateway.caChain('default', 'direct'), [fakeCa().certPem]);
});

t.test('pending: the item waits with its poll token; the job polls until issued', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  const key = uniqueKey('pending');
  await createConnector(kernel, { name: 'slow-ca', type: 'fake-ca', configuration: { key, retryAfterSeconds: 0.3 } });
  script(key, 'pending', 'pending-error', 'issued');
  const { gateway } = moduleOf(kernel);
  const id = requestId();
  const before = Date.now();
  const result = await gateway.issue('default', 'slow-ca', { requestId: id, csrPem: csr, profile: 'p' });
  t.equal(result.status, 'queued');
  if (result.status === 'queued') t.ok(result.retryAt >= before + 300 && result.retryAt <= Date.now() + 300, 'retryAt = now + retryAfterSeconds');
  const state = await gateway.queueState('default', id);
  t.match(state, { requestId: id, queue: 'default', connector: 'slow-ca', operation: 'issue', state: 'waiting', attempts: 1 });
  const row = (await kernel.db.knex('pki_queue_items').where({ request_id: id }).first()) as { poll_token: string };
  t.equal(row.poll_token, `poll-${id}`);
  const queues = (await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/queues/default', headers: ADMIN_HEADERS })).json();
  t.match(queues.state, { waiting: 1, running: 0, failed: 0, nextAttemptAt: Number });

  await until('the job completes the request', async () => (await completions()).length === 1, 15_000);
  t.match(await completions(), [{ requestId: id, outcome: { status: 'issued', certificatePem: /BEGIN CERTIFICATE/ } }]);
  t.equal(await gateway.queueState('default', id), null);
  const calls = fakeSlot(key).calls.filter((c) => c.op === 'issue' || c.op === 'poll');
  t.same(
    calls.map((c) => `${c.op}:${c.answered}`),
    ['issue:pending', 'poll:pending-error', 'poll:issued'],
    'polled with its token after the first answer',
  );
  t.ok(calls.slice(1).every((c) => c.pollToken === `poll-${id}`));
});

t.test('transient: retried with the queue backoff, then issued; exhausted retries fail with an event', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'fast', retries: 2, initialDelaySeconds: 1, maxDelaySeconds: 2 });
  const key = uniqueKey('transient');
  await createConnector(kernel, { name: 'flaky', type: 'fake-ca', queue: 'fast', configuration: { key } });
  const { gateway } = moduleOf(kernel);

  script(key, 'transient', 'throws', 'issued');
  const id = requestId();
  const first = await gateway.issue('default', 'flaky', { requestId: id, csrPem: csr, profile: 'p' });
  t.match(first, { status: 'queued', detail: 'fake: CA unavailable' });
  await until('issued after two retries', async () => (await completions()).some((c) => c.requestId === id), 20_000);
  const calls = fakeSlot(key).calls.filter((c) => c.op === 'issue');
  t.same(calls.map((c) => c.answered), ['transient', 'throws', 'issued']);
  const gaps = [calls[1]!.at - calls[0]!.at, calls[2]!.at - calls[1]!.at];
  t.ok(gaps[0]! >= 1000 && gaps[0]! < 1900, `first retry after initialDelaySeconds (${gaps[0]} ms)`);
  t.ok(gaps[1]! >= 2000 && gaps[1]! < 2900, `second retry after twice that, capped at maxDelaySeconds (${gaps[1]} ms)`);

  script(key, 'transient');
  const doomed = requestId();
  await gateway.issue('default', 'flaky', { requestId: doomed, csrPem: csr, profile: 'p' });
  await until('the queue gives up', async () => (await gateway.queueState('default', doomed))?.state === 'failed', 20_000);
  const state = await gateway.queueState('default', doomed);
  t.match(state, { state: 'failed', attempts: 3, lastError: /gave up after 3 attempts: fake: CA unavailable/ });
  t.match((await completions()).find((c) => c.requestId === doomed), { outcome: { status: 'rejected', reason: /gave up after 3 attempts/ } }, 'the request learns it');
  const gaveUp = (await kernel.db.knex('events').where({ code: 'PKI-QUEUE-GAVE-UP' }).select('object_id', 'status', 'payload')) as { object_id: string; status: string; payload: string }[];
  t.equal(gaveUp.length, 1);
  t.match(gaveUp[0], { object_id: doomed, status: 'failure' });
  t.match(JSON.parse(gaveUp[0]!.payload), { queue: 'fast', connector: 'flaky', operation: 'issue', attempts: 3 });
  const q = (await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/queues/fast', headers: ADMIN_HEADERS })).json();
  t.match(q.state, { failed: 1, waiting: 0, lastError: /gave up/ });
  t.equal(fakeSlot(key).calls.filter((c) => c.op === 'issue').length, 6, 'no call after giving up');

  // The same request again: the failed item is replaced by a fresh attempt.
  script(key, 'issued');
  await kernel.db.knex('test_pki_completions').where({ request_id: doomed }).delete();
  t.match(await gateway.issue('default', 'flaky', { requestId: doomed, csrPem: csr, profile: 'p' }), { status: 'issued' });
});

t.test('a paused queue holds its items until it is resumed', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'held', paused: true });
  const key = uniqueKey('paused');
  await createConnector(kernel, { name: 'held-ca', type: 'fake-ca', queue: 'held', configuration: { key } });
  const { gateway } = moduleOf(kernel);
  const id = requestId();
  t.match(await gateway.issue('default', 'held-ca', { requestId: id, csrPem: csr, profile: 'p' }), { status: 'queued' });
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(fakeSlot(key).calls.length, 0, 'the connector is not called while paused');
  t.match(await gateway.queueState('default', id), { state: 'waiting', attempts: 0 });
  await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'held', paused: false } });
  await until('issued once resumed', async () => (await completions()).length === 1, 10_000);
  t.equal(fakeSlot(key).calls.filter((c) => c.op === 'issue').length, 1);
});

t.test('pausing and resuming a queue applies to the next item at once here, within a second from another node', async (t) => {
  const kernel = await bootFake(t, false);
  await createQueue(kernel, { name: 'toggled' });
  const key = uniqueKey('toggled');
  await createConnector(kernel, { name: 'toggled-ca', type: 'fake-ca', queue: 'toggled', configuration: { key } });
  const { gateway } = moduleOf(kernel);
  const issue = async (): Promise<string> => (await gateway.issue('default', 'toggled-ca', { requestId: requestId(), csrPem: csr, profile: 'p' })).status;
  t.equal(await issue(), 'issued', 'running queue: issued at once');
  const put = await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'toggled', paused: true } });
  t.equal(put.statusCode, 200);
  t.equal(await issue(), 'queued', 'paused through this node: the very next item waits');
  await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'toggled', paused: false } });
  t.equal(await issue(), 'issued', 'resumed through this node: the next item is issued at once');
  // Another node pausing it: this node's answer is trusted for VERSION_CHECK_MS, then read again.
  await kernel.db.knex('pki_queues').where({ tenant: 'default', name: 'toggled' }).update({ paused: true });
  await new Promise((r) => setTimeout(r, VERSION_CHECK_MS + 100));
  t.equal(await issue(), 'queued', 'paused elsewhere: seen once the trusted answer is older than VERSION_CHECK_MS');
});

t.test('revoke: final at once, or queued and retried by the job', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'fast', retries: 3, initialDelaySeconds: 1, maxDelaySeconds: 1 });
  const key = uniqueKey('revoke');
  await createConnector(kernel, { name: 'rev', type: 'fake-ca', queue: 'fast', configuration: { key } });
  const { gateway } = moduleOf(kernel);
  const now = requestId();
  t.same(await gateway.revoke('default', 'rev', now, { certificatePem: 'x', serial: '01', reason: 'keyCompromise' }), { status: 'revoked' });
  script(key, 'transient', 'issued');
  const later = requestId();
  t.match(await gateway.revoke('default', 'rev', later, { certificatePem: 'x', serial: '02', reason: 'superseded' }), { status: 'queued' });
  await until('revoked by the job', async () => (await completions()).length === 2, 10_000);
  const done = await completions();
  t.match(done.find((c) => c.requestId === now), { operation: 'revoke', outcome: { status: 'revoked' } });
  t.match(done.find((c) => c.requestId === later), { operation: 'revoke', outcome: { status: 'revoked' } });
  t.same(fakeSlot(key).calls.filter((c) => c.op === 'revoke').map((c) => c.requestId), ['01', '02', '02']);
});
