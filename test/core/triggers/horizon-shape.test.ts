import t from 'tap';
import { startSmtpSink, SMTP_PASSWORD, SMTP_USER } from '../../fixtures/channels/smtp.js';
import { ADMIN_HEADERS } from '../../helpers/kernel.js';
import { bootTriggers, createTrigger, fixtureRecord, importCertificate, runOnce, uniqueKey } from './fixture.js';

/**
 * Triggers in the vendor's (Horizon's) shape beside Certwright's: what maps, what is refused and how, round
 * trips in both shapes, per-trigger retries, and PATCH on the collection in its two forms. The MCP client's
 * own calls are in test/compat/mcp-triggers.test.ts.
 */
const URL = '/api/v1/triggers/';
type Json = Record<string, unknown>;

const EMAIL = {
  name: 'hz-mail',
  type: 'email',
  events: ['on_import'],
  emailTemplate: { from: 'horizon@example.com', to: [{ type: 'contact' }, { type: 'team_manager' }], title: 'Imported: {{certificate.dn}}', body: '<p>{{certificate.serial}}</p>', isHtml: true },
};

t.test('Horizon shape: every feature without a counterpart is a TRG-002 naming the field, and nothing is written', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const post = (payload: object) => kernel.app.inject({ method: 'POST', url: URL, headers: ADMIN_HEADERS, payload });
  const rest = { name: 'r', type: 'rest', events: ['on_enroll'], sequence: [{ url: 'https://deploy.example.com/hook', method: 'POST', authenticationType: 'noauth', expectedHttpCodes: [200] }] };
  const slack = { name: 's', type: 'webhook', events: ['on_revoke'], webhookTemplate: { to: { type: 'static', webhook: { type: 'slack', url: 'https://hooks.slack.com/services/T/B/X' } }, title: 'Revoked' } };
  const cases: [string, object, RegExp][] = [
    ['a third-party type', { name: 'x', type: 'aws', connector: 'acm' }, /^type: "aws" \(a third-party/],
    ['an unknown type', { name: 'x', type: 'pigeon', events: ['on_enroll'] }, /^type: one of email, webhook, rest/],
    ['no events', { ...EMAIL, events: undefined }, /^events:/],
    ['a per-workflow request event', { ...EMAIL, events: ['on_approve_enroll'] }, /^events: on_approve_enroll has no Certwright counterpart/],
    ['an unknown event', { ...EMAIL, events: ['on_exploded'] }, /TRG-008: unknown event "on_exploded"/],
    ['on_expire without runPeriod', { ...EMAIL, events: ['on_expire'] }, /^runPeriod: an on_expire trigger needs/],
    ['runPeriod not in days', { ...EMAIL, events: ['on_expire'], runPeriod: '36 hours' }, /^runPeriod: whole days/],
    ['runPeriod on another event', { ...EMAIL, runPeriod: '30 days' }, /^runPeriod: only on_expire/],
    ['runOnRenewed false', { ...EMAIL, events: ['on_expire'], runPeriod: '30 days', runOnRenewed: false }, /^runOnRenewed:/],
    ['licence usage', { ...EMAIL, licenceUsagePercent: 80 }, /^licenceUsagePercent:/],
    ['chained error triggers', { ...EMAIL, triggers: { onTriggerError: ['other'] } }, /^triggers\.onTriggerError:/],
    ['a key of another subtype', { ...EMAIL, sequence: rest.sequence }, /^sequence: not a key of a email trigger/],
    ['only recipients without an address', { ...EMAIL, emailTemplate: { ...EMAIL.emailTemplate, to: [{ type: 'requester' }] } }, /^emailTemplate\.to: Certwright mails static addresses/],
    ['a static recipient without an address', { ...EMAIL, emailTemplate: { ...EMAIL.emailTemplate, to: [{ type: 'static', email: 'nobody' }] } }, /^emailTemplate\.to\[0\]\.email:/],
    ['custom mail headers', { ...EMAIL, emailTemplate: { ...EMAIL.emailTemplate, headers: [{ key: 'X-Prio', value: '1' }] } }, /^emailTemplate\.headers:/],
    ['a title the channel cannot render', { ...EMAIL, emailTemplate: { ...EMAIL.emailTemplate, title: 'Imported {{#open}}' } }, /^TRG-006: /],
    ["the team's webhook", { ...slack, webhookTemplate: { ...slack.webhookTemplate, to: { type: 'team' } } }, /^webhookTemplate\.to\.type: "team"/],
    ['a proxy', { ...slack, proxy: 'corporate' }, /^proxy:/],
    ['a GET step', { ...rest, sequence: [{ ...rest.sequence[0], method: 'GET' }] }, /^sequence\[0\]\.method:/],
    ['a templated URL', { ...rest, sequence: [{ ...rest.sequence[0], url: 'https://{{certificate.san.dnsname.1}}/hook' }] }, /^sequence\[0\]\.url: templates/],
    ['a templated header', { ...rest, sequence: [{ ...rest.sequence[0], headers: [{ name: 'Authorization', value: 'Bearer {{rest.response.1.token}}' }] }] }, /^sequence\[0\]\.headers\[0\]\.value:/],
    ['a non-2xx success code', { ...rest, sequence: [{ ...rest.sequence[0], expectedHttpCodes: [200, 404] }] }, /^sequence\[0\]\.expectedHttpCodes: 404/],
    ['a timeout beyond the channel', { ...rest, sequence: [{ ...rest.sequence[0], timeout: '10 minutes' }] }, /^sequence\[0\]\.timeout:/],
    ['a header the channel reserves', { ...rest, sequence: [{ ...rest.sequence[0], headers: [{ name: 'Content-Type', value: 'text/plain' }] }] }, /^TRG-006: /],
    ['a Horizon key without type', { name: 'x', channel: 'fixture', target: { key: 'k' }, events: ['revoked'], runPeriod: '30 days' }, /^runPeriod: a key of Horizon's trigger shape/],
    ['a Horizon event without counterpart, Certwright shape', { name: 'x', channel: 'fixture', target: { key: 'k' }, events: ['on_deny_revoke'] }, /^events: on_deny_revoke/],
  ];
  for (const [what, body, detail] of cases) {
    const res = await post(body);
    t.equal(res.statusCode, 400, `${what}: ${res.body}`);
    t.equal(res.json().error, 'TRG-002', what);
    t.match(res.json().detail, detail, `${what}: the detail names the field`);
  }
  const reserved = await post({ name: 'x', channel: 'fixture', target: { key: 'k', $extras: {} }, events: ['revoked'] });
  t.equal(reserved.json().error, 'TRG-006', 'the reserved target key is refused');
  t.equal((await kernel.app.inject({ method: 'GET', url: URL, headers: ADMIN_HEADERS })).json().length, 0, 'nothing was created');
});

t.test('Horizon shape: an email trigger maps onto the email channel, answers back, round-trips, and mails on its event', async (t) => {
  const smtp = await startSmtpSink(t);
  const { kernel, runtime } = await bootTriggers(
    t,
    { plugins: { instances: { 'trigger-email': [{ name: 'local', config: { host: '127.0.0.1', port: smtp.port, starttls: 'never', user: SMTP_USER, password: SMTP_PASSWORD, from: 'certwright@example.com' } }] } } },
    true,
  );
  const created = await createTrigger(kernel, { ...EMAIL, retries: 2, attachPemBundle: false, description: 'from Horizon' });
  t.match(created, {
    channel: 'email',
    target: { to: ['{{certificate.contactEmail}}'], subject: EMAIL.emailTemplate.title, html: EMAIL.emailTemplate.body },
    triggerType: 'notification',
    thresholds: [],
    description: 'from Horizon',
    type: 'email',
    events: ['on_import'],
    retries: 2,
    emailTemplate: EMAIL.emailTemplate,
    attachPemBundle: false,
  });
  t.notOk('$extras' in (created.target as Json), 'the stored extras never show in the target');
  const row = (await kernel.db.knex('triggers').where({ name: 'hz-mail' }).first('events')) as { events: string };
  t.same(JSON.parse(row.events), ['imported'], "the trigger runs on Certwright's event");

  // GET → PUT of the whole answer is accepted as is, and changes nothing.
  const got = (await kernel.app.inject({ method: 'GET', url: `${URL}hz-mail`, headers: ADMIN_HEADERS })).json() as Json;
  const same = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: got });
  t.equal(same.statusCode, 200, same.body);
  t.same({ ...same.json(), updatedAt: 0 }, { ...got, updatedAt: 0 }, 'a round trip changes nothing');
  // A changed derived key next to `type` is refused: which of the two was meant is unknown.
  const both = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...got, target: { to: ['x@example.com'] } } });
  t.equal(both.statusCode, 400);
  t.match(both.json(), { error: 'TRG-002', detail: /^target: derived from the Horizon keys/ });

  await importCertificate(kernel, 'hz-import', { contactEmail: 'owner@example.com' });
  await runOnce(runtime);
  t.equal(smtp.delivered.length, 1, 'on_import mailed once');
  t.same(smtp.delivered[0]!.envelope.to, ['owner@example.com'], 'to the contact; the team manager has no address in the event');
  t.match(smtp.delivered[0]!.parsed.html, /<p>[0-9a-fA-F]+<\/p>/, 'isHtml: the body is the html part');

  // Written in Certwright's shape, the trigger is a Certwright trigger again: the kept Horizon keys go; it answers
  // the Horizon view derived from its channel instead (horizon/derived.ts).
  const plain = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { name: 'hz-mail', channel: 'email', target: { to: ['ops@example.com'] }, events: ['imported'] } });
  t.equal(plain.statusCode, 200, plain.body);
  t.notOk('attachPemBundle' in plain.json() || 'retries' in plain.json(), 'no kept Horizon keys, no retries');
  t.match(plain.json(), { type: 'email', emailTemplate: { from: '', to: [{ type: 'static', email: 'ops@example.com' }], isHtml: false, title: '', body: null }, events: ['on_import'] }, 'the derived view');
  const row2 = (await kernel.db.knex('triggers').where({ name: 'hz-mail' }).first('events', 'target')) as { events: string; target: string };
  t.same(JSON.parse(row2.events), ['imported']);
  t.same(JSON.parse(row2.target), { to: ['ops@example.com'] }, 'stored in Certwright\'s shape, no Horizon keys kept');
});

