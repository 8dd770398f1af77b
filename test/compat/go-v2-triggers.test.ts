/**
 * Contract tests for the trigger operations of the vendor's OpenAPI-generated Go SDK, evertrust/horizon-go v2
 * (module github.com/evertrust/horizon-go/v2), as stored in the public index; conventions of go-v2-config.test.ts.
 * Operation lines cite docs/TriggerAPI.md @46c9c95 (path, body model, return model, declared Accept); model
 * lines cite docs/<Model>.md (its property table: a property not marked "Pointer to" is required and checked by
 * the model's UnmarshalJSON, models/model_rest_response.go @1071ea1 UnmarshalJSON; unknown keys land in
 * AdditionalProperties, so Certwright's own keys beside Horizon's do no harm). Commits: docs/EmailTemplate.md,
 * docs/EmailRecipient.md, docs/WebhookTemplate.md, docs/WebhookRecipient.md, docs/RESTHeader.md,
 * docs/TriggerTestRequest.md, docs/MapEntry.md, docs/AWSTrigger.md, docs/BasicError.md @46c9c95; docs/Webhook.md
 * @9bb7c7b; docs/EmailNotificationResponse.md, docs/WebhookNotificationResponse.md @687c21d;
 * docs/EmailNotification.md, docs/TriggerTest200Response.md @1071ea1; docs/WebhookNotification.md @18774e9.
 * The REST trigger has two versions in the index, both replayed: the request at the top level (docs/REST.md and
 * docs/RESTResponse.md @46c9c95, API up to 2.9) and the request in `sequence` (docs/REST.md @6fc5fe1,
 * docs/RESTResponse.md @ea1b201); Certwright accepts either and answers both, so either SDK decodes the answer.
 *
 * What the generated client does, checked here (api_trigger.go @18774e9): X-API-KEY and X-API-ID on every call;
 * `Content-Type: application/json` only with a body; `Accept: application/json` for the operations with a
 * return type, `application/problem+json` for TriggerDelete (selectHeaderAccept); TriggerList sends `types`
 * "multi" (one `types=` per value) and `module` once; a body is the oneOf member's ToMap through json.Marshal
 * (models/model_trigger_update_request.go @18774e9 MarshalJSON: the first member set; keys sorted, optional keys
 * left out when unset); a status >= 300 is an error whose body is decoded as BasicError; a success body is
 * decoded when its Content-Type matches JsonCheck. The answers of Add/Get/Update (TriggerUpdate200Response) and
 * each item of TriggerList (TriggerList200ResponseInner, models/model_trigger_list_200_response_inner.go @18774e9)
 * are oneOf over the trigger response models and decode when at least one member decodes (match >= 1); the
 * members Certwright can answer are EmailNotificationResponse, WebhookNotificationResponse and RESTResponse.
 * Deliveries of the test runs go to real local servers: an HTTP receiver (test/fixtures/channels/receiver.ts) for
 * the REST endpoint and Slack, and an SMTP server (test/fixtures/channels/smtp.ts).
 *
 * A trigger written in Certwright's shape ({channel, target, …}, no `type`) also answers a Horizon view derived
 * from its channel (core/triggers/horizon/derived.ts): email → EmailNotificationResponse, slack/teams/mattermost →
 * WebhookNotificationResponse (URL masked), webhook → RESTResponse (both versions). So TriggerList without
 * `types` decodes with such triggers in it, and a GET → PUT of one (the view sent back unchanged) leaves it as it
 * was, in Certwright's shape. Known gap: a trigger whose channel has no Horizon counterpart (`log`, a third-party
 * plugin's channel) is answered in Certwright's shape alone; no oneOf member decodes it (every one requires `type`
 * and the subtype's template), so TriggerList without `types` fails as a whole while one exists. With `types`
 * (e.g. email, webhook, rest) it is left out and the call succeeds.
 * Not replayed: the third-party trigger members (AWS, AzureKeyVault, F5, GCM, IntunePKCS, LDAP, Netscaler):
 * Certwright refuses them (TRG-002, one test below).
 */
