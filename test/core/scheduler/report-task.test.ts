import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory } from '../../helpers/inventory-seed.js';
import { createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink } from '../../fixtures/channels/smtp.js';

type Json = Record<string, unknown>;
const headers = { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS };

t.test('the built-in report task mails the certificates its HCQL query matches as a CSV attachment', async (t) => {
  const smtp = await startSmtpSink(t);
  const kernel = await bootKernel(t, {
    scheduler: { processEveryMs: 50 },
    plugins: {
      instances: {
        'trigger-email': [
          { name: 'main', config: { host: '127.0.0.1', port: smtp.port, starttls: 'never', user: SMTP_USER, password: SMTP_PASSWORD, from: 'Certwright <certwright@example.org>', connectionTimeoutMs: 3000, greetingTimeoutMs: 3000, socketTimeoutMs: 5000 } },
        ],
      },
    },
  });
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    kernel.app.inject({ method, url: `/api/v1/scheduler/tasks/${url}`, headers: payload === undefined ? { host: 'localhost', ...ADMIN_HEADERS } : headers, payload: payload as object });
  const certs = await seedInventory(kernel, [
    { name: 'soon', subject: 'CN=soon.example.com', issuer: 'acme', key: 'ec', notBefore: -10, notAfter: 10, input: { team: 'pki', contactEmail: 'owner@example.com' } },
    { name: 'later', subject: 'CN=later.example.com', issuer: 'acme', key: 'ec', notBefore: -10, notAfter: 200 },
  ]);
  const team = await kernel.app.inject({ method: 'POST', url: '/api/v1/security/teams', headers, payload: { name: 'pki', contact: 'pki-contact@example.com', displayName: [{ lang: 'en', value: 'PKI' }] } });
  t.equal(team.statusCode < 300, true, team.body);
  await createPrincipal(kernel, 'alice', { email: 'alice@example.com', teams: [{ name: 'pki', manager: true }] });
  await createPrincipal(kernel, 'bob', { email: 'bob@example.com', teams: [{ name: 'pki' }] });

  const horizon = {
    name: 'expiring',
    type: 'report',
    cron: '0 0 8 * * ?',
    enabled: true,
    reportType: 'attachment_email',
    recipients: [{ type: 'static', email: 'pki-team@example.com' }, { type: 'team_contact', team: 'pki' }],
    cc: [{ type: 'team_manager', team: 'pki' }],
    bcc: [{ type: 'team_members', team: 'pki' }],
    from: 'horizon@example.com',
    title: 'Expiring certificates',
    isHtml: false,
    hqlType: 'hcql',
    hqlQuery: 'valid.until before 30d and status is valid',
    hqlFields: ['dn', 'notAfter', 'team'],
    hqlSortedBy: [{ element: 'notAfter', order: 'Asc' }],
    headers: [{ key: 'X-Report', value: 'expiring' }],
  };
  const created = await api('POST', '', horizon);
  t.equal(created.statusCode, 201, created.body);

  t.test('a manual run sends one message with the CSV', async (t) => {
    t.equal((await api('GET', 'expiring/run')).statusCode, 202);
    await until('the message', () => smtp.delivered.length === 1);
    const mail = smtp.delivered[0]!;
    t.same(mail.envelope.to.sort(), ['alice@example.com', 'bob@example.com', 'pki-contact@example.com', 'pki-team@example.com'], 'static, team contact, manager (cc) and members (bcc)');
    t.equal(mail.envelope.from, 'horizon@example.com', 'sent from the task\'s `from`');
    t.equal(mail.parsed.subject, 'Expiring certificates');
    t.equal(mail.parsed.headers.get('x-report'), 'expiring');
    t.match(mail.parsed.text, /1 certificate\(s\) match the query valid\.until before 30d/);
    const [attachment] = mail.parsed.attachments;
    t.equal(attachment?.filename, 'expiring.csv');
    t.equal(attachment?.contentType, 'text/csv');
    const lines = attachment!.content.toString('utf8').trim().split('\r\n');
    t.same(lines, ['_id,dn,notAfter,team', `${certs.get('soon')!._id},CN=soon.example.com,${new Date(certs.get('soon')!.notAfter).toISOString()},pki`], 'the matching certificate, the hqlFields columns (and _id)');
    await until('the result', async () => (await api('GET', 'expiring')).json().lastResult !== null);
    const ran = (await api('GET', 'expiring')).json();
    t.match(ran, { lastResult: { status: 'success', summary: 'report of 1 certificate(s) sent to 4 recipient(s)' }, status: 'success', detail: 'report of 1 certificate(s) sent to 4 recipient(s)' });
    t.equal(ran.lastExecutionDate, ran.lastRun, 'Horizon\'s names of the run state');
  });

  t.test('compressCsv, a fileName and an HTML body; every certificate without a query', async (t) => {
    const current = (await api('GET', 'expiring')).json() as Json;
    const res = await api('PUT', '', { ...current, hqlQuery: null, hqlFields: null, hqlSortedBy: null, cc: null, bcc: null, compressCsv: true, fileName: 'inventory', isHtml: true, body: '<p>Inventory</p>' });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.json().hqlQuery, undefined, 'a null clears the field');
    const before = smtp.delivered.length;
    await api('GET', 'expiring/run');
    await until('the message', () => smtp.delivered.length > before);
    const mail = smtp.delivered.at(-1)!;
    t.equal(String(mail.parsed.html).trim(), '<p>Inventory</p>');
    const [attachment] = mail.parsed.attachments;
    t.equal(attachment?.filename, 'inventory.csv.gz');
    const csv = gunzipSync(attachment!.content).toString('utf8').trim().split('\r\n');
    t.equal(csv.length, 3, 'a header and both certificates');
    t.match(csv[0], /^_id,dn,subjectAlternateNames,serial,/, "the CSV export's default columns");
  });

  t.test('a Quartz cron runs on time: every second', async (t) => {
    const res = await api('POST', '', { ...horizon, name: 'every-second', cron: '* * * * * ? *' });
    t.equal(res.statusCode, 201, res.body);
    const before = smtp.delivered.length;
    await until('a scheduled run', () => smtp.delivered.length > before, 10_000);
    t.pass('it ran without being asked');
    t.equal((await api('DELETE', 'every-second')).statusCode, 204);
  });

  t.test('refusals name the field (SCHED-002)', async (t) => {
    const problems: [string, Json, RegExp][] = [
      ['a bad query', { hqlQuery: 'valid.until befor 30d' }, /^hqlQuery: /],
      ['an unknown column', { hqlFields: ['colour'] }, /^hqlFields: .*colour/],
      ['an unknown team', { recipients: [{ type: 'team_contact', team: 'nobody' }] }, /^recipients\[0\]: team "nobody" does not exist/],
      ['a static recipient without address', { recipients: [{ type: 'static' }] }, /^recipients\[0\]: a static recipient needs an email address/],
      ['a bad sender', { from: 'not an address' }, /^from: /],
      ['another language', { hqlType: 'hrql' }, /^hqlType: "hrql" is not supported/],
      ['a reserved header', { headers: [{ key: 'Bcc', value: 'x@example.com' }] }, /^headers\[0\]\.key: /],
      ['a missing field', { title: null }, /must have required property 'title'/],
      ['a bad recipient type', { recipients: [{ type: 'everyone' }] }, /^parameters\.recipients\.0\.type: /],
      ['a report field on another type', { type: 'reporting' }, /these report fields apply to tasks of type "report" only/],
      ['a Quartz year', { cron: '0 0 8 * * ? 2030' }, /the year field "2030" is not supported/],
    ];
    for (const [what, change, message] of problems) {
      const res = await api('POST', '', { ...horizon, name: 'refused', ...change });
      t.equal(res.statusCode, 400, `${what}: 400`);
      t.match(res.json(), { error: 'SCHED-002', message }, what);
    }
    t.equal((await api('GET', 'refused')).statusCode, 404, 'nothing stored');
  });

  t.test("Certwright's form and mixed round trips", async (t) => {
    const { name: _n, type: _t, cron: _c, enabled: _e, ...parameters } = horizon;
    const native = await api('POST', '', { name: 'native', type: 'report', cron: '0 6 * * 1', parameters });
    t.equal(native.statusCode, 201, native.body);
    const got = native.json() as Json;
    t.match(got, { parameters: { title: 'Expiring certificates' }, title: 'Expiring certificates' }, 'answered flat too');
    // A Certwright client changes parameters and echoes the rest (the flat keys included) unchanged.
    const byParameters = await api('PUT', '', { ...got, parameters: { ...(got.parameters as Json), title: 'Changed in parameters' } });
    t.match(byParameters.json(), { title: 'Changed in parameters', parameters: { title: 'Changed in parameters' } }, 'the side that changed wins');
    // A Horizon client changes the flat key and echoes parameters unchanged.
    const byFlat = await api('PUT', '', { ...(byParameters.json() as Json), title: 'Changed flat' });
    t.match(byFlat.json(), { title: 'Changed flat', parameters: { title: 'Changed flat' } });
    const changed = byFlat.json() as Json;
    const both = await api('PUT', '', { ...changed, title: 'One', parameters: { ...(changed.parameters as Json), title: 'Other' } });
    t.match(both.json(), { error: 'SCHED-002', message: /title and parameters\.title disagree/ }, 'both changed differently: refused');
    const nativeCron = (await api('GET', 'native')).json();
    t.equal(new Date(nativeCron.nextRun).getUTCDay(), 1, "a cron expression keeps cron's numbering: 1 is Monday");
  });

  t.test('no SMTP server: the run fails, saying so', async (t) => {
    const bare = await bootKernel(t, { scheduler: { processEveryMs: 50 } });
    const res = await bare.app.inject({ method: 'POST', url: '/api/v1/scheduler/tasks', headers, payload: { ...horizon, recipients: [{ type: 'static', email: 'x@example.com' }], cc: null, bcc: null } });
    t.equal(res.statusCode, 201, res.body);
    await bare.app.inject({ method: 'GET', url: '/api/v1/scheduler/tasks/expiring/run', headers: { host: 'localhost', ...ADMIN_HEADERS } });
    const result = async () => (await bare.app.inject({ method: 'GET', url: '/api/v1/scheduler/tasks/expiring', headers: { host: 'localhost', ...ADMIN_HEADERS } })).json();
    await until('the result', async () => (await result()).lastResult !== null);
    t.match((await result()).lastResult, { status: 'failure', summary: 'no SMTP server configured (plugins.instances.trigger-email)' });
  });
});

