/**
 * Contract tests: the trigger tools of the vendor's MCP server (evertrust/horizon-mcp), each request sent
 * exactly as the tool sends it and each answer checked as the client reads it (transport facts:
 * mcp-config-client.ts). Line ranges are those of the index's copy: src/tools/config/triggers.ts at 03969a2
 * (create_trigger, update_trigger through _scaffold.ts), src/tools/triggers.ts at 1ae4e38 (list_triggers,
 * get_trigger, create_rest_notification, delete_trigger, simulate_trigger).
 *
 * Facts of those files the tests follow:
 * - config/triggers.ts mergeBody: the body is `{...config, name, type}`, Horizon's subtype keys flat
 *   (emailTemplate, webhookTemplate, sequence, attach*, retries, events, …); assertConfigBody refuses, on the
 *   client, any key outside its KNOWN_KEYS (so `connector` reaches the server, a made-up key does not).
 *   SPEC: routeCollection /api/v1/triggers, routeItem /api/v1/triggers/{name}, strip [_id, tenant], PUT on
 *   the collection (update = GET, strip, overrides = mergeBody(name, type, config), PUT).
 * - triggers.ts: list = GET /api/v1/triggers, its own normalizeItems (array, or `items`, or one object),
 *   then filtered on `type` === trigger_type and on the string `name` (helpers.ts applyNameFilter);
 *   get = GET /api/v1/triggers/{encodeURIComponent(name)}, the answer shown as JSON; create_rest_notification
 *   POSTs {name, type: "rest", events: [event], retries (default 10), sequence} and shows the answer as
 *   `data` (helpers.ts buildMutateResponse); delete = DELETE on the item route; simulate = PATCH
 *   /api/v1/triggers {name}, the answer shown as JSON ("Horizon executes it with a synthetic test context").
 *
 * Deliveries go to real local servers: an HTTP receiver (test/fixtures/channels/receiver.ts) standing in for
 * the REST endpoint and for Slack, and an SMTP server (smtp-server, test/fixtures/channels/smtp.ts).
 */
import t from 'tap';
import { startReceiver } from '../fixtures/channels/receiver.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink } from '../fixtures/channels/smtp.js';
import { bootKernel } from '../helpers/kernel.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath } from './mcp-config-client.js';

const receiver = await startReceiver(t);
const smtp = await startSmtpSink(t);
// The receiver is on loopback over http: the chat and webhook channels are told to allow both.
const egress = { allowHttp: true, allowPrivateNetworks: true };
const kernel = await bootKernel(t, {
  plugins: {
    instances: {
      'trigger-webhook': [{ name: 'default', config: egress }],
      'trigger-slack': [{ name: 'default', config: egress }],
      'trigger-email': [{ name: 'local', config: { host: '127.0.0.1', port: smtp.port, starttls: 'never', user: SMTP_USER, password: SMTP_PASSWORD, from: 'certwright@example.com' } }],
    },
  },
});
const mcp = new McpClient(kernel);
await mcp.init();

const SPEC = { routeCollection: '/api/v1/triggers', routeItem: '/api/v1/triggers/{name}', stripFields: ['_id', 'tenant'] } as const;
/** config/triggers.ts mergeBody: the tool's `config` spread first, then name and type. */
const mergeBody = (name: string, type: string, config: Json): Json => ({ ...config, name, type });
/** triggers.ts normalizeItems: an array, or `items`, or the object itself. */
const itemsOf = (data: unknown): Json[] => (Array.isArray(data) ? (data as Json[]) : (((data as Json).items as Json[] | undefined) ?? [data as Json]));

const EMAIL_TEMPLATE = {
  from: 'horizon@example.com',
  to: [{ type: 'static', email: 'pki-team@example.com' }, { type: 'requester' }],
  title: 'Certificate enrolled: {{certificate.dn}}',
  body: 'A certificate was enrolled.',
  isHtml: false,
};
const SLACK_PATH = '/slack/T000/B000/XXXX';