import t, { type Test } from 'tap';
import { startReceiver } from '../fixtures/channels/receiver.js';
import { SMTP_PASSWORD, SMTP_USER, startSmtpSink } from '../fixtures/channels/smtp.js';
import { bootKernel, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';

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

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** Headers of a generated operation: Content-Type only with a body, Accept as selectHeaderAccept picks it. */
function v2Headers(withBody: boolean, accept: string): Record<string, string> {
  return { ...(withBody ? { 'Content-Type': 'application/json' } : {}), Accept: accept, 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
}
/** json.Marshal of a map: keys in sorted order, at every depth (what ToMap → json.Marshal sends). */
const goJson = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(goJson).join(',')}]` : v !== null && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${goJson((v as Json)[k])}`).join(',')}}` : JSON.stringify(v);
/** An operation with a return type (declares "application/json, application/problem+json"). */
async function v2(method: Method, path: string, body?: unknown): Promise<Res> {
  return kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...v2Headers(body !== undefined, 'application/json') }, ...(body === undefined ? {} : { payload: goJson(body) }) });
}
/** An operation with no success body (declares only "application/problem+json"). */
async function v2NoContent(method: Method, path: string): Promise<Res> {
  return kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...v2Headers(false, 'application/problem+json') } });
}
/** Success with a return type: status < 300 and a Content-Type the client decodes. */
function v2Ok(t: Test, res: Res): Json {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 400)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  return JSON.parse(res.body) as Json;
}
/** An error: status >= 300, its body decoded as BasicError (api_trigger.go error branches). */
function v2Error(t: Test, res: Res, status: number, code: string): Json {
  t.equal(res.statusCode, status, `status ${status}: ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'the error body is decoded (JsonCheck)');
  const body = JSON.parse(res.body) as Json;
  t.same(goDecodeErrors(body, basicError), [], 'decodes as BasicError');
  t.equal(body.error, code);
  return body;
}

// ---- model shapes -------------------------------------------------------------------------------------
const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
/** docs/BasicError.md @46c9c95 L7-L11. */
const basicError: GoShape = { object: { detail: str, error: str, message: str, status: int, title: str }, required: ['error', 'message', 'status', 'title'] };
/** docs/EmailRecipient.md @46c9c95 L7-L9. */
const emailRecipient: GoShape = { object: { email: str, label: str, type: str }, required: ['type'] };
/** docs/EmailTemplate.md @46c9c95 L7-L11. */
const emailTemplate: GoShape = { object: { body: str, from: str, isHtml: bool, title: str, to: { array: emailRecipient } }, required: ['from', 'isHtml', 'title', 'to'] };
/** docs/EmailNotificationResponse.md @687c21d L7-L22. */
const emailNotificationResponse: GoShape = {
  object: {
    _id: str, attachDerCertificate: bool, attachPemBundle: bool, attachPemCertificate: bool, attachPkcs7: bool, attachPkcs7Bundle: bool, attachPkcs12: bool,
    emailTemplate, ifPkcs12: bool, type: str, events: { array: str }, licenceUsagePercent: int, name: str, retries: int, runOnRenewed: bool, runPeriod: str,
  },
  required: ['_id', 'emailTemplate', 'type', 'events', 'name'],
};
/** docs/Webhook.md @9bb7c7b L7-L8, docs/WebhookRecipient.md @46c9c95 L7-L8, docs/WebhookTemplate.md @46c9c95 L7-L9. */
const webhook: GoShape = { object: { type: str, url: str }, required: ['type', 'url'] };
const webhookTemplate: GoShape = { object: { body: str, title: str, to: { object: { type: str, webhook }, required: ['type'] } }, required: ['title', 'to'] };
/** docs/WebhookNotificationResponse.md @687c21d L7-L17. */
const webhookNotificationResponse: GoShape = {
  object: { _id: str, proxy: str, retries: 'any', timeout: str, type: str, webhookTemplate, events: { array: str }, licenceUsagePercent: int, name: str, runOnRenewed: bool, runPeriod: str },
  required: ['_id', 'type', 'webhookTemplate', 'events', 'name'],
};
/** docs/RESTHeader.md @46c9c95 L7-L8. */
const restHeader: GoShape = { object: { name: str, value: str }, required: ['name', 'value'] };
/** docs/RESTResponse.md @46c9c95 L7-L24: the request at the top level. */
const restResponseTopLevel: GoShape = {
  object: {
    _id: str, authenticationType: str, credentials: str, expectedHttpCodes: { array: int }, headers: { array: restHeader }, method: str, payload: str, payloadType: str,
    proxy: str, retries: 'any', timeout: str, type: str, url: str, events: { array: str }, licenseUsagePercent: int, name: str, runOnRenewed: bool, runPeriod: str,
  },
  required: ['_id', 'authenticationType', 'expectedHttpCodes', 'method', 'timeout', 'type', 'url', 'events', 'name'],
};
/** docs/RESTResponse.md @ea1b201 L7-L15: the request in `sequence` ([]interface{}). */
const restResponseSequence: GoShape = {
  object: { _id: str, retries: 'any', sequence: { array: 'any' }, type: str, events: { array: str }, licenseUsagePercent: int, name: str, runOnRenewed: bool, runPeriod: str },
  required: ['_id', 'sequence', 'type', 'events', 'name'],
};
/** docs/TriggerTest200Response.md @1071ea1 L7-L15. */
const triggerTest200Response: GoShape = {
  object: { message: str, status: str, requestBody: str, requestHeaders: { array: restHeader }, requestURL: str, responseBody: str, responseCode: int, responseHeaders: { array: restHeader }, type: str },
  required: ['message', 'status', 'requestURL', 'type'],
};
const TRIGGER_MEMBERS: [string, GoShape][] = [
  ['EmailNotificationResponse', emailNotificationResponse],
  ['WebhookNotificationResponse', webhookNotificationResponse],
  ['RESTResponse (top level)', restResponseTopLevel],
  ['RESTResponse (sequence)', restResponseSequence],
];
/** TriggerUpdate200Response / TriggerList200ResponseInner: decodes when one member decodes; answers the members that do. */
function oneOfMembers(value: unknown): string[] {
  return TRIGGER_MEMBERS.filter(([, shape]) => goDecodeErrors(value, shape).length === 0).map(([name]) => name);
}