t.test('saving a report needs search:certificates with no filter: a scheduler writer cannot mail itself the inventory', async (t) => {
  const kernel = await bootKernel(t);
  const report = { name: 'exfiltrate', type: 'report', cron: '0 0 8 * * ?', enabled: true, reportType: 'attachment_email', recipients: [{ type: 'static', email: 'me@example.com' }], from: 'me@example.com', title: 'All', isHtml: false, hqlType: 'hcql', hqlQuery: 'status is valid' };
  const writer = await createPrincipal(kernel, 'sched-writer', { permissions: [{ value: 'configuration:scheduler:write' }] });
  const narrow = await createPrincipal(kernel, 'sched-narrow', { permissions: [{ value: 'configuration:scheduler:write' }, { value: 'search:certificates', filter: 'team equals "pki"' }] });
  const full = await createPrincipal(kernel, 'sched-full', { permissions: [{ value: 'configuration:scheduler:write' }, { value: 'search:certificates' }] });
  const post = (who: { headers: Record<string, string> }, body: unknown) =>
    kernel.app.inject({ method: 'POST', url: '/api/v1/scheduler/tasks/', headers: { host: 'localhost', 'content-type': 'application/json', ...who.headers }, payload: body as object });
  for (const [who, what] of [[writer, 'no search permission'], [narrow, 'a filtered search permission']] as const) {
    const res = await post(who, report);
    t.equal(res.statusCode, 403, `${what}: 403`);
    t.equal((res.json() as Json).error, 'SEC-PERM-001');
  }
  t.equal((await kernel.db.knex('scheduled_tasks').where({ name: 'exfiltrate' })).length, 0, 'nothing was saved');
  t.equal((await post(full, report)).statusCode, 201, 'search:certificates with no filter may');
  const update = await kernel.app.inject({ method: 'PUT', url: '/api/v1/scheduler/tasks/', headers: { host: 'localhost', 'content-type': 'application/json', ...narrow.headers }, payload: { ...report, recipients: [{ type: 'static', email: 'other@example.com' }] } });
  t.equal(update.statusCode, 403, 'nor change its recipients without it');
});
