import t from 'tap';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, runOnce, uniqueKey } from './fixture.js';

const URL = '/api/v1/triggers/';

t.test('triggers: create, read, replace, enable/disable, delete — each change recorded as an event', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const inject = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => kernel.app.inject({ method, url, headers: ADMIN_HEADERS, ...(payload !== undefined ? { payload: payload as object } : {}) });

  const created = await createTrigger(kernel, {
    name: 'expiry-mail',
    description: 'Tell the team',
    channel: 'fixture',
    target: { key: 'k1' },
    events: ['expiring', 'revoked', 'expiring'],
    thresholds: [30, 7],
    query: 'profile equals "web"',
  });
  t.match(created, { name: 'expiry-mail', description: 'Tell the team', enabled: true, channel: 'fixture', target: { key: 'k1' }, events: ['expiring', 'revoked'], thresholds: [7, 30], query: 'profile equals "web"', triggerType: 'notification' });
  t.match(created._id, /^[0-9a-f]{24}$/);

  const list = await inject('GET', URL);
  t.equal(list.statusCode, 200);
  t.equal(list.headers['content-type'], 'application/json');
  t.same((list.json() as { name: string }[]).map((x) => x.name), ['expiry-mail']);
  const one = await inject('GET', `${URL}expiry-mail`);
  t.same(one.json(), created, 'GET :name answers what POST answered');

  const replaced = await inject('PUT', URL, { ...(one.json() as object), events: ['revoked'], thresholds: [], triggerType: 'thirdparty' });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.match(replaced.json(), { events: ['revoked'], thresholds: [], triggerType: 'thirdparty', _id: created._id });

  await createTrigger(kernel, { name: 'log-all', channel: 'log', target: { level: 'warn' }, events: ['imported'] });
  const disabled = await inject('PATCH', URL, { names: ['expiry-mail', 'log-all'], enabled: false });
  t.equal(disabled.statusCode, 200, disabled.body);
  t.same((disabled.json() as { enabled: boolean }[]).map((x) => x.enabled), [false, false]);
  const unknownInPatch = await inject('PATCH', URL, { names: ['log-all', 'nope'], enabled: true });
  t.equal(unknownInPatch.statusCode, 404);
  t.equal(unknownInPatch.json().error, 'TRG-003');
  t.equal((await inject('GET', `${URL}log-all`)).json().enabled, false, 'a PATCH naming an unknown trigger changes none');

  const deleted = await inject('DELETE', `${URL}expiry-mail`);
  t.equal(deleted.statusCode, 204);
  t.equal((await inject('GET', `${URL}expiry-mail`)).statusCode, 404);
  t.equal((await inject('DELETE', `${URL}expiry-mail`)).json().error, 'TRG-003');

  const events = (await kernel.db.knex('events').where({ module: 'triggers' }).orderBy('seq').select('code', 'object_id', 'principal')) as { code: string; object_id: string; principal: string }[];
  t.same(
    events.map((e) => `${e.code} ${e.object_id}`),
    ['TRIGGER-CREATED expiry-mail', 'TRIGGER-UPDATED expiry-mail', 'TRIGGER-CREATED log-all', 'TRIGGER-UPDATED expiry-mail', 'TRIGGER-UPDATED log-all', 'TRIGGER-DELETED expiry-mail'],
  );
  t.ok(events.every((e) => e.principal === 'administrator'), 'events name who changed the trigger');
});

