import t from 'tap';
import { QueueThrottle } from '../../../../core/pki/connectors/throttle.js';
import { DEFAULT_QUEUE_LIMITS } from '../../../../core/pki/connectors/model.js';
import { ADMIN_HEADERS } from '../../../helpers/kernel.js';
import { until } from '../../../helpers/until.js';
import { csrFor } from '../../../fixtures/pki-connectors/fake-ca.js';
import { bootFake, createConnector, createQueue, fakeSlot, moduleOf, recordCompletions, requestId, script, uniqueKey } from './helpers.js';

/** Horizon's PKI queue bounds (size, throttleParallelism, throttleDuration, clusterWide) as the gateway enforces them. */

const csr = csrFor('limits.example');
const issue = (kernel: Awaited<ReturnType<typeof bootFake>>, connector: string, id = requestId()) => moduleOf(kernel).gateway.issue('default', connector, { requestId: id, csrPem: csr, profile: 'p' });

t.test('size: a queue holding `size` waiting or running items refuses the next one (PKI-QUEUE-006)', async (t) => {
  const kernel = await bootFake(t, true);
  await createQueue(kernel, { name: 'small', size: 2 });
  const key = uniqueKey('size');
  await createConnector(kernel, { name: 'slow', type: 'fake-ca', queue: 'small', configuration: { key, retryAfterSeconds: 60 } });
  script(key, 'pending');
  const first = requestId();
  t.match(await issue(kernel, 'slow', first), { status: 'queued' });
  t.match(await issue(kernel, 'slow'), { status: 'queued' });
  await t.rejects(issue(kernel, 'slow'), { code: 'PKI-QUEUE-006', status: 503, detail: /"small" holds 2 item\(s\)/ });
  t.match(await issue(kernel, 'slow', first), { status: 'queued' }, 'a request already in the queue is answered, not refused');
  t.equal(((await kernel.db.knex('pki_queue_items').count({ n: '*' }).first()) as { n: number | string }).n, 2);

  // A failed item is done: it no longer takes a place.
  await kernel.db.knex('pki_queue_items').where({ request_id: first }).update({ state: 'failed' });
  t.match(await issue(kernel, 'slow'), { status: 'queued' });
  await t.rejects(issue(kernel, 'slow'), { code: 'PKI-QUEUE-006' });
  // A bigger size takes effect at once on this node.
  await kernel.app.inject({ method: 'PUT', url: '/api/v1/pki/queues/', headers: ADMIN_HEADERS, payload: { name: 'small', size: 3 } });
  t.match(await issue(kernel, 'slow'), { status: 'queued' });
});

t.test('throttleParallelism: at most N connector calls of the queue at once; the job runs the rest', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'one-at-a-time', throttleParallelism: 1 });
  const key = uniqueKey('parallel');
  await createConnector(kernel, { name: 'serial-ca', type: 'fake-ca', queue: 'one-at-a-time', configuration: { key, delayMs: 250 } });
  const results = await Promise.all([issue(kernel, 'serial-ca'), issue(kernel, 'serial-ca'), issue(kernel, 'serial-ca')]);
  t.same(results.map((r) => r.status).sort(), ['issued', 'queued', 'queued'], 'one call at once: the others wait for the job');
  await until('all three issued', async () => (await completions()).length === 3, 15_000);
  const starts = fakeSlot(key).calls.filter((c) => c.op === 'issue').map((c) => c.at);
  t.equal(starts.length, 3, 'one call per item');
  for (let i = 1; i < starts.length; i++) t.ok(starts[i]! - starts[i - 1]! >= 240, `call ${i + 1} started after call ${i} ended (${starts[i]! - starts[i - 1]!} ms)`);
});

t.test('throttleDuration: at most N calls start within each window', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'rated', throttleParallelism: 2, throttleDuration: '1 second' });
  const key = uniqueKey('window');
  await createConnector(kernel, { name: 'rated-ca', type: 'fake-ca', queue: 'rated', configuration: { key } });
  const statuses: string[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await issue(kernel, 'rated-ca')).status);
  t.same(statuses, ['issued', 'issued', 'queued', 'queued', 'queued'], 'two calls in the first second');
  await until('all five issued', async () => (await completions()).length === 5, 15_000);
  const starts = fakeSlot(key).calls.filter((c) => c.op === 'issue').map((c) => c.at);
  t.equal(starts.length, 5);
  for (let i = 2; i < starts.length; i++) t.ok(starts[i]! - starts[i - 2]! >= 990, `call ${i + 1} starts a window after call ${i - 1} (${starts[i]! - starts[i - 2]!} ms)`);
});

