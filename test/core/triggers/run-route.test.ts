import t from 'tap';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, uniqueKey } from './fixture.js';

t.test('run route: runs one trigger for one event on one certificate now, and answers the certificate', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const ok = uniqueKey('run-ok');
  const broken = uniqueKey('run-broken');
  await createTrigger(kernel, { name: 'notify', channel: 'fixture', target: { key: ok }, events: ['revoked', 'expiring'], thresholds: [30, 90], query: 'profile equals "none-matches"' });
  await createTrigger(kernel, { name: 'broken', channel: 'fixture', target: { key: broken, permanent: true }, events: ['revoked'] });
  const cert = await importCertificate(kernel, 'run-1', {}, 45);
  const run = (id: string, name: string, event: string) => kernel.app.inject({ method: 'PATCH', url: `/api/v1/certificates/run/${id}/${name}/${event}`, headers: ADMIN_HEADERS });

  const first = await run(cert._id, 'notify', 'revoked');
  t.equal(first.statusCode, 200, first.body);
  t.equal(first.headers['content-type'], 'application/json');
  t.equal(first.json()._id, cert._id, 'the bare certificate object');
  t.match(first.json().triggerResults, [{ name: 'notify', event: 'revoked', status: 'success', triggerType: 'notification' }]);
  t.match(fixtureRecord(ok).delivered[0]?.event, { code: 'CERTIFICATE-REVOKED', objectId: cert._id, trigger: { name: 'notify', event: 'revoked' }, certificate: { _id: cert._id } }, 'the query does not stop an explicit run');

  const expiring = await run(cert._id, 'notify', 'expiring');
  t.equal(expiring.statusCode, 200);
  t.match(fixtureRecord(ok).delivered[1]?.event.trigger, { event: 'expiring', thresholdDays: 90 }, 'the threshold the certificate is within');

  const failed = await run(cert._id, 'broken', 'revoked');
  t.equal(failed.statusCode, 200);
  const again = await run(cert._id, 'notify', 'revoked');
  const results = (again.json().triggerResults as { name: string; event: string; status: string }[]).map((r) => `${r.name}/${r.event}/${r.status}`).sort();
  t.same(results, ['broken/revoked/failure', 'notify/expiring/success', 'notify/revoked/success'], 'one result per (trigger, event), replaced on each run');
  t.equal(fixtureRecord(broken).calls.length, 1, 'a run is one attempt, never retried');
  t.equal((await runtime.queue.list('default', { triggerName: 'broken' }))[0]?.status, 'failed');
  const audit = await kernel.db.knex('events').where({ code: 'TRIGGER-RUN' }).count({ n: '*' });
  t.equal(Number(audit[0]!.n), 4, 'each run is an event');

  const problem = async (id: string, name: string, event: string, status: number, code: string) => {
    const res = await run(id, name, event);
    t.equal(res.statusCode, status, `${id}/${name}/${event}`);
    t.equal(res.json().error, code);
  };
  await problem('0123456789abcdef01234567', 'notify', 'revoked', 404, 'CRT-003');
  await problem('not-an-id', 'notify', 'revoked', 404, 'CRT-003');
  await problem(cert._id, 'nobody', 'revoked', 404, 'TRG-003');
  await problem(cert._id, 'notify', 'exploded', 400, 'TRG-008');
  await problem(cert._id, 'notify', 'issued', 400, 'TRG-009');
});
