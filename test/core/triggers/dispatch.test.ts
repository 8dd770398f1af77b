import t from 'tap';
import { Kernel } from '../../../core/kernel.js';
import { triggerRuntimeOf } from '../../../core/triggers/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, runOnce, uniqueKey } from './fixture.js';

const append = (kernel: Kernel, code: string, certificateId: string | null, payload: Record<string, unknown> = {}, objectType = 'certificate') =>
  kernel.events.append({ tenant: 'default', code, module: 'test', status: 'success', objectType: certificateId && objectType === 'certificate' ? 'certificate' : objectType, objectId: objectType === 'certificate' ? certificateId : 'req-1', payload });

t.test('dispatch: event codes, queries, disabled triggers and thresholds decide who is told', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const keys = { all: uniqueKey('all'), web: uniqueKey('web'), off: uniqueKey('off'), week: uniqueKey('week'), request: uniqueKey('request') };
  await createTrigger(kernel, { name: 'all-imports', channel: 'fixture', target: { key: keys.all }, events: ['imported', 'revoked'] });
  await createTrigger(kernel, { name: 'web-only', channel: 'fixture', target: { key: keys.web }, events: ['imported'], query: 'profile equals "web"' });
  await createTrigger(kernel, { name: 'disabled', channel: 'fixture', target: { key: keys.off }, events: ['imported'], enabled: false });
  await createTrigger(kernel, { name: 'week', channel: 'fixture', target: { key: keys.week }, events: ['expiring'], thresholds: [7] });
  await createTrigger(kernel, { name: 'requests', channel: 'fixture', target: { key: keys.request }, events: ['request_pending'], query: 'profile equals "web"' });

  const web = await importCertificate(kernel, 'web-1', { profile: 'web' });
  const other = await importCertificate(kernel, 'other-1', { profile: 'mail' });
  await append(kernel, 'CERTIFICATE-REVOKED', other._id);
  await append(kernel, 'CERTIFICATE-EXPIRING', web._id, { thresholdDays: 30, notAfter: web.notAfter });
  await append(kernel, 'CERTIFICATE-EXPIRING', web._id, { thresholdDays: 7, notAfter: web.notAfter });
  // A request event names its certificate in the payload.
  await append(kernel, 'REQUEST-PENDING', null, { certificateId: web._id }, 'request');
  await append(kernel, 'REQUEST-PENDING', null, { certificateId: other._id }, 'request');
  await append(kernel, 'SOMETHING-ELSE', web._id);
  await runOnce(runtime);

  const seen = (key: string) => fixtureRecord(key).delivered.map((d) => `${d.event.code} ${d.event.certificate?._id === web._id ? 'web' : 'other'}`);
  t.same(seen(keys.all).sort(), ['CERTIFICATE-IMPORTED other', 'CERTIFICATE-IMPORTED web', 'CERTIFICATE-REVOKED other']);
  t.same(seen(keys.web), ['CERTIFICATE-IMPORTED web'], 'the query narrows to the web profile');
  t.same(seen(keys.off), [], 'a disabled trigger is not run');
  t.same(seen(keys.week), ['CERTIFICATE-EXPIRING web'], 'only the threshold the trigger has');
  t.same(seen(keys.request), ['REQUEST-PENDING web'], 'payload.certificateId names the certificate of a request event');

  const delivered = fixtureRecord(keys.week).delivered[0]!.event;
  t.match(delivered, {
    code: 'CERTIFICATE-EXPIRING',
    tenant: 'default',
    objectType: 'certificate',
    objectId: web._id,
    payload: { thresholdDays: 7 },
    trigger: { name: 'week', event: 'expiring', thresholdDays: 7 },
    certificate: { _id: web._id, dn: web.dn, serial: web.serial, notAfter: web.notAfter, revoked: false, profile: 'web', subjectAlternateNames: [{ sanType: 'DNSNAME', value: 'web-1.example' }], labels: [] },
  });
  t.type(delivered.timestamp, 'number');

  // Nothing is delivered twice by later passes.
  await runOnce(runtime);
  t.equal(fixtureRecord(keys.all).calls.length, 3);
  const rows = await runtime.queue.list('default');
  t.ok(rows.every((r) => r.status === 'delivered' && r.attempts === 1), 'every delivery row is delivered after one attempt');
});