// ---- what the client sends ---------------------------------------------------------------------------
/** NewEmailNotification(NewEmailTemplate(from, false, title, [static recipient, requester]), "email", ["on_enroll"], name) + SetRetries(3) + SetAttachPemCertificate(true). */
const emailNotification = (name: string, title = 'Enrolled: {{certificate.dn}}'): Json => ({
  attachPemCertificate: true,
  emailTemplate: { from: 'horizon@example.com', isHtml: false, title, to: [{ email: 'pki-team@example.com', type: 'static' }, { type: 'requester' }] },
  events: ['on_enroll'],
  name,
  retries: 3,
  type: 'email',
});
const SLACK_PATH = '/slack/T000/B000/GO-V2';
/** NewWebhookNotification("webhook", NewWebhookTemplate(title, {static, {slack, url}}), ["on_revoke"], name). */
const webhookNotification = (name: string, url = `${receiver.base}${SLACK_PATH}`): Json => ({
  events: ['on_revoke'],
  name,
  type: 'webhook',
  webhookTemplate: { title: 'Revoked: {{certificate.dn}}', to: { type: 'static', webhook: { type: 'slack', url } } },
});
/** docs/REST.md @46c9c95 L7-L23: NewREST(authenticationType, expectedHttpCodes, method, timeout, "rest", url, events, name) + SetHeaders. */
const restTopLevel = (name: string, path = '/deploy'): Json => ({
  authenticationType: 'noauth',
  events: ['on_enroll'],
  expectedHttpCodes: [200, 201],
  headers: [{ name: 'X-Source', value: 'horizon-go' }],
  method: 'POST',
  name,
  timeout: '30 seconds',
  type: 'rest',
  url: `${receiver.base}${path}`,
});
/** docs/REST.md @6fc5fe1 L7-L14: NewREST("rest", sequence, name, events) + SetRetries(5). */
const restSequence = (name: string, path = '/sequence'): Json => ({
  events: ['on_revoke'],
  name,
  retries: 5,
  sequence: [{ authenticationType: 'noauth', expectedHttpCodes: [200], method: 'POST', payload: '{"serial": "{{certificate.serial}}"}', payloadType: 'json', url: `${receiver.base}${path}` }],
  type: 'rest',
});

// ---- TriggerAPI ---------------------------------------------------------------------------------------

t.test('TriggerAPI.TriggerAdd (email) — horizon-go docs/TriggerAPI.md:L16-L79 (EmailNotification docs/EmailNotification.md:L7-L21 → TriggerUpdate200Response: EmailNotificationResponse docs/EmailNotificationResponse.md:L7-L22)', async (t) => {
  const res = await v2('POST', '/api/v1/triggers', emailNotification('go-email'));
  const body = v2Ok(t, res);
  t.same(oneOfMembers(body), ['EmailNotificationResponse'], 'decodes as TriggerUpdate200Response (its email member)');
  t.match(body, { name: 'go-email', type: 'email', events: ['on_enroll'], retries: 3, attachPemCertificate: true });
  t.match(body.emailTemplate, { from: 'horizon@example.com', isHtml: false, title: 'Enrolled: {{certificate.dn}}', to: [{ type: 'static', email: 'pki-team@example.com' }, { type: 'requester' }] });
});

