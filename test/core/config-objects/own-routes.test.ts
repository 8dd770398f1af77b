/**
 * The collections that keep their own routes (`routes: 'own'`: their wire shape is not the standard set's)
 * answer users as the standard set does for the same mistakes: one table of types, one set of assertions
 * (issue 25 "Must show", beside standard-set.test.ts): unknown name 404 (-003), name taken 400 (-004), a bad
 * field 400 (-002) naming it and changing nothing, secrets masked, 401 / 403 / wrong host 404, a referenced
 * delete refused naming the referrer (-005), and an event naming who and the changed fields on every change.
 */
import t from 'tap';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { caCertificate } from './fixtures/cas.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Row {
  type: string;
  base: string;
  family: string;
  /** The read permission of its section. */
  read: string;
  valid: Json;
  update: { patch: Json; field: string };
  bad: { patch: Json; field: string };
  /** A secret: its dotted path in the answer and its value. */
  secret?: { path: string; value: string };
  /** Makes another object reference `name`; answers the referrer's label. */
  referrer?: (name: string) => Promise<string>;
  codes: { created: string; updated: string; deleted: string };
  /** What the list answers without credentials and without the permission, when the spec says otherwise than 401 / 403. */
  listAnswers?: { anonymous: number; withoutPermission: number };
}

const SECRET = 'Own-Routes-Secret-Of-The-Test-2b71';
const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const admin = caller(kernel, ADMIN_HEADERS);
const CONFIG = { created: 'CONFIG-CREATED', updated: 'CONFIG-UPDATED', deleted: 'CONFIG-DELETED' };
const created = async (res: { statusCode: number; body: string }) => {
  if (res.statusCode !== 201) throw new Error(res.body);
};