t.test('Horizon shape: on_expire with runPeriod is an expiring trigger with that threshold', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const created = await createTrigger(kernel, { ...EMAIL, name: 'hz-expiry', events: ['on_expire'], runPeriod: '30 days', runOnRenewed: true, emailTemplate: { ...EMAIL.emailTemplate, to: [{ type: 'static', email: 'pki@example.com' }] } });
  t.match(created, { events: ['on_expire'], thresholds: [30], runPeriod: '30 days', runOnRenewed: true, target: { to: ['pki@example.com'] } });
  const row = (await kernel.db.knex('triggers').where({ name: 'hz-expiry' }).first('events', 'thresholds')) as { events: string; thresholds: string };
  t.same([JSON.parse(row.events), JSON.parse(row.thresholds)], [['expiring'], [30]]);
});

t.test("Certwright's shape is unchanged, takes retries, and a trigger's retries bound its deliveries", async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const key = uniqueKey('hz-retries');
  const created = await createTrigger(kernel, { name: 'flaky', channel: 'fixture', target: { key, failTimes: 5 }, events: ['imported'] });
  t.notOk('type' in created || 'retries' in created, 'a Certwright trigger answers no Horizon key');
  const put = await kernel.app.inject({ method: 'PUT', url: URL, headers: ADMIN_HEADERS, payload: { ...created, retries: 1 } });
  t.equal(put.statusCode, 200, put.body);
  t.equal(put.json().retries, 1);
  // Events accept Horizon's names in Certwright's shape too.
  const alias = await createTrigger(kernel, { name: 'alias', channel: 'fixture', target: { key: uniqueKey('alias') }, events: ['on_revoke'] });
  t.same(alias.events, ['revoked'], "answered in Certwright's names");

  await importCertificate(kernel, 'hz-flaky');
  await runOnce(runtime);
  // Retries are due after 100 ms, 200 ms: drain until the delivery is final.
  for (let i = 0; i < 20 && (await runtime.queue.list('default', { triggerName: 'flaky' }))[0]?.status === 'pending'; i++) {
    await new Promise((r) => setTimeout(r, 120));
    await runtime.worker.drain(() => false);
  }
  const [delivery] = await runtime.queue.list('default', { triggerName: 'flaky' });
  t.match(delivery, { status: 'failed', attempts: 2 }, 'one retry (the trigger says 1; the configuration allows 3)');
  t.equal(fixtureRecord(key).calls.length, 2);
});