t.test('TriggerAPI.TriggerAdd (webhook) — horizon-go docs/TriggerAPI.md:L16-L79 (WebhookNotification docs/WebhookNotification.md:L7-L16 → WebhookNotificationResponse docs/WebhookNotificationResponse.md:L7-L17)', async (t) => {
  const res = await v2('POST', '/api/v1/triggers', webhookNotification('go-webhook'));
  const body = v2Ok(t, res);
  t.same(oneOfMembers(body), ['WebhookNotificationResponse'], 'decodes as its webhook member');
  t.match(body, { name: 'go-webhook', type: 'webhook', events: ['on_revoke'], webhookTemplate: { title: 'Revoked: {{certificate.dn}}', to: { type: 'static', webhook: { type: 'slack', url: '********' } } } });
  t.notMatch(res.body, /GO-V2/, 'the Slack URL is a credential: answered masked');
});

t.test('TriggerAPI.TriggerAdd (rest, request at the top level) — horizon-go docs/TriggerAPI.md:L16-L79 (REST docs/REST.md @46c9c95:L7-L23 → RESTResponse @46c9c95:L7-L24 and @ea1b201:L7-L15)', async (t) => {
  const res = await v2('POST', '/api/v1/triggers', restTopLevel('go-rest-flat'));
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, restResponseTopLevel), [], 'decodes as the RESTResponse of the SDK that sent it');
  t.same(goDecodeErrors(body, restResponseSequence), [], 'and as the later RESTResponse (sequence)');
  t.match(body, { name: 'go-rest-flat', type: 'rest', url: `${receiver.base}/deploy`, method: 'POST', authenticationType: 'noauth', expectedHttpCodes: [200, 201], timeout: '30 seconds', headers: [{ name: 'X-Source', value: 'horizon-go' }] });
  t.same(body.sequence, [{ authenticationType: 'noauth', expectedHttpCodes: [200, 201], headers: [{ name: 'X-Source', value: 'horizon-go' }], method: 'POST', timeout: '30 seconds', url: `${receiver.base}/deploy` }], 'kept as its one-step sequence');
  t.match(body, { channel: 'webhook', target: { url: `${receiver.base}/deploy`, headers: { 'X-Source': 'horizon-go' }, timeoutMs: 30_000 } });

  // The top-level request is checked as a step is, the field named as sent.
  const get = v2Error(t, await v2('POST', '/api/v1/triggers', { ...restTopLevel('go-rest-get'), method: 'GET' }), 400, 'TRG-002');
  t.match(get.detail, /^method: the webhook channel sends POST only/);
});

t.test('TriggerAPI.TriggerAdd (rest, sequence) — horizon-go docs/TriggerAPI.md:L16-L79 (REST docs/REST.md @6fc5fe1:L7-L14 → RESTResponse @ea1b201:L7-L15 and @46c9c95:L7-L24)', async (t) => {
  const res = await v2('POST', '/api/v1/triggers', restSequence('go-rest-seq'));
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, restResponseSequence), [], 'decodes as the RESTResponse of the SDK that sent it');
  t.same(goDecodeErrors(body, restResponseTopLevel), [], 'and as the earlier RESTResponse (top level)');
  t.match(body, { name: 'go-rest-seq', type: 'rest', retries: 5, events: ['on_revoke'], sequence: restSequence('go-rest-seq').sequence });
  t.match(body, { url: `${receiver.base}/sequence`, method: 'POST', authenticationType: 'noauth', expectedHttpCodes: [200], timeout: null, payloadType: 'json' }, 'the top-level keys read from sequence[0]');
});

t.test('TriggerAPI.TriggerAdd (a third-party type) — horizon-go docs/TriggerAPI.md:L16-L79 (AWSTrigger docs/AWSTrigger.md:L7-L10): 400 TRG-002', async (t) => {
  // The doc's own example: NewAWSTrigger(connector, name, "aws") + SetRetries(2).
  const res = await v2('POST', '/api/v1/triggers', { connector: 'acm-prod', name: 'go-aws', retries: 2, type: 'aws' });
  const body = v2Error(t, res, 400, 'TRG-002');
  t.match(body.detail, /^type: "aws" \(a third-party publication trigger\) has no counterpart/);
  t.equal((await v2('GET', `/api/v1/triggers/${goPathEscape('go-aws')}`)).statusCode, 404, 'nothing was created');
});

