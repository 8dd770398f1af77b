import t from 'tap';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, uniqueKey } from './fixture.js';

t.test('delivery: a retryable failure is retried with growing delays, then delivered; the result lands on the certificate', async (t) => {
  // Jobs run for real here: the import's event wakes the dispatcher, retries wake the worker.
  const { kernel, runtime } = await bootTriggers(t, { triggers: { delivery: { retries: 3, initialDelayMs: 150, maxDelayMs: 1000, timeoutMs: 2000 } } });
  const key = uniqueKey('flaky');
  await createTrigger(kernel, { name: 'flaky', channel: 'fixture', target: { key, failTimes: 2 }, events: ['imported'] });
  const cert = await importCertificate(kernel, 'flaky-1');
  await until('the delivery succeeded', async () => (await runtime.queue.list('default'))[0]?.status === 'delivered', 15_000);

  const [delivery] = await runtime.queue.list('default');
  t.equal(delivery!.attempts, 3, 'two failures, then a success');
  t.equal(fixtureRecord(key).calls.length, 3);
  const [first, second, third] = delivery!.history;
  t.match(first, { attempt: 1, delivered: false, retryable: true, detail: 'fixture: failure 1' });
  t.match(second, { attempt: 2, delivered: false, retryable: true, detail: 'fixture: failure 2' });
  t.match(third, { attempt: 3, delivered: true, nextAttemptAt: null });
  t.equal(first!.nextAttemptAt! - first!.at, 150, 'first retry after initialDelayMs');
  t.equal(second!.nextAttemptAt! - second!.at, 300, 'second retry after twice that');
  t.ok(second!.at >= first!.nextAttemptAt! && third!.at >= second!.nextAttemptAt!, 'no attempt ran before it was due');

  const got = await kernel.app.inject({ method: 'GET', url: `/api/v1/certificates/${cert._id}`, headers: ADMIN_HEADERS });
  t.match(got.json().certificate.triggerResults, [{ name: 'flaky', event: 'imported', triggerType: 'notification', status: 'success', retryable: false, detail: 'fixture: delivered' }]);
  t.type(got.json().certificate.triggerResults[0].lastExecutionDate, 'number');
});

t.test('delivery: permanent failures, thrown errors, timeouts and exhausted retries end as failure results', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, { triggers: { delivery: { retries: 1, initialDelayMs: 100, maxDelayMs: 100, timeoutMs: 300 } } });
  const keys = { permanent: uniqueKey('permanent'), throws: uniqueKey('throws'), hang: uniqueKey('hang'), ok: uniqueKey('ok') };
  await createTrigger(kernel, { name: 'permanent', channel: 'fixture', target: { key: keys.permanent, permanent: true }, events: ['imported'], query: 'dn contains "bad"' });
  await createTrigger(kernel, { name: 'throws', channel: 'fixture', target: { key: keys.throws, throws: true }, events: ['imported'], query: 'dn contains "bad"' });
  await createTrigger(kernel, { name: 'hang', channel: 'fixture', target: { key: keys.hang, hang: true }, events: ['imported'], query: 'dn contains "slow"' });
  await createTrigger(kernel, { name: 'fine', channel: 'fixture', target: { key: keys.ok }, events: ['imported'], query: 'dn contains "good"' });
  const bad = await importCertificate(kernel, 'bad-1');
  const slow = await importCertificate(kernel, 'slow-1');
  const good = await importCertificate(kernel, 'good-1');
  await until('every delivery is final', async () => {
    const rows = await runtime.queue.list('default');
    return rows.length === 4 && rows.every((r) => r.status === 'delivered' || r.status === 'failed');
  }, 15_000);

  const rows = new Map((await runtime.queue.list('default')).map((r) => [r.triggerName, r]));
  t.match(rows.get('permanent'), { status: 'failed', attempts: 1, lastError: 'fixture: permanent failure' }, 'a permanent failure is not retried');
  t.match(rows.get('throws'), { status: 'failed', attempts: 2, lastError: /fixture channel exploded/ }, 'a thrown error is retried, then fails');
  t.match(rows.get('hang'), { status: 'failed', attempts: 2, lastError: /no answer within 300 ms/ }, 'a send that never answers times out');
  t.match(rows.get('fine'), { status: 'delivered' }, 'the worker survived the others');

  const resultsOf = async (id: string) => (await kernel.app.inject({ method: 'GET', url: `/api/v1/certificates/${id}`, headers: ADMIN_HEADERS })).json().certificate.triggerResults;
  const badResults = (await resultsOf(bad._id)) as { name: string; status: string; retryable: boolean }[];
  t.same(badResults.map((r) => `${r.name} ${r.status} ${r.retryable}`).sort(), ['permanent failure false', 'throws failure true'], 'both results kept, one per trigger');
  t.match(await resultsOf(slow._id), [{ name: 'hang', status: 'failure', retryable: true }]);
  t.match(await resultsOf(good._id), [{ name: 'fine', status: 'success' }]);

  const search = async (query: string) =>
    ((await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers: ADMIN_HEADERS, payload: { query, fields: ['dn'] } })).json().results as { _id: string }[]).map((r) => r._id).sort();
  t.same(await search('trigger.results has failure'), [bad._id, slow._id].sort(), 'HCQL finds the failures');
  t.same(await search('trigger.results has success'), [good._id]);
  t.same(await search('trigger.name equals "hang"'), [slow._id]);
});

t.test('delivery: a deleted trigger cancels what it had queued', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const key = uniqueKey('gone');
  await createTrigger(kernel, { name: 'gone', channel: 'fixture', target: { key }, events: ['imported'] });
  await importCertificate(kernel, 'gone-1');
  await runtime.dispatcher.dispatch();
  await kernel.app.inject({ method: 'DELETE', url: '/api/v1/triggers/gone', headers: ADMIN_HEADERS });
  await runtime.worker.drain(() => false);
  t.match(await runtime.queue.list('default'), [{ status: 'canceled', lastError: 'the trigger was deleted' }]);
  t.equal(fixtureRecord(key).calls.length, 0);
});