t.test('PATCH on the collection: {names, enabled} as before, {name} runs the trigger, both at once is refused', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const key = uniqueKey('hz-test-run');
  await createTrigger(kernel, { name: 'probe', channel: 'fixture', target: { key }, events: ['expiring', 'revoked'], thresholds: [7, 30] });
  const patch = (payload: object) => kernel.app.inject({ method: 'PATCH', url: URL, headers: ADMIN_HEADERS, payload });

  const off = await patch({ names: ['probe'], enabled: false });
  t.equal(off.statusCode, 200, off.body);
  t.match(off.json(), [{ name: 'probe', enabled: false }]);

  const run = await patch({ name: 'probe' });
  t.equal(run.statusCode, 200, run.body);
  t.same(run.json(), { type: 'fixture', status: 'success', message: 'fixture: delivered', requestURL: '', name: 'probe', event: 'expiring', delivered: true, retryable: false, detail: 'fixture: delivered' });
  t.match(fixtureRecord(key).delivered[0]?.event, { code: 'CERTIFICATE-EXPIRING', certificate: null, trigger: { name: 'probe', event: 'expiring', thresholdDays: 7 }, payload: { run: true, test: true } }, 'a disabled trigger runs too, for its smallest threshold, without a certificate');
  const audit = (await kernel.db.knex('events').where({ code: 'TRIGGER-RUN' }).first('object_type', 'object_id', 'status')) as Json;
  t.same(audit, { object_type: 'trigger', object_id: 'probe', status: 'success' }, 'the test run is recorded, about the trigger');

  for (const body of [{ name: 'probe', names: ['probe'], enabled: true }, { name: 'probe', enabled: true }]) {
    const res = await patch(body);
    t.equal(res.statusCode, 400);
    t.equal(res.json().error, 'TRG-002');
  }
  t.equal((await patch({ names: ['probe'] })).json().error, 'HTTP-003', 'names without enabled is still a schema error');
  t.equal((await patch({ name: 'nobody' })).json().error, 'TRG-003');

  // The certificate run route takes Horizon's event names too.
  const cert = await importCertificate(kernel, 'hz-run');
  const byHorizonName = await kernel.app.inject({ method: 'PATCH', url: `/api/v1/certificates/run/${cert._id}/probe/on_revoke`, headers: ADMIN_HEADERS });
  t.equal(byHorizonName.statusCode, 200, byHorizonName.body);
  t.match(byHorizonName.json().triggerResults, [{ name: 'probe', event: 'revoked', status: 'success' }]);
});