t.test('TriggerAPI.TriggerList — horizon-go docs/TriggerAPI.md:L220-L285 ([]TriggerList200ResponseInner; api_trigger.go TriggerListExecute: types "multi", module)', async (t) => {
  const names = (body: Json): string[] => (body as Json[]).map((i) => i.name as string).sort();
  const all = v2Ok(t, await v2('GET', '/api/v1/triggers'));
  t.ok(Array.isArray(all), 'a JSON array');
  for (const item of all as Json[]) t.not(oneOfMembers(item).length, 0, `${item.name} decodes as TriggerList200ResponseInner`);
  t.same(names(all), ['go-email', 'go-rest-flat', 'go-rest-seq', 'go-webhook']);

  // Types([]string{"email", "rest"}): one `types=` per value.
  const some = v2Ok(t, await v2('GET', '/api/v1/triggers?types=email&types=rest'));
  t.same(names(some), ['go-email', 'go-rest-flat', 'go-rest-seq'], 'types=email&types=rest');
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?types=webhook'))), ['go-webhook'], 'one type');
  t.same(v2Ok(t, await v2('GET', '/api/v1/triggers?types=aws')), [], 'a type no trigger has');
  // Module("webra"): a Certwright trigger runs for the certificates of every module.
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?types=email&module=webra'))), ['go-email'], 'module with types');
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?module=webra'))), names(all), 'module alone keeps every trigger');
});

/** Certwright's own API (not the SDK): a trigger written in Certwright's shape. */
const ADMIN = { host: 'localhost', 'x-api-id': 'administrator', 'x-api-key': TEST_ADMIN_SECRET };
async function certwrightPost(t: Test, body: Json): Promise<Json> {
  const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/triggers/', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: body });
  t.equal(res.statusCode, 201, res.body);
  return res.json() as Json;
}
const certwrightDelete = async (name: string): Promise<number> => (await kernel.app.inject({ method: 'DELETE', url: `/api/v1/triggers/${name}`, headers: ADMIN })).statusCode;
const CW_SLACK_PATH = '/slack/T000/B000/CW-PLAIN';
const certwrightShaped: Json[] = [
  {
    name: 'cw-email',
    channel: 'email',
    target: { to: ['pki@example.com', '{{certificate.contactEmail}}'], cc: ['audit@example.com'], subject: 'Expiring: {{certificate.dn}}', html: '<p>{{certificate.daysLeft}} days</p>' },
    events: ['expiring'],
    thresholds: [30],
    retries: 2,
  },
  { name: 'cw-slack', channel: 'slack', target: { url: `${receiver.base}${CW_SLACK_PATH}`, text: 'Revoked: {{certificate.dn}}\nSerial {{certificate.serial}}' }, events: ['revoked'] },
  { name: 'cw-webhook', channel: 'webhook', target: { url: `${receiver.base}/plain`, secret: 'a-signing-secret-of-some-length', headers: { 'X-Team': 'pki' }, timeoutMs: 5000 }, events: ['revoked', 'issued'] },
];

t.test("TriggerAPI.TriggerList with triggers written in Certwright's shape (email, slack, webhook) — horizon-go docs/TriggerAPI.md:L220-L285: each decodes by its derived Horizon view", async (t) => {
  for (const body of certwrightShaped) await certwrightPost(t, body);
  const all = v2Ok(t, await v2('GET', '/api/v1/triggers'));
  for (const item of all as Json[]) t.not(oneOfMembers(item).length, 0, `${item.name} decodes as TriggerList200ResponseInner`);
  const byName = new Map((all as Json[]).map((i) => [i.name as string, i]));

  const mail = byName.get('cw-email')!;
  t.same(oneOfMembers(mail), ['EmailNotificationResponse']);
  t.match(mail, { type: 'email', events: ['on_expire'], runPeriod: '30 days', retries: 2, channel: 'email', thresholds: [30], target: { subject: 'Expiring: {{certificate.dn}}' } });
  t.same(mail.emailTemplate, {
    from: '',
    to: [{ type: 'static', email: 'pki@example.com' }, { type: 'contact' }],
    cc: [{ type: 'static', email: 'audit@example.com' }],
    isHtml: true,
    title: 'Expiring: {{certificate.dn}}',
    body: '<p>{{certificate.daysLeft}} days</p>',
  });

  const slack = byName.get('cw-slack')!;
  t.same(oneOfMembers(slack), ['WebhookNotificationResponse']);
  t.match(slack, { type: 'webhook', events: ['on_revoke'], channel: 'slack' });
  t.same(slack.webhookTemplate, { to: { type: 'static', webhook: { type: 'slack', url: '********' } }, title: 'Revoked: {{certificate.dn}}', body: 'Serial {{certificate.serial}}' });

  const hook = byName.get('cw-webhook')!;
  t.same(oneOfMembers(hook), ['RESTResponse (top level)', 'RESTResponse (sequence)']);
  t.match(hook, { type: 'rest', events: ['on_revoke', 'on_enroll'], url: `${receiver.base}/plain`, method: 'POST', authenticationType: 'noauth', timeout: '5 seconds', headers: [{ name: 'X-Team', value: 'pki' }] });
  t.same(hook.sequence, [{ url: `${receiver.base}/plain`, method: 'POST', authenticationType: 'noauth', headers: [{ name: 'X-Team', value: 'pki' }], timeout: '5 seconds' }]);
  t.match(hook.target, { secret: '********' });
  t.notMatch(JSON.stringify(all), /CW-PLAIN|a-signing-secret/, 'the Slack URL and the signing secret stay masked');

  // Types filter on the derived type as well.
  const names = (body: Json): string[] => (body as Json[]).map((i) => i.name as string).sort();
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?types=email'))), ['cw-email', 'go-email']);
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?types=webhook'))), ['cw-slack', 'go-webhook']);
  t.same(names(v2Ok(t, await v2('GET', '/api/v1/triggers?types=rest'))), ['cw-webhook', 'go-rest-flat', 'go-rest-seq']);
});

