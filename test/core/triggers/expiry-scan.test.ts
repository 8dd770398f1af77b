import t from 'tap';
import { triggerRuntimeOf } from '../../../core/triggers/index.js';
import { onMysql } from '../../helpers/database.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, uniqueKey } from './fixture.js';

t.test('expiry scan: once per certificate and threshold, the smallest first, even with scans racing', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const key = uniqueKey('expiry');
  const webKey = uniqueKey('expiry-web');
  await createTrigger(kernel, { name: 'expiry', channel: 'fixture', target: { key }, events: ['expiring'], thresholds: [7, 30] });
  const thirtyKey = uniqueKey('expiry-thirty');
  await createTrigger(kernel, { name: 'thirty', channel: 'fixture', target: { key: thirtyKey }, events: ['expiring'], thresholds: [30] });
  await createTrigger(kernel, { name: 'web-expiry', channel: 'fixture', target: { key: webKey }, events: ['expiring'], thresholds: [60], query: 'profile equals "web"' });
  const soon = await importCertificate(kernel, 'soon', {}, 5);
  const month = await importCertificate(kernel, 'month', {}, 20);
  const later = await importCertificate(kernel, 'later', {}, 50);
  const web = await importCertificate(kernel, 'web', { profile: 'web' }, 50);
  await importCertificate(kernel, 'far', {}, 200);
  const revoked = await importCertificate(kernel, 'revoked', {}, 3);
  await kernel.db.knex('inv_certificates').where({ id: revoked._id }).update({ revoked: true });
  await importCertificate(kernel, 'expired', {}, -2);

  // Two scans at once, and on MariaDB a third from another kernel on the same database.
  const second = onMysql() ? triggerRuntimeOf((await bootKernel(t, {}, { config: kernel.config })).app)! : runtime;
  const raised = await Promise.all([runtime.expiry.scan(), runtime.expiry.scan(), second.expiry.scan()]);
  t.equal(raised.reduce((a, b) => a + b, 0), 3, 'three events in all');

  const events = (await kernel.db.knex('events').where({ code: 'CERTIFICATE-EXPIRING' }).select('object_id', 'payload')) as { object_id: string; payload: string }[];
  const byCert = events.map((e) => `${e.object_id === soon._id ? 'soon' : e.object_id === month._id ? 'month' : e.object_id === web._id ? 'web' : e.object_id} ${JSON.parse(e.payload).thresholdDays}`).sort();
  t.same(byCert, ['month 30', 'soon 7', 'web 60'], 'the smallest threshold crossed; nothing for far, later (no trigger admits it at 50 days), revoked or expired');
  t.equal(JSON.parse(events.find((e) => e.object_id === soon._id)!.payload).notAfter, soon.notAfter);
  const notices = (await kernel.db.knex('trigger_expiry_notices').where({ certificate_id: soon._id }).orderBy('threshold_days').select('threshold_days', 'state')) as { threshold_days: number; state: string }[];
  t.same(notices.map((n) => `${n.threshold_days} ${n.state}`), ['7 raised', '30 passed'], 'the larger threshold is recorded as passed');
  t.notOk(events.some((e) => e.object_id === later._id));

  t.equal(await runtime.expiry.scan(), 0, 'a later scan raises nothing new');

  // The events are dispatched like any other: each trigger at its own thresholds.
  await runtime.dispatcher.dispatch();
  await runtime.worker.drain(() => false);
  t.same(fixtureRecord(key).delivered.map((d) => `${d.event.certificate?.dn} ${d.event.trigger?.thresholdDays}`).sort(), ['CN=month,O=Trigger Tests 30', 'CN=soon,O=Trigger Tests 7']);
  t.same(fixtureRecord(webKey).delivered.map((d) => d.event.certificate?._id), [web._id]);
  // A trigger at 30 days only still hears of the certificate first seen at 5 days (its 30 rode on the 7-day event).
  t.same(fixtureRecord(thirtyKey).delivered.map((d) => d.event.certificate?.dn).sort(), ['CN=month,O=Trigger Tests', 'CN=soon,O=Trigger Tests']);
  t.same(JSON.parse(events.find((e) => e.object_id === soon._id)!.payload).passedThresholds, [30], 'the event names the thresholds passed with it');

  // A certificate that later crosses its next threshold raises that one.
  await kernel.db.knex('inv_certificates').where({ id: month._id }).update({ not_after: Date.now() + 6 * 86_400_000 });
  t.equal(await runtime.expiry.scan(), 1);
  const got = await kernel.app.inject({ method: 'GET', url: `/api/v1/certificates/${month._id}`, headers: ADMIN_HEADERS });
  t.equal(got.statusCode, 200);
});

t.test('expiry scan: runs as a job and nudges the delivery', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, { triggers: { expiryScan: { every: '1 second' } } as never });
  const key = uniqueKey('expiry-job');
  await createTrigger(kernel, { name: 'job', channel: 'fixture', target: { key }, events: ['expiring'], thresholds: [10] });
  const cert = await importCertificate(kernel, 'job-1', {}, 3);
  const { until } = await import('../../helpers/until.js');
  await until('the expiring event was delivered', () => fixtureRecord(key).delivered.length === 1, 15_000);
  t.equal(fixtureRecord(key).delivered[0]!.event.objectId, cert._id);
  // The channel answered before the worker recorded the outcome: wait for the row, not the channel.
  await until('the delivery row is final', async () => (await runtime.queue.list('default'))[0]?.status === 'delivered', 5_000);
  t.match((await runtime.queue.list('default'))[0], { triggerEvent: 'expiring', thresholdDays: 10, status: 'delivered' });
});