t.test('Horizon shape, v2 Go SDK forms: third-party bodies refused before the schema, REST at the top level, licenseUsagePercent, list types', async (t) => {
  const { kernel } = await bootTriggers(t, {}, true);
  const send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) => kernel.app.inject({ method, url, headers: ADMIN_HEADERS, ...(payload ? { payload } : {}) });

  // A third-party model carries keys the schema does not list: still TRG-002 on `type`, on every write route.
  const ldap = { name: 'x', type: 'ldappub', connector: 'directory', ldapAttribute: 'userCertificate' };
  for (const [method, body, field] of [['POST', ldap, 'type'], ['PUT', ldap, 'type'], ['PATCH', { trigger: ldap }, 'trigger.type']] as const) {
    const res = await send(method, URL, body);
    t.equal(res.statusCode, 400, `${method}: ${res.body}`);
    t.match(res.json(), { error: 'TRG-002', detail: new RegExp(`^${field.replace('.', '\\.')}: "ldappub" \\(a third-party`) });
  }
  t.match((await send('POST', URL, { name: 'x', type: 'carrier-pigeon', wings: 2 })).json(), { error: 'TRG-002', detail: /^type: one of email, webhook, rest/ }, 'an unknown type too');

  const lic = await send('POST', URL, { ...EMAIL, name: 'lic', licenseUsagePercent: 80 });
  t.match(lic.json(), { error: 'TRG-002', detail: /^licenseUsagePercent:/ }, "the Go SDK's spelling is refused as the MCP's is");
  t.equal((await send('POST', URL, { ...EMAIL, name: 'lic', licenseUsagePercent: null })).statusCode, 201, 'null is accepted');

  // REST: the older top-level request is the one-step sequence; a GET echo (both forms) round-trips.
  const flat = { name: 'flat', type: 'rest', events: ['on_revoke'], url: 'https://deploy.example.com/hook', method: 'POST', authenticationType: 'noauth', expectedHttpCodes: [200], timeout: '10 seconds' };
  const created = await send('POST', URL, flat);
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { sequence: [{ url: flat.url, method: 'POST', authenticationType: 'noauth', expectedHttpCodes: [200], timeout: '10 seconds' }], url: flat.url, target: { url: flat.url, timeoutMs: 10_000 } });
  const got = (await send('GET', `${URL}flat`)).json() as Json;
  const same = await send('PUT', URL, got);
  t.equal(same.statusCode, 200, same.body);
  t.same({ ...same.json(), updatedAt: 0 }, { ...got, updatedAt: 0 }, 'a round trip changes nothing');
  // Both forms changed differently: which was meant is unknown.
  const both = await send('PUT', URL, { ...got, url: 'https://a.example.com/x', sequence: [{ ...(got.sequence as Json[])[0], url: 'https://b.example.com/y' }] });
  t.match(both.json(), { error: 'TRG-002', detail: /^url: differs from sequence\[0\]/ });
  // A new sequence with the old top-level keys echoed: the sequence wins.
  const newSeq = await send('PUT', URL, { ...got, sequence: [{ ...(got.sequence as Json[])[0], url: 'https://b.example.com/y' }] });
  t.equal(newSeq.statusCode, 200, newSeq.body);
  t.match(newSeq.json(), { url: 'https://b.example.com/y', target: { url: 'https://b.example.com/y' } });
  t.match((await send('POST', URL, { ...flat, name: 'cred', credentials: 'svc' })).json(), { error: 'TRG-002', detail: /^credentials:/ }, 'top-level fields are named as sent');
  t.match((await send('POST', URL, { name: 'none', type: 'rest', events: ['on_revoke'] })).json(), { error: 'TRG-002', detail: /^sequence: a REST notification needs its request/ });
  t.match((await send('POST', URL, { ...EMAIL, name: 'stray', url: flat.url })).json(), { error: 'TRG-002', detail: /^url: not a key of a email trigger/ });

  // GET ?types: Horizon types, repeated or comma-separated; a Certwright-shape trigger has none.
  await createTrigger(kernel, { name: 'plain', channel: 'fixture', target: { key: uniqueKey('plain') }, events: ['revoked'] });
  const names = async (query: string) => ((await send('GET', `${URL}${query}`)).json() as Json[]).map((x) => x.name);
  t.same(await names(''), ['flat', 'lic', 'plain']);
  t.same(await names('?types=email,rest'), ['flat', 'lic']);
  t.same(await names('?types=rest&types=webhook'), ['flat']);
  t.same(await names('?types=fixture'), [], 'a channel is not a Horizon type');
  t.same(await names('?module=est'), ['flat', 'lic', 'plain'], 'module keeps every trigger');
});