t.test("TriggerAPI.TriggerGet → TriggerUpdate of a trigger written in Certwright's shape — horizon-go docs/TriggerAPI.md:L150-L217, L354-L417: the echo changes nothing", async (t) => {
  // The row as the trigger runs on it: the target without its stored extras (retries, Horizon keys), which secret fields are sealed.
  const stored = async (name: string): Promise<Json> => {
    const row = (await kernel.db.knex('triggers').where({ name }).first('channel', 'target', 'target_secrets', 'events', 'thresholds', 'trigger_type')) as Json;
    const { $extras, ...target } = JSON.parse(row.target as string) as Json;
    return { ...row, target, target_secrets: Object.keys(JSON.parse(row.target_secrets as string) as Json).sort(), horizon: ($extras as Json | undefined)?.horizon ?? null };
  };
  for (const { name } of certwrightShaped) {
    const before = await stored(name as string);
    const got = v2Ok(t, await v2('GET', `/api/v1/triggers/${goPathEscape(name as string)}`));
    // The SDK keeps Certwright's keys in AdditionalProperties and writes them back: the whole answer, keys sorted.
    const echoed = v2Ok(t, await v2('PUT', '/api/v1/triggers', got));
    t.same({ ...echoed, updatedAt: 0 }, { ...got, updatedAt: 0 }, `${name}: the answer is the same`);
    t.same(await stored(name as string), before, `${name}: the stored trigger is the same (still in Certwright's shape, its secrets kept)`);

    // The Horizon side alone sent back (a client that drops Certwright's keys), with new retries: only retries change.
    const horizonOnly = Object.fromEntries(Object.entries(got).filter(([k]) => !['channel', 'target', 'thresholds', 'triggerType', 'query', 'description', 'enabled', '_id', 'createdAt', 'updatedAt'].includes(k)));
    const retried = v2Ok(t, await v2('PUT', '/api/v1/triggers', { ...horizonOnly, retries: 4 }));
    t.same({ ...retried, updatedAt: 0 }, { ...got, retries: 4, updatedAt: 0 }, `${name}: only retries changed`);
    t.same(await stored(name as string), before, `${name}: channel, target and secrets kept`);
  }

  // The sealed Slack URL was kept: a test run of the stored trigger reaches it.
  const run = v2Ok(t, await v2('PATCH', '/api/v1/triggers', { name: 'cw-slack' }));
  t.match(run, { status: 'success' });
  t.ok(receiver.received.some((r) => r.path === CW_SLACK_PATH), 'the stored Slack URL was called');

  // A changed Horizon side counts: the trigger is then written in Horizon's shape (the derived keys sent back as shown).
  const got = v2Ok(t, await v2('GET', `/api/v1/triggers/${goPathEscape('cw-slack')}`));
  const retitled = v2Ok(t, await v2('PUT', '/api/v1/triggers', { ...got, webhookTemplate: { ...got.webhookTemplate, title: 'Revoked (v2): {{certificate.dn}}' } }));
  t.match(retitled, { type: 'webhook', channel: 'slack', target: { url: '********', text: 'Revoked (v2): {{certificate.dn}}\nSerial {{certificate.serial}}' } });
  t.same(oneOfMembers(retitled), ['WebhookNotificationResponse']);

  for (const { name } of certwrightShaped) t.equal(await certwrightDelete(name as string), 204);
});