const rows: Row[] = [
  {
    type: 'pki-queue',
    base: '/api/v1/pki/queues/',
    family: 'PKI-QUEUE',
    read: 'configuration:pki:read',
    valid: { name: 'q-own', retries: 1 },
    update: { patch: { retries: 4 }, field: 'retries' },
    bad: { patch: { retries: -1 }, field: 'retries' },
    referrer: async (name) => {
      await created(await admin('POST', '/api/v1/pki/connectors/', { name: `on-${name}`, type: 'local-ca', queue: name }));
      return `pki-connector/on-${name}`;
    },
    codes: { created: 'PKI-QUEUE-CREATED', updated: 'PKI-QUEUE-UPDATED', deleted: 'PKI-QUEUE-DELETED' },
  },
  {
    type: 'pki-connector',
    base: '/api/v1/pki/connectors/',
    family: 'PKI-CONN',
    read: 'configuration:pki:read',
    valid: { name: 'acme-own', type: 'acme-upstream', configuration: { directoryUrl: 'https://acme.example/directory', eab: { kid: 'kid-1', hmacKey: SECRET } } },
    update: { patch: { description: 'changed' }, field: 'description' },
    bad: { patch: { configuration: { directoryUrl: 'http://acme.example/directory' } }, field: 'directoryUrl' },
    secret: { path: 'configuration.eab.hmacKey', value: SECRET },
    codes: { created: 'PKI-CONNECTOR-CREATED', updated: 'PKI-CONNECTOR-UPDATED', deleted: 'PKI-CONNECTOR-DELETED' },
  },
  {
    type: 'identity-provider',
    base: '/api/v1/security/identity/providers/',
    family: 'SEC-IDP',
    read: 'configuration:identity-providers:read',
    valid: { name: 'keys-own', type: 'local', config: { allowBasic: false } },
    update: { patch: { enabled: false }, field: 'enabled' },
    bad: { patch: { config: { allowBasic: 'sometimes' } }, field: 'allowBasic' },
    codes: CONFIG,
  },
  {
    type: 'profile',
    base: '/api/v1/certificate/profiles/',
    family: 'PRF',
    read: 'configuration:profiles:read',
    valid: { name: 'p-own', pkiConnector: 'prf-ca', validityDays: 30 },
    update: { patch: { validityDays: 60 }, field: 'validityDays' },
    bad: { patch: { validityDays: 0 }, field: 'validityDays' },
    codes: { created: 'PROFILE-CREATED', updated: 'PROFILE-UPDATED', deleted: 'PROFILE-DELETED' },
  },
  {
    type: 'label',
    base: '/api/v1/certificate/labels/',
    family: 'LBL',
    read: 'configuration:labels:read',
    valid: { name: 'l-own', regex: '^[a-z]+$' },
    update: { patch: { regex: '^[a-z0-9]+$' }, field: 'regex' },
    bad: { patch: { regex: '(' }, field: 'regex' },
    referrer: async (name) => {
      await created(await admin('POST', '/api/v1/certificate/profiles/', { name: `labelled-${name}`, pkiConnector: 'prf-ca', labels: [{ label: name }] }));
      return `profile/labelled-${name}`;
    },
    codes: { created: 'LABEL-CREATED', updated: 'LABEL-UPDATED', deleted: 'LABEL-DELETED' },
  },
  {
    type: 'ca',
    base: '/api/v1/cas/',
    family: 'CA',
    read: 'configuration:cas:read',
    valid: { name: 'ca-own', certificate: caCertificate, trusted: true },
    update: { patch: { trusted: false }, field: 'trusted' },
    bad: { patch: { crlUrl: 'ftp://crl.example/x.crl' }, field: 'crlUrl' },
    codes: { created: 'CA-CREATE', updated: 'CA-UPDATE', deleted: 'CA-DELETE' },
  },
  {
    type: 'trigger',
    base: '/api/v1/triggers/',
    family: 'TRG',
    read: 'configuration:triggers:read',
    valid: { name: 't-own', channel: 'webhook', target: { url: 'https://hooks.example.com/own', secret: SECRET }, events: ['issued'] },
    update: { patch: { description: 'changed' }, field: 'description' },
    bad: { patch: { thresholds: [30] }, field: 'thresholds' },
    secret: { path: 'target.secret', value: SECRET },
    codes: { created: 'TRIGGER-CREATED', updated: 'TRIGGER-UPDATED', deleted: 'TRIGGER-DELETED' },
  },
  {
    type: 'scheduled-task',
    base: '/api/v1/scheduler/tasks/',
    family: 'SCHED',
    read: 'configuration:scheduler:read',
    valid: { name: 'report-own', type: 'report', cron: '0 8 * * 1', parameters: { reportType: 'attachment_email', recipients: [{ type: 'static', email: 'pki@example.com' }], from: 'certwright@example.com', title: 'Report', isHtml: false, hqlType: 'hcql', hqlQuery: 'status is valid' } },
    update: { patch: { cron: '0 9 * * 1' }, field: 'cron' },
    bad: { patch: { cron: 'every now and then' }, field: 'cron' },
    codes: CONFIG,
  },
  {
    type: 'execution-policy',
    base: '/api/v1/automation/executions/',
    family: 'EXECUTION-POLICY',
    read: 'configuration:automation:read',
    valid: { name: 'exec-own', authorizedPeriods: [{ weekDays: ['MONDAY'] }] },
    update: { patch: { description: 'Mondays only' }, field: 'description' },
    bad: { patch: { authorizedPeriods: [{ weekDays: ['FUNDAY'] }] }, field: 'authorizedPeriods' },
    codes: CONFIG,
    // interface-spec automation.execution.list: 204 without the permission; Errors rule 2: SecAuth001 as a 500.
    listAnswers: { anonymous: 500, withoutPermission: 204 },
  },
];

// The connector the profile row names.
await created(await admin('POST', '/api/v1/pki/connectors/', { name: 'prf-ca', type: 'local-ca' }));

t.test('every type that keeps its own routes has a row here', async (t) => {
  const own = kernel.configObjects.types().filter((x) => x.decl.routes === 'own').map((x) => x.decl.type).sort();
  t.same(rows.map((r) => r.type).sort(), own);
});