t.test('PATCH {trigger, dictionary?}: runs the trigger given without storing it; the forms do not mix', async (t) => {
  const { kernel, runtime } = await bootTriggers(t, {}, true);
  const patch = (payload: object) => kernel.app.inject({ method: 'PATCH', url: URL, headers: ADMIN_HEADERS, payload });
  const key = uniqueKey('hz-definition');
  const run = await patch({ trigger: { name: 'draft', channel: 'fixture', target: { key }, events: ['revoked'] }, dictionary: [{ key: 'cn', value: 'a.example' }, { key: 'empty', value: null }] });
  t.equal(run.statusCode, 200, run.body);
  t.same(run.json(), { type: 'fixture', status: 'success', message: 'fixture: delivered', requestURL: '', name: 'draft', event: 'revoked', delivered: true, retryable: false, detail: 'fixture: delivered' });
  t.match(fixtureRecord(key).delivered[0]?.event, { code: 'CERTIFICATE-REVOKED', certificate: null, trigger: { name: 'draft', event: 'revoked' }, payload: { run: true, test: true, dictionary: { cn: 'a.example', empty: '' } } });
  t.equal((await kernel.app.inject({ method: 'GET', url: `${URL}draft`, headers: ADMIN_HEADERS })).statusCode, 404, 'not stored');
  t.match(await runtime.queue.list('default', { triggerName: 'draft' }), [{ status: 'delivered', attempts: 1 }], 'recorded as a delivery');

  // A stored trigger's own dictionary run ({name} + dictionary).
  await createTrigger(kernel, { name: 'stored', channel: 'fixture', target: { key }, events: ['issued'] });
  t.equal((await patch({ name: 'stored', dictionary: [{ key: 'k', value: 'v' }] })).statusCode, 200);
  t.match(fixtureRecord(key).delivered[1]?.event.payload, { dictionary: { k: 'v' } });

  for (const body of [{ trigger: { name: 'x', channel: 'fixture', target: { key }, events: ['revoked'] }, name: 'stored' }, { names: ['stored'], enabled: true, dictionary: [] }]) {
    const res = await patch(body);
    t.equal(res.statusCode, 400, res.body);
    t.equal(res.json().error, 'TRG-002');
  }
  t.equal((await patch({ trigger: { name: 'x', channel: 'pigeon', target: {}, events: ['revoked'] } })).json().error, 'TRG-005', 'checked as POST checks it');
  t.equal((await patch({ trigger: { name: 'x', channel: 'fixture', target: { key }, events: ['revoked'], colour: 'red' } })).json().error, 'HTTP-003', 'the same schema as POST');
});