t.test('create_trigger — horizon-mcp src/tools/config/triggers.ts:L28-L38,L105-L117,L151-L175', async (t) => {
  const email = mergeBody('mcp-email', 'email', { events: ['on_enroll'], retries: 3, emailTemplate: EMAIL_TEMPLATE, attachPemCertificate: true });
  const res = await mcp.post(SPEC.routeCollection, email);
  expectOk(t, res, 'POST /api/v1/triggers (email)');
  // The create tool shows the answer as is: Horizon's keys are answered back beside Certwright's.
  t.match(res.body, {
    name: 'mcp-email',
    type: 'email',
    events: ['on_enroll'],
    retries: 3,
    emailTemplate: { from: 'horizon@example.com', to: EMAIL_TEMPLATE.to, title: EMAIL_TEMPLATE.title, body: EMAIL_TEMPLATE.body, isHtml: false },
    attachPemCertificate: true,
    channel: 'email',
    target: { to: ['pki-team@example.com'], subject: EMAIL_TEMPLATE.title, body: EMAIL_TEMPLATE.body },
  });

  const webhook = mergeBody('mcp-webhook', 'webhook', {
    events: ['on_revoke'],
    webhookTemplate: { to: { type: 'static', webhook: { type: 'slack', url: `${receiver.base}${SLACK_PATH}` } }, title: 'Revoked: {{certificate.dn}}' },
  });
  const hook = await mcp.post(SPEC.routeCollection, webhook);
  expectOk(t, hook, 'POST /api/v1/triggers (webhook)');
  t.match(hook.body, { name: 'mcp-webhook', type: 'webhook', events: ['on_revoke'], channel: 'slack', webhookTemplate: { to: { type: 'static', webhook: { type: 'slack', url: '********' } }, title: 'Revoked: {{certificate.dn}}' } });
  t.notMatch(hook.raw, /XXXX/, 'the Slack URL is a credential: answered masked, as the channel seals it');

  expectProblem(t, await mcp.post(SPEC.routeCollection, email), 'the same trigger again', { status: [400, 409], suffix: '004' });
  // A type the tool offers that has no counterpart here is refused as invalid, the field named.
  const akv = expectProblem(t, await mcp.post(SPEC.routeCollection, mergeBody('mcp-akv', 'akv', { connector: 'vault' })), 'type akv', { status: 400, suffix: '002' });
  t.match(akv.detail, /^type: "akv"/);
  const bcc = expectProblem(t, await mcp.post(SPEC.routeCollection, mergeBody('mcp-bcc', 'email', { events: ['on_enroll'], emailTemplate: { ...EMAIL_TEMPLATE, bcc: [{ type: 'static', email: 'audit@example.com' }] } })), 'an emailTemplate with bcc', {
    status: 400,
    suffix: '002',
  });
  t.match(bcc.detail, /^emailTemplate\.bcc:/);
});

t.test('create_rest_notification — horizon-mcp src/tools/triggers.ts:L356-L571', async (t) => {
  // The tool's body (L537-L552): name, type rest, the one event, retries (default 10), the sequence as given.
  const body = {
    name: 'mcp-rest',
    type: 'rest',
    events: ['on_enroll'],
    retries: 10,
    sequence: [
      {
        url: `${receiver.base}/deploy`,
        method: 'POST',
        authenticationType: 'noauth',
        expectedHttpCodes: [200, 201],
        timeout: '30 seconds',
        headers: [{ name: 'X-Source', value: 'horizon-mcp' }],
        payloadType: 'json',
        payload: '{"serial": "{{certificate.serial}}"}',
      },
    ],
  };
  const res = await mcp.post('/api/v1/triggers', body);
  expectOk(t, res, 'POST /api/v1/triggers (rest)');
  t.type(res.body, 'object', 'buildMutateResponse takes the answer as an object (data)');
  t.match(res.body, { name: 'mcp-rest', type: 'rest', events: ['on_enroll'], retries: 10, sequence: body.sequence, channel: 'webhook', target: { url: `${receiver.base}/deploy`, headers: { 'X-Source': 'horizon-mcp' }, timeoutMs: 30_000, secret: '********' } });

  // A second step, another method or an authentication are refused as invalid, the field named.
  const twoSteps = expectProblem(t, await mcp.post('/api/v1/triggers', { ...body, name: 'mcp-rest-2', sequence: [body.sequence[0], body.sequence[0]] }), 'two steps', { status: 400, suffix: '002' });
  t.match(twoSteps.detail, /^sequence:/);
  const basic = expectProblem(t, await mcp.post('/api/v1/triggers', { ...body, name: 'mcp-rest-2', sequence: [{ ...body.sequence[0], authenticationType: 'basic', credentials: 'svc' }] }), 'basic auth', { status: 400, suffix: '002' });
  t.match(basic.detail, /^sequence\[0\]\.credentials: .*no credential is named "svc"/, 'basic auth needs credentials that exist');
  const x509 = expectProblem(t, await mcp.post('/api/v1/triggers', { ...body, name: 'mcp-rest-2', sequence: [{ ...body.sequence[0], authenticationType: 'x509', credentials: 'svc' }] }), 'x509 auth', { status: 400, suffix: '002' });
  t.match(x509.detail, /^sequence\[0\]\.authenticationType:/);
});