for (const row of rows) {
  t.test(`${row.type}: the same answers as the standard set`, async (t) => {
    const code = (suffix: string) => `${row.family}-${suffix}`;
    const name = row.valid.name as string;
    const url = `${row.base}${encodeURIComponent(name)}`;

    const made = await admin('POST', row.base, row.valid);
    t.equal(made.statusCode, 201, made.body);

    const unknown = await admin('GET', `${row.base}no-such-object`);
    t.equal(unknown.statusCode, 404, 'unknown → 404');
    t.equal(unknown.json().error, code('003'), 'unknown → -003');

    const taken = await admin('POST', row.base, row.valid);
    t.equal(taken.statusCode, 400, 'name taken → 400');
    t.equal(taken.json().error, code('004'), 'name taken → -004');

    const updated = await admin('PUT', row.base, { ...row.valid, ...row.update.patch });
    t.equal(updated.statusCode, 200, updated.body);

    const before = (await admin('GET', url)).json();
    const bad = await admin('PUT', row.base, { ...row.valid, ...row.bad.patch });
    t.equal(bad.statusCode, 400, `bad ${row.bad.field} → 400`);
    t.equal(bad.json().error, code('002'), 'bad field → -002');
    t.match(`${bad.json().message} ${bad.json().detail ?? ''}`, row.bad.field, 'the message (or its detail) names the field');
    t.same((await admin('GET', url)).json(), before, 'nothing changed');

    if (row.secret) {
      for (const answer of [made.body, updated.body, (await admin('GET', url)).body, (await admin('GET', row.base)).body]) t.notMatch(answer, row.secret.value, 'masked in every answer');
      const masked = row.secret.path.split('.').reduce((o: any, p) => o?.[p], (await admin('GET', url)).json()); // eslint-disable-line @typescript-eslint/no-explicit-any
      t.equal(masked, '********', 'answered as the mask');
      const opened = await kernel.configObjects.resolve(row.type, 'default', name);
      t.equal(row.secret.path.split('.').reduce((o: any, p) => o?.[p], opened), row.secret.value, 'kept sealed, not lost'); // eslint-disable-line @typescript-eslint/no-explicit-any
    }

    const answers = row.listAnswers ?? { anonymous: 401, withoutPermission: 403 };
    t.equal((await kernel.app.inject({ method: 'GET', url: row.base, headers: { host: 'localhost' } })).statusCode, answers.anonymous, `no auth → ${answers.anonymous}`);
    const nobody = await createPrincipal(kernel, `nobody-${row.type}`);
    t.equal((await caller(kernel, nobody.headers)('GET', row.base)).statusCode, answers.withoutPermission, `no permission → ${answers.withoutPermission}`);
    const reader = await createPrincipal(kernel, `reader-${row.type}`, { permissions: [{ value: row.read }] });
    t.equal((await caller(kernel, reader.headers)('GET', row.base)).statusCode, 200, 'read permission reads');
    t.equal((await caller(kernel, reader.headers)('PUT', row.base, row.valid)).statusCode, 403, 'read permission cannot write');
    t.equal((await kernel.app.inject({ method: 'GET', url: row.base, headers: { host: 'evil.example', ...ADMIN_HEADERS } })).statusCode, 404, 'wrong host → 404');

    if (row.referrer) {
      const label = await row.referrer(name);
      const refused = await admin('DELETE', url);
      t.equal(refused.statusCode, 400, 'referenced delete → 400');
      t.equal(refused.json().error, code('005'), 'referenced delete → -005');
      t.match(refused.json().message, label, 'the message names the referrer');
    } else {
      t.equal((await admin('DELETE', url)).statusCode, 204, 'deleted');
      t.equal((await admin('GET', url)).statusCode, 404, 'gone');
    }

    const events = await kernel.db.knex('events').where({ object_type: row.type, object_id: name }).orderBy('seq');
    t.ok(events.some((e: Json) => e.code === row.codes.created && e.principal === 'administrator'), 'a created event names who');
    const update = events.find((e: Json) => e.code === row.codes.updated && e.principal === 'administrator');
    t.ok(update, 'an updated event');
    t.match(update?.payload ?? '', row.update.field, 'it names the changed field');
    if (!row.referrer) t.ok(events.some((e: Json) => e.code === row.codes.deleted), 'a deleted event');
    for (const e of events) t.notMatch(e.payload, SECRET, 'no secret in events');
  });
}

t.test('a CA imported through the configuration import is known to the CRL cache once committed', async (t) => {
  const info = (await admin('POST', '/api/v1/system/configurations/export', {})).json().info;
  const imported = await admin('POST', '/api/v1/system/configurations/import', { info, items: { certificateAuthorities: [{ name: 'imported-root', certificate: caCertificate.replace(/\r?\n/g, '\n'), trusted: true, crlUrl: 'http://crl.example/imported.crl' }] } });
  t.equal(imported.statusCode, 200, imported.body);
  t.match((await admin('GET', '/api/v1/cas/imported-root')).json(), { name: 'imported-root', trusted: true, crlUrl: 'http://crl.example/imported.crl' }, 'answered by its own route, derived fields and all');
  const crls = async () => (await admin('GET', '/api/v1/caches/crls/')).json() as Json[];
  await until('the CRL cache entry', async () => (await crls()).some((e) => JSON.stringify(e).includes('imported-root')));
  t.pass('the CRL cache heard of it after the commit');
});

t.test('no secret value in any log line', async (t) => {
  t.notMatch(capture.text, SECRET);
});