t.test('clusterWide: the places are shared through the database; otherwise each node counts its own', async (t) => {
  const kernel = await bootFake(t, true);
  let now = 1_000_000;
  const clock = () => now;
  // Two nodes: two throttles on one database.
  const [a, b] = [new QueueThrottle(kernel.db.knex, clock, () => 5000), new QueueThrottle(kernel.db.knex, clock, () => 5000)];
  const shared = { ...DEFAULT_QUEUE_LIMITS, throttleParallelism: 1, clusterWide: true };
  const first = await a.admit('default', 'q', shared);
  t.ok(first.permit, 'node A takes the one place');
  t.same(await b.admit('default', 'q', shared), { permit: null, retryAt: null }, 'node B waits for a call to end');
  await first.permit!.release();
  const second = await b.admit('default', 'q', shared);
  t.ok(second.permit, 'freed: node B takes it');
  // A node that dies holding a place: it frees when the lease passes.
  now += 5001;
  const third = await a.admit('default', 'q', shared);
  t.ok(third.permit, 'the dead holder lost it at the end of its lease');
  await second.permit!.release();
  t.same(await b.admit('default', 'q', shared), { permit: null, retryAt: null }, "a stale release does not free the new holder's place");
  await third.permit!.release();

  const windowed = { ...shared, throttleDuration: '1 second' };
  const w = await a.admit('default', 'w', windowed);
  await w.permit!.release();
  t.same(await b.admit('default', 'w', windowed), { permit: null, retryAt: now + 1000 }, 'the window holds the place after the call');
  now += 1000;
  t.ok((await b.admit('default', 'w', windowed)).permit, 'taken again once the window has passed');

  const perNode = { ...DEFAULT_QUEUE_LIMITS, throttleParallelism: 1, clusterWide: false };
  t.ok((await a.admit('default', 'n', perNode)).permit);
  t.ok((await b.admit('default', 'n', perNode)).permit, 'per node: each node has its own place');
  t.same(await a.admit('default', 'n', perNode), { permit: null, retryAt: null });

  t.equal(((await kernel.db.knex('pki_queue_slots').where({ queue: 'n' }).count({ n: '*' }).first()) as { n: number | string }).n, 0, 'per-node places are not written');
  await createQueue(kernel, { name: 'gone', throttleParallelism: 1, clusterWide: true });
  await a.admit('default', 'gone', shared);
  await kernel.app.inject({ method: 'DELETE', url: '/api/v1/pki/queues/gone', headers: ADMIN_HEADERS });
  t.equal(((await kernel.db.knex('pki_queue_slots').where({ queue: 'gone' }).count({ n: '*' }).first()) as { n: number | string }).n, 0, "a deleted queue's places go with it");
});

t.test('clusterWide through the gateway: calls of two nodes never overlap', async (t) => {
  const kernel = await bootFake(t, false);
  const completions = await recordCompletions([kernel]);
  await createQueue(kernel, { name: 'cluster', throttleParallelism: 1, clusterWide: true });
  const key = uniqueKey('cluster');
  await createConnector(kernel, { name: 'cluster-ca', type: 'fake-ca', queue: 'cluster', configuration: { key, delayMs: 200 } });
  const results = await Promise.all([issue(kernel, 'cluster-ca'), issue(kernel, 'cluster-ca')]);
  t.same(results.map((r) => r.status).sort(), ['issued', 'queued']);
  await until('both issued', async () => (await completions()).length === 2, 15_000);
  const starts = fakeSlot(key).calls.filter((c) => c.op === 'issue').map((c) => c.at);
  t.ok(starts[1]! - starts[0]! >= 190, `the second call waited for the first (${starts[1]! - starts[0]!} ms)`);
  const slots = (await kernel.db.knex('pki_queue_slots').where({ queue: 'cluster' }).select('slot', 'holder')) as { slot: number; holder: string | null }[];
  t.same(slots.map((s) => [Number(s.slot), s.holder]), [[0, null]], 'one place, free again');
});

t.test("size with the caller's writes: a full queue commits them alone, then refuses", async (t) => {
  const kernel = await bootFake(t, true);
  const knex = kernel.db.knex;
  await knex.schema.createTable('test_limits_writes', (tb) => tb.string('id', 64).primary());
  await createQueue(kernel, { name: 'one', size: 1 });
  const key = uniqueKey('size-with');
  await createConnector(kernel, { name: 'one-ca', type: 'fake-ca', queue: 'one', configuration: { key, retryAfterSeconds: 60 } });
  script(key, 'pending');
  const { gateway } = moduleOf(kernel);
  const write = (id: string) => ({ with: async (trx: import('knex').Knex.Transaction) => void (await trx('test_limits_writes').insert({ id })) });
  const [a, b] = [requestId(), requestId()];
  t.match(await gateway.issue('default', 'one-ca', { requestId: a, csrPem: csr, profile: 'p' }, write(a)), { status: 'queued' });
  await t.rejects(gateway.issue('default', 'one-ca', { requestId: b, csrPem: csr, profile: 'p' }, write(b)), { code: 'PKI-QUEUE-006' });
  t.same(((await knex('test_limits_writes').orderBy('id').select('id')) as { id: string }[]).map((r) => r.id), [a, b].sort(), 'the refused request is recorded (the workflow denies it with the reason)');
  t.same(((await knex('pki_queue_items').select('request_id')) as { request_id: string }[]).map((r) => r.request_id), [a], 'no item for it');
});