t.test('triggers: every invalid input is a 400 with its own code, and nothing is written', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const post = (payload: object) => kernel.app.inject({ method: 'POST', url: URL, headers: ADMIN_HEADERS, payload });
  const base = { name: 'x', channel: 'fixture', target: { key: 'k' }, events: ['revoked'] };
  const cases: [string, object, string, RegExp?][] = [
    ['unknown channel', { ...base, channel: 'pigeon' }, 'TRG-005', /installed: .*fixture/],
    ['target against targetSchema', { ...base, target: { key: 'k', failTimes: 'many' } }, 'TRG-006', /failTimes/],
    ['target missing a required field', { ...base, target: {} }, 'TRG-006', /key/],
    ['target refused by validateTarget', { ...base, target: { key: 'refused' } }, 'TRG-006'],
    ['log channel level', { ...base, channel: 'log', target: { level: 'loud' } }, 'TRG-006'],
    ['query that does not parse', { ...base, query: 'profile equals' }, 'TRG-007'],
    ['query naming an unknown field', { ...base, query: 'colour equals "red"' }, 'TRG-007'],
    ['unknown event', { ...base, events: ['revoked', 'exploded'] }, 'TRG-008', /exploded/],
    ['expiring without thresholds', { ...base, events: ['expiring'] }, 'TRG-002', /thresholds/],
    ['thresholds without expiring', { ...base, thresholds: [7] }, 'TRG-002'],
    ['no events', { ...base, events: [] }, 'HTTP-003'],
    ['a name with a slash', { ...base, name: 'a/b' }, 'HTTP-003'],
    ['unknown field', { ...base, colour: 'red' }, 'HTTP-003'],
  ];
  for (const [what, body, code, detail] of cases) {
    const res = await post(body);
    t.equal(res.statusCode, 400, `${what}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.equal(res.json().error, code, what);
    if (detail) t.match(res.json().detail, detail, `${what}: the detail says what is wrong`);
  }
  t.equal((await kernel.db.knex('triggers').count({ n: '*' }))[0]!.n as number, 0, 'no trigger row was written');

  t.equal((await post(base)).statusCode, 201);
  const duplicate = await post(base);
  t.equal(duplicate.statusCode, 400);
  t.equal(duplicate.json().error, 'TRG-004');
  const putUnknown = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...base, name: 'y' } });
  t.equal(putUnknown.statusCode, 404);
  t.equal(putUnknown.json().error, 'TRG-003');
  const putBad = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...base, query: '((' } });
  t.equal(putBad.json().error, 'TRG-007');
  t.equal((await kernel.app.inject({ method: 'GET', url: `${URL}x`, headers: ADMIN_HEADERS })).json().query, null, 'a refused PUT changes nothing');
});

t.test('triggers: secret target fields are sealed, answered masked, kept by a PUT that leaves them out', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const key = uniqueKey('secret');
  const created = await createTrigger(kernel, { name: 'hook', channel: 'fixture', target: { key, token: 'S3cr3t-Token-Value' }, events: ['imported'] });
  t.same(created.target, { key, token: '********' }, 'the secret is answered masked');

  const row = (await kernel.db.knex('triggers').where({ name: 'hook' }).first()) as Record<string, string>;
  t.notOk(JSON.stringify(row).includes('S3cr3t-Token-Value'), 'the stored row does not hold the secret in clear');
  const events = (await kernel.db.knex('events').where({ module: 'triggers' }).select('payload')) as { payload: string }[];
  t.notOk(events.some((e) => e.payload.includes('S3cr3t-Token-Value')), 'the events do not hold the secret');

  // Echoing the GET answer back (masked) and leaving the field out both keep the secret.
  const echoed = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...created, description: 'changed' } });
  t.equal(echoed.statusCode, 200, echoed.body);
  t.equal(echoed.json().target.token, '********');
  const omitted = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { name: 'hook', channel: 'fixture', target: { key }, events: ['imported'] } });
  t.equal(omitted.json().target.token, '********');

  await importCertificate(kernel, 'secret-1');
  await runOnce(runtime);
  t.equal(fixtureRecord(key).delivered[0]?.target.token, 'S3cr3t-Token-Value', 'the channel gets the secret in clear');

  const replaced = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { name: 'hook', channel: 'fixture', target: { key, token: 'Another-One' }, events: ['imported'] } });
  t.equal(replaced.json().target.token, '********');
  t.equal(runtime.triggers.fullTarget(await runtime.triggers.get('default', 'hook')).token, 'Another-One', 'a new value replaces the secret');
  const cleared = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { name: 'hook', channel: 'fixture', target: { key, token: null }, events: ['imported'] } });
  t.same(cleared.json().target, { key }, 'null clears a secret');
});