t.test("TriggerAPI.TriggerList with a trigger whose channel has no Horizon counterpart (log) — horizon-go docs/TriggerAPI.md:L220-L285 (types leaves it out)", async (t) => {
  await certwrightPost(t, { name: 'cw-log', channel: 'log', target: {}, events: ['revoked'] });
  const typed = v2Ok(t, await v2('GET', '/api/v1/triggers?types=email&types=webhook&types=rest'));
  t.notOk((typed as Json[]).some((i) => i.name === 'cw-log'), 'no Horizon type: not listed when types are asked');
  for (const item of typed as Json[]) t.not(oneOfMembers(item).length, 0, `${item.name} decodes`);
  const all = v2Ok(t, await v2('GET', '/api/v1/triggers'));
  const log = (all as Json[]).find((i) => i.name === 'cw-log');
  t.ok(log && !('type' in log), "listed without types, in Certwright's shape alone (the known gap above)");
  t.same(oneOfMembers(log), [], 'no oneOf member decodes it: the unfiltered Go TriggerList fails while it exists');
  t.equal(await certwrightDelete('cw-log'), 204);
});

t.test('TriggerAPI.TriggerGet — horizon-go docs/TriggerAPI.md:L150-L217 (TriggerUpdate200Response)', async (t) => {
  const expected: [string, string[]][] = [
    ['go-email', ['EmailNotificationResponse']],
    ['go-webhook', ['WebhookNotificationResponse']],
    ['go-rest-flat', ['RESTResponse (top level)', 'RESTResponse (sequence)']],
    ['go-rest-seq', ['RESTResponse (top level)', 'RESTResponse (sequence)']],
  ];
  for (const [name, members] of expected) {
    const body = v2Ok(t, await v2('GET', `/api/v1/triggers/${goPathEscape(name)}`));
    t.same(oneOfMembers(body), members, `${name} decodes as ${members.join(' and ')}`);
    t.equal(body.name, name);
  }
  const missing = v2Error(t, await v2('GET', `/api/v1/triggers/${goPathEscape('go-nobody')}`), 404, 'TRG-003');
  t.equal(missing.status, 404);
});

t.test('TriggerAPI.TriggerUpdate — horizon-go docs/TriggerAPI.md:L354-L417 (TriggerUpdateRequest → TriggerUpdate200Response)', async (t) => {
  // A new EmailNotification for the same name: new title, no retries (unset: left out).
  const email = { ...emailNotification('go-email', 'Enrolled (v2): {{certificate.dn}}') };
  delete email.retries;
  const mail = v2Ok(t, await v2('PUT', '/api/v1/triggers', email));
  t.same(oneOfMembers(mail), ['EmailNotificationResponse']);
  t.match(mail, { emailTemplate: { title: 'Enrolled (v2): {{certificate.dn}}' }, target: { subject: 'Enrolled (v2): {{certificate.dn}}' } });
  t.notOk('retries' in mail, 'retries left out: the configured count');

  // The top-level REST of API 2.9 with a new URL: sequence follows.
  const flat = v2Ok(t, await v2('PUT', '/api/v1/triggers', restTopLevel('go-rest-flat', '/deploy-v2')));
  t.same(goDecodeErrors(flat, restResponseTopLevel), []);
  t.match(flat, { url: `${receiver.base}/deploy-v2`, sequence: [{ url: `${receiver.base}/deploy-v2` }], target: { url: `${receiver.base}/deploy-v2`, secret: '********' } });

  // The answer of TriggerGet sent back with a new top-level URL (an older client keeps `sequence` in
  // AdditionalProperties and writes it back unchanged): the top-level keys are the change.
  const got = v2Ok(t, await v2('GET', `/api/v1/triggers/${goPathEscape('go-rest-seq')}`));
  // The RESTResponse (@46c9c95) keys and the AdditionalProperties the SDK keeps: Horizon's keys and `sequence`.
  const echo = Object.fromEntries(Object.entries(got).filter(([k]) => ['authenticationType', 'events', 'expectedHttpCodes', 'method', 'name', 'payload', 'payloadType', 'retries', 'sequence', 'timeout', 'type', 'url'].includes(k)));
  const moved = v2Ok(t, await v2('PUT', '/api/v1/triggers', { ...echo, url: `${receiver.base}/sequence-v2` }));
  t.match(moved, { url: `${receiver.base}/sequence-v2`, sequence: [{ url: `${receiver.base}/sequence-v2`, method: 'POST', payloadType: 'json' }], retries: 5 });
  t.equal(moved._id, got._id, 'the same trigger');

  // WebhookNotification rebuilt from TriggerGet: the URL reads ******** and is sent back so: the sealed one is kept.
  const hook = v2Ok(t, await v2('PUT', '/api/v1/triggers', { ...webhookNotification('go-webhook', '********'), retries: 2 }));
  t.same(oneOfMembers(hook), ['WebhookNotificationResponse']);
  t.match(hook, { retries: 2, webhookTemplate: { to: { webhook: { url: '********' } } } });

  v2Error(t, await v2('PUT', '/api/v1/triggers', emailNotification('go-nobody')), 404, 'TRG-003');
});