t.test('create_rest_notification with basic authentication from credentials, rotated by a PUT', async (t) => {
  const credentials = { name: 'svc', type: 'password', login: 'hook-user', password: { value: 'First-Hook-Password' }, targets: ['trigger'] };
  expectOk(t, await mcp.post('/api/v1/security/credentials', credentials), 'create credentials', [201]);
  const step = { url: `${receiver.base}/basic`, method: 'POST', authenticationType: 'basic', credentials: 'svc', expectedHttpCodes: [200], timeout: '30 seconds' };
  const created = await mcp.post('/api/v1/triggers', { name: 'mcp-rest-basic', type: 'rest', events: ['on_enroll'], retries: 1, sequence: [step] });
  expectOk(t, created, 'create a rest trigger with basic auth', [201]);
  t.match(created.body, { sequence: [{ authenticationType: 'basic', credentials: 'svc' }] }, 'answered as sent');
  const basicOf = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

  expectOk(t, await mcp.patch('/api/v1/triggers', { name: 'mcp-rest-basic' }), 'simulate', [200]);
  t.equal(receiver.received.filter((r) => r.path === '/basic').at(-1)?.headers.authorization, basicOf('hook-user', 'First-Hook-Password'), 'the Authorization header comes from the credentials');
  expectOk(t, await mcp.put('/api/v1/security/credentials', { ...credentials, password: { value: 'Rotated-Hook-Password' } }), 'rotate the password', [200]);
  expectOk(t, await mcp.patch('/api/v1/triggers', { name: 'mcp-rest-basic' }), 'simulate again', [200]);
  t.equal(receiver.received.filter((r) => r.path === '/basic').at(-1)?.headers.authorization, basicOf('hook-user', 'Rotated-Hook-Password'), 'the rotation applies to the next delivery');
  const inUse = expectProblem(t, await mcp.delete('/api/v1/security/credentials/svc'), 'delete credentials a trigger uses', { status: 400, suffix: '005' });
  t.match(inUse.message, 'trigger/mcp-rest-basic');
  t.equal((await mcp.delete(itemPath(SPEC.routeItem, 'mcp-rest-basic'))).status, 204);
  t.equal((await mcp.delete('/api/v1/security/credentials/svc')).status, 204, 'deletable once unused');
});

t.test('list_triggers — horizon-mcp src/tools/triggers.ts:L273-L325', async (t) => {
  const res = await mcp.get('/api/v1/triggers');
  expectOk(t, res, 'GET /api/v1/triggers', [200]);
  const items = itemsOf(res.body);
  // trigger_type "email", then name_contains "mcp".
  const emails = items.filter((i) => i.type === 'email').filter((i) => typeof i.name === 'string' && i.name.toLowerCase().includes('mcp'));
  t.same(emails.map((i) => i.name), ['mcp-email']);
  t.same(items.filter((i) => i.type === 'rest').map((i) => i.name), ['mcp-rest']);
  t.same(items.filter((i) => i.type === 'webhook').map((i) => i.name), ['mcp-webhook']);
});

t.test('get_trigger — horizon-mcp src/tools/triggers.ts:L327-L350', async (t) => {
  const res = await mcp.get(`/api/v1/triggers/${encodeURIComponent('mcp-email')}`);
  expectOk(t, res, 'GET /api/v1/triggers/mcp-email', [200]);
  t.notOk(Array.isArray(res.body), 'one object');
  t.match(res.body, { name: 'mcp-email', type: 'email', events: ['on_enroll'], retries: 3, emailTemplate: EMAIL_TEMPLATE, attachPemCertificate: true });
  expectProblem(t, await mcp.get('/api/v1/triggers/mcp-nobody'), 'an unknown trigger', { status: 404, suffix: '003' });
});

t.test('update_trigger — horizon-mcp src/tools/config/triggers.ts:L28-L38,L105-L117,L177-L185 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  // config {retries: 5}: the overrides are {retries: 5, name, type}; the rest is the GET's echo.
  const { current, res } = await getStripMergePut(t, mcp, SPEC, 'mcp-email', mergeBody('mcp-email', 'email', { retries: 5 }));
  expectOk(t, res, 'PUT /api/v1/triggers', [200]);
  t.match(res.body, { name: 'mcp-email', type: 'email', retries: 5, events: ['on_enroll'], emailTemplate: EMAIL_TEMPLATE, attachPemCertificate: true, _id: current._id });

  // A new template through `config`: the Horizon keys decide, the echoed (older) target is not a change.
  const changed = { ...EMAIL_TEMPLATE, title: 'Enrolled (v2)' };
  const second = await getStripMergePut(t, mcp, SPEC, 'mcp-email', mergeBody('mcp-email', 'email', { events: ['on_enroll'], retries: 5, emailTemplate: changed, attachPemCertificate: true }));
  expectOk(t, second.res, 'PUT /api/v1/triggers (new title)', [200]);
  t.match(second.res.body, { emailTemplate: { title: 'Enrolled (v2)' }, target: { subject: 'Enrolled (v2)' } });

  // The Slack URL comes back masked from the GET and is sent back so: the sealed URL is kept.
  const hook = await getStripMergePut(t, mcp, SPEC, 'mcp-webhook', mergeBody('mcp-webhook', 'webhook', { retries: 2 }));
  expectOk(t, hook.res, 'PUT /api/v1/triggers (webhook)', [200]);
  t.match(hook.res.body, { retries: 2, channel: 'slack', webhookTemplate: { to: { webhook: { url: '********' } } } });

  const after = await mcp.get(itemPath(SPEC.routeItem, 'mcp-email'));
  t.match(after.body, { retries: 5, emailTemplate: { title: 'Enrolled (v2)' } });
});