t.test('dispatch: a new trigger does not replay older events', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  await importCertificate(kernel, 'before');
  const key = uniqueKey('late');
  await createTrigger(kernel, { name: 'late', channel: 'fixture', target: { key }, events: ['imported'] });
  await importCertificate(kernel, 'after');
  await runOnce(runtime);
  t.same(fixtureRecord(key).delivered.map((d) => d.event.certificate?.dn), ['CN=after,O=Trigger Tests']);
});

t.test('dispatch: dispatchers racing — in one process, and on MariaDB from a second kernel on the same database — queue each delivery once', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  // SQLite is one node's database (better-sqlite3 blocks the thread while it waits for a lock, so two
  // kernels in one process cannot share a file); there the race is between dispatch calls of one kernel.
  const other = onMysql() ? triggerRuntimeOf((await bootKernel(t, {}, { config: kernel.config })).app)! : runtime;
  const key = uniqueKey('race');
  await createTrigger(kernel, { name: 'race', channel: 'fixture', target: { key }, events: ['imported'] });
  for (let i = 0; i < 30; i++) await importCertificate(kernel, `race-${i}`);
  await Promise.all([runtime.dispatcher.dispatch(), runtime.dispatcher.dispatch(), other.dispatcher.dispatch(), other.dispatcher.dispatch()]);
  const rows = await runtime.queue.list('default', { triggerName: 'race' });
  t.equal(rows.length, 30, 'one delivery per event');
  t.equal(new Set(rows.map((r) => r.dedupeKey)).size, 30);
  await Promise.all([runtime.worker.drain(() => false), other.worker.drain(() => false), runtime.worker.drain(() => false)]);
  t.equal(fixtureRecord(key).calls.length, 30, 'each one sent once, although three workers drained at once');
  const cursor = (await kernel.db.knex('trigger_cursor').first('seq')) as { seq: number | string };
  const head = (await kernel.db.knex('event_chain').first('seq')) as { seq: number | string };
  t.equal(Number(cursor.seq), Number(head.seq), 'the cursor reached the end of the store');
});

t.test('dispatch: a crash between the queue and the send loses nothing', async (t) => {
  // Node A queues deliveries and stops before sending them; node B, on the same database, sends them.
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const key = uniqueKey('crash');
  await createTrigger(kernel, { name: 'crash', channel: 'fixture', target: { key }, events: ['imported'] });
  const cert = await importCertificate(kernel, 'crash-1');
  await importCertificate(kernel, 'crash-2');
  await runtime.dispatcher.dispatch();
  t.equal((await runtime.queue.list('default')).length, 2);
  // One of them was mid-send when A died: claimed, its lease running.
  const [claimed] = await runtime.queue.claimDue(1, 60_000);
  t.ok(claimed);
  await kernel.db.knex('trigger_deliveries').where({ id: claimed!.id }).update({ lease_until: Date.now() - 1 });
  await kernel.stop();
  t.equal(fixtureRecord(key).calls.length, 0);

  const b = await bootKernel(t, { scheduler: { enabled: true, processEveryMs: 100 } }, { config: { ...kernel.config, scheduler: { ...kernel.config.scheduler, enabled: true, processEveryMs: 100 } } });
  const runtimeB = triggerRuntimeOf(b.app)!;
  const { until } = await import('../../helpers/until.js');
  await until('both deliveries sent by node B', async () => (await runtimeB.queue.list('default')).every((r) => r.status === 'delivered'), 15_000);
  t.equal(fixtureRecord(key).delivered.length, 2);
  t.ok(fixtureRecord(key).delivered.some((d) => d.event.certificate?._id === cert._id));
});