t.test('TriggerAPI.TriggerTest — horizon-go docs/TriggerAPI.md:L288-L351 (TriggerTestRequest docs/TriggerTestRequest.md:L7-L8 + MapEntry docs/MapEntry.md:L7-L8 → TriggerTest200Response docs/TriggerTest200Response.md:L7-L15)', async (t) => {
  // An email trigger that is not stored, with a dictionary its title reads.
  const before = smtp.delivered.length;
  const mail = v2Ok(t, await v2('PATCH', '/api/v1/triggers', { dictionary: [{ key: 'cn', value: 'go.example.com' }], trigger: emailNotification('go-test-mail', 'Test for {{payload.dictionary.cn}}') }));
  t.same(goDecodeErrors(mail, triggerTest200Response), [], 'decodes as TriggerTest200Response');
  t.match(mail, { type: 'email', status: 'success', requestURL: '', name: 'go-test-mail', event: 'on_enroll' });
  t.equal(smtp.delivered.length, before + 1, 'one mail, through the SMTP server');
  t.same(smtp.delivered[before]!.envelope.to, ['pki-team@example.com']);
  t.equal(smtp.delivered[before]!.parsed.subject, 'Test for go.example.com', "the dictionary reaches the channel's template");
  t.equal((await v2('GET', `/api/v1/triggers/${goPathEscape('go-test-mail')}`)).statusCode, 404, 'a tested trigger is not stored');

  // A REST trigger (the sequence of TriggerTestRequestTrigger, API 2.10): the endpoint is called.
  const rest = v2Ok(t, await v2('PATCH', '/api/v1/triggers', { trigger: restSequence('go-test-rest', '/test-rest') }));
  t.same(goDecodeErrors(rest, triggerTest200Response), []);
  t.match(rest, { type: 'rest', status: 'success', requestURL: `${receiver.base}/test-rest`, event: 'on_revoke' });
  const called = receiver.received.find((r) => r.path === '/test-rest');
  t.equal(called?.method, 'POST', 'the endpoint was called');
  t.match(JSON.parse(called?.body ?? '{}'), { code: 'CERTIFICATE-REVOKED', certificate: null, trigger: { name: 'go-test-rest', event: 'revoked' }, payload: { run: true, test: true } });

  // The stored webhook trigger as TriggerGet answers it (URL ********): the sealed URL is the one called.
  const slack = v2Ok(t, await v2('PATCH', '/api/v1/triggers', { trigger: webhookNotification('go-webhook', '********') }));
  t.match(slack, { type: 'webhook', status: 'success', requestURL: '********' });
  t.ok(receiver.received.some((r) => r.path === SLACK_PATH), 'the stored Slack URL was called');

  // A failing receiver is a 200 whose status says so.
  receiver.respond((_req, res) => res.writeHead(503).end('down'));
  const down = v2Ok(t, await v2('PATCH', '/api/v1/triggers', { trigger: restSequence('go-test-rest', '/test-rest') }));
  receiver.respond((_req, res) => res.writeHead(200).end('ok'));
  t.same(goDecodeErrors(down, triggerTest200Response), []);
  t.match(down, { status: 'failure', message: /503/ });

  // What POST refuses, a test refuses the same way.
  const bad = v2Error(t, await v2('PATCH', '/api/v1/triggers', { trigger: { ...restSequence('go-test-rest'), sequence: [{ url: 'ftp://example.com/x', method: 'POST' }] } }), 400, 'TRG-002');
  t.match(bad.detail, /^sequence\[0\]\.url:/);
});

t.test('TriggerAPI.TriggerDelete — horizon-go docs/TriggerAPI.md:L82-L147 (no return type, Accept application/problem+json)', async (t) => {
  for (const name of ['go-email', 'go-webhook', 'go-rest-flat', 'go-rest-seq']) {
    const res = await v2NoContent('DELETE', `/api/v1/triggers/${goPathEscape(name)}`);
    t.ok(res.statusCode < 300, `DELETE ${name}: ${res.statusCode} ${res.body}`);
  }
  t.same(v2Ok(t, await v2('GET', '/api/v1/triggers')), [], 'all gone');
  // TriggerDeleteExecute decodes a 404 body as BasicError.
  v2Error(t, await v2NoContent('DELETE', `/api/v1/triggers/${goPathEscape('go-email')}`), 404, 'TRG-003');
});