t.test('simulate_trigger — horizon-mcp src/tools/triggers.ts:L620-L653', async (t) => {
  const mail = await mcp.patch('/api/v1/triggers', { name: 'mcp-email' });
  expectOk(t, mail, 'PATCH /api/v1/triggers {name: mcp-email}', [200]);
  t.match(mail.body, { type: 'email', status: 'success', name: 'mcp-email', event: 'on_enroll' });
  t.type((mail.body as Json).message, 'string');
  t.equal(smtp.delivered.length, 1, 'one mail, through the SMTP server');
  t.same(smtp.delivered[0]!.envelope.to, ['pki-team@example.com'], 'to the static recipient (the requester has no address without a request)');
  t.equal(smtp.delivered[0]!.parsed.subject, 'Enrolled (v2)', 'the title as updated; no certificate in a test run');

  const rest = await mcp.patch('/api/v1/triggers', { name: 'mcp-rest' });
  expectOk(t, rest, 'PATCH /api/v1/triggers {name: mcp-rest}', [200]);
  t.match(rest.body, { type: 'rest', status: 'success', requestURL: `${receiver.base}/deploy`, event: 'on_enroll' });
  const deploy = receiver.received.find((r) => r.path === '/deploy');
  t.ok(deploy, 'the REST endpoint was called');
  t.equal(deploy?.method, 'POST');
  t.equal(deploy?.headers['x-source'], 'horizon-mcp', 'with the header of the step');
  t.match(deploy?.headers['x-certwright-signature'], /^sha256=[0-9a-f]{64}$/, 'signed with the generated secret');
  t.match(JSON.parse(deploy?.body ?? '{}'), { code: 'CERTIFICATE-ISSUED', certificate: null, trigger: { name: 'mcp-rest', event: 'issued' }, payload: { run: true, test: true } });

  const slack = await mcp.patch('/api/v1/triggers', { name: 'mcp-webhook' });
  expectOk(t, slack, 'PATCH /api/v1/triggers {name: mcp-webhook}', [200]);
  t.match(slack.body, { type: 'webhook', status: 'success', requestURL: '********', event: 'on_revoke' });
  const posted = receiver.received.find((r) => r.path === SLACK_PATH);
  t.ok(posted, 'the Slack webhook (kept through the update) was called');
  t.match(JSON.parse(posted?.body ?? '{}'), { text: 'Revoked: ' });

  // A failing receiver is a 200 whose status says so (the tool shows the answer either way).
  receiver.respond((_req, res) => res.writeHead(503).end('down'));
  const down = await mcp.patch('/api/v1/triggers', { name: 'mcp-rest' });
  receiver.respond((_req, res) => res.writeHead(200).end('ok'));
  expectOk(t, down, 'PATCH while the endpoint is down', [200]);
  t.match(down.body, { status: 'failure', delivered: false, message: /503/ });

  expectProblem(t, await mcp.patch('/api/v1/triggers', { name: 'mcp-nobody' }), 'an unknown trigger', { status: 404, suffix: '003' });
});

t.test('delete_trigger — horizon-mcp src/tools/triggers.ts:L577-L614', async (t) => {
  for (const name of ['mcp-email', 'mcp-rest', 'mcp-webhook']) {
    const res = await mcp.delete(`/api/v1/triggers/${encodeURIComponent(name)}`);
    t.ok(res.status === 204 || (res.status === 200 && res.contentType === 'application/json'), `DELETE ${name} answered ${res.status}: 204, or 200 with JSON`);
  }
  expectProblem(t, await mcp.get('/api/v1/triggers/mcp-email'), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete('/api/v1/triggers/mcp-email'), 'a second delete', { status: 404, suffix: '003' });
});
