/**
 * Contract tests for the vendor's hand-written Go SDK, evertrust/horizon-go v1 (package `horizon` and its
 * sub-packages), as stored in the public index: http/client.go @cc4f36d (resty transport), http/errors.go
 * @995a4b1, requests/client.go (the `horizon.*`-typed version), requests.go @3c83a0b, certificates.go
 * @419f869, certificates/client.go (the `horizon.*`-typed version), principal.go + principals/client.go
 * @25a3137, rfc5280/client.go (the 1,472-char version with Trustchain) + rfc5280/rfc5280.go,
 * certificateprofiles/client.go @6fb7301. Each test sends a request exactly as that SDK builds it (method, path,
 * headers: resty sets `Content-Type: application/json` on every call, GET included, plus X-API-ID/X-API-KEY;
 * bodies as json.Marshal writes the Go structs: zero int64 fields such as registrationDate/removeAt are
 * sent as 0, omitempty fields left out) and checks what the SDK checks on the answer: success is
 * status <= 300 (http/client.go Unmarshal), the body must decode into the Go structs (test/compat/go-shapes.ts),
 * request answers must echo module/workflow (EnsureType), and an error body is only read when
 * Content-Type is exactly `application/json`.
 *
 * v1 SDK methods that target routes Certwright does not serve yet; their contract tests arrive with the
 * issue that serves each route:
 *   - discovery/client.go Feed (POST /api/v1/discovery/feed), Start (GET /api/v1/discovery/feed/{campaign}),
 *     Stop (DELETE /api/v1/discovery/feed/{campaign}/{sessionId}), Event (PUT /api/v1/discovery/feed),
 *     Create (POST /api/v1/discovery/campaigns), Delete (DELETE /api/v1/discovery/campaigns/{name}) — a later issue.
 *   - automation/client.go List/Get (GET /api/v1/automation/policies[/{name}]), GetParameters
 *     (GET /api/v1/automation/lifecycle/{policy}), Check (GET /api/v1/automation/lifecycle/{policy}/verify) — issue 30.
 * Not tested here on purpose: requests/client.go NewRenewRequest sends no certificateId/certificatePem
 * at all (WebRARenewRequestParams has none), so it cannot name the certificate on any server.
 *
 * Known gaps (these client calls fail today; issue 23's note lists them): none.
 */
import { generateKeyPairSync } from 'node:crypto';
import t, { type Test } from 'tap';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../helpers/kernel.js';
import { bool, checkV1Request, int, type Json, str, v1Capabilities, v1Certificate, v1Client, v1Enrolled, v1Headers, v1Request, v1Success, ZERO_DATES } from './go-v1-client.js';
import { createPrincipal } from '../helpers/security.js';
import { goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';
import { csrFor } from '../helpers/csr.js';
import { toPem } from '../../core/pki/input.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);

const v1 = v1Client(kernel);

/** requests.go @3c83a0b L171-L183 (WebRAEnrollTemplate, with the element types above it). */
const v1EnrollTemplate: GoShape = {
  object: {
    keyType: str, csr: str,
    subject: { array: { object: { element: str, type: str, value: str, mandatory: bool, editable: bool } } },
    sans: { array: { object: { type: str, value: { array: str }, editable: bool, min: int, max: int } } },
    extensions: { array: { object: { type: str, editable: bool, mandatory: bool, value: str } } },
    owner: { object: { value: str, mandatory: bool, editable: bool } },
    team: { object: { value: str, mandatory: bool, authorized: { array: str }, editable: bool } },
    contactEmail: { object: { editable: bool, mandatory: bool, value: str } },
    labels: { array: { object: { label: str, mandatory: bool, editable: bool, value: str } } },
    metadata: { array: { object: { metadata: str, editable: bool, value: str } } },
    capabilities: v1Capabilities,
  },
};
const v1SearchResults = (item: GoShape): GoShape => ({ object: { results: { array: item }, pageIndex: int, pageSize: int, count: int, hasMore: bool } });

/** json.Marshal of a WebRAEnrollTemplate decoded from a template answer (omitempty rules of requests.go L36-L183). */
function goEnrollTemplate(tpl: Json): Json {
  const out: Json = {};
  const omit = (v: unknown) => v === undefined || v === null || v === '' || v === false || v === 0 || (Array.isArray(v) && v.length === 0);
  const put = (o: Json, k: string, v: unknown) => { if (!omit(v)) o[k] = v; };
  put(out, 'keyType', tpl.keyType);
  put(out, 'csr', tpl.csr);
  put(out, 'subject', (tpl.subject ?? []).map((e: Json) => { const o: Json = { element: e.element ?? '' }; put(o, 'type', e.type); put(o, 'value', e.value); put(o, 'mandatory', e.mandatory); put(o, 'editable', e.editable); return o; }));
  put(out, 'sans', (tpl.sans ?? []).map((e: Json) => { const o: Json = {}; put(o, 'type', e.type); put(o, 'value', e.value); put(o, 'editable', e.editable); put(o, 'min', e.min); put(o, 'max', e.max); return o; }));
  if (tpl.owner) out.owner = { value: tpl.owner.value ?? null, mandatory: !!tpl.owner.mandatory, editable: !!tpl.owner.editable };
  if (tpl.team) { out.team = { value: tpl.team.value ?? null, mandatory: !!tpl.team.mandatory }; put(out.team, 'authorized', tpl.team.authorized); out.team.editable = !!tpl.team.editable; }
  if (tpl.contactEmail) { const o: Json = {}; put(o, 'editable', tpl.contactEmail.editable); put(o, 'mandatory', tpl.contactEmail.mandatory); o.value = tpl.contactEmail.value ?? null; out.contactEmail = o; }
  put(out, 'labels', tpl.labels);
  if (tpl.capabilities) {
    const c = tpl.capabilities;
    const o: Json = {};
    for (const k of ['centralized', 'decentralized', 'preferredEnrollmentMode', 'defaultKeyType', 'authorizedKeyTypes', 'escrow', 'showP12PasswordOnEnroll', 'showP12OnEnroll', 'showP12PasswordOnRecover', 'showP12OnRecover']) put(o, k, c[k]);
    put(o, 'p12PasswordMode', c.p12PasswordMode ?? c.p12passwordMode);
    out.capabilities = o;
  }
  return out;
}

const enrolled = (cn: string): Promise<Json> => v1Enrolled(kernel, cn);

t.test('requests.Client.GetEnrollTemplate — horizon-go requests/client.go:L35-L49 + L442-L453 (GetTemplate)', async (t) => {
  const csr = csrFor('tpl.example.com', ['tpl.example.com']);
  const sent = JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template: { csr } });
  const res = await v1('POST', '/api/v1/requests/template', sent);
  const body = checkV1Request(t, res, 'enroll', v1EnrollTemplate);
  t.equal(res.headers['content-type'], 'application/json');
  t.ok(body.template, 'the template the SDK returns is present');
  t.type(body.template.capabilities?.centralized, 'boolean', 'capabilities.centralized');
  t.type(body.template.capabilities?.decentralized, 'boolean', 'capabilities.decentralized');
  t.not(body.status, 'pending', 'a template answer is never pending');
});

t.test('requests.Client.NewEnrollRequest, decentralized — horizon-go requests/client.go:L74-L95 + L426-L440 (NewRequest)', async (t) => {
  // The flow of the issuer and terraform on v1: GetEnrollTemplate with the CSR, then NewEnrollRequest with that template.
  const csr = csrFor('v1-decentral.example.com', ['v1-decentral.example.com']);
  const tpl = (await v1('POST', '/api/v1/requests/template', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template: { csr } }))).json();
  const template = goEnrollTemplate(tpl.template);
  template.contactEmail = { value: 'pki@example.com' };
  const res = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template }));
  const body = checkV1Request(t, res, 'enroll', v1EnrollTemplate);
  t.equal(body.status, 'completed');
  t.match(body.certificate?.certificate, /^-----BEGIN CERTIFICATE-----/, 'certificate.certificate is the PEM');
  t.type(body._id, 'string');
  t.notOk('pkcs12' in body, 'no PKCS#12 for a CSR enrollment');
});

t.test('requests.Client.NewEnrollRequest, centralized (Password "" omitted, server-generated) — horizon-go requests/client.go:L74-L95 + L426-L440', async (t) => {
  const tpl = (await v1('POST', '/api/v1/requests/template', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template: {} }))).json();
  const template = goEnrollTemplate(tpl.template);
  template.keyType = 'ec-secp256r1';
  template.subject = [{ element: 'cn.1', type: 'CN', value: 'v1-central.example.com', mandatory: true, editable: true }];
  const res = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template }));
  const body = checkV1Request(t, res, 'enroll', v1EnrollTemplate);
  t.equal(body.status, 'completed');
  t.ok(body.pkcs12?.value, 'pkcs12.value');
  t.ok(body.password?.value, 'password.value (Secret)');
  t.ok(body.certificate?.certificate, 'certificate');
});

t.test('requests.Client.GetEnrollRequest — horizon-go requests/client.go:L51-L59 + L455-L466 (GetRequest)', async (t) => {
  const done = await enrolled('v1-get.example.com');
  // A GET that still carries Content-Type: application/json and no body (resty client header).
  const res = await v1('GET', `/api/v1/requests/${done._id}`);
  const body = checkV1Request(t, res, 'enroll', v1EnrollTemplate);
  t.equal(body._id, done._id);
  t.equal(body.certificateId, done.certificateId);
});

t.test('requests.Client.CancelEnrollRequest — horizon-go requests/client.go:L61-L72 + L469-L480 (CancelRequest)', async (t) => {
  const requester = await createPrincipal(kernel, 'v1-requester', { permissions: [{ value: 'lifecycle:webra:default:enroll:request' }] });
  const as = v1Headers(requester.identifier, requester.secret);
  const pending = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'default', ...ZERO_DATES, template: { csr: csrFor('v1-cancel.example.com') } }), as);
  const created = checkV1Request(t, pending, 'enroll', v1EnrollTemplate);
  t.equal(created.status, 'pending');
  // json.Marshal(WebRAEnrollRequest{Module, Workflow, Id}): _id first, then workflow, module and the zero dates.
  const res = await v1('POST', '/api/v1/requests/cancel', JSON.stringify({ _id: created._id, workflow: 'enroll', module: 'webra', ...ZERO_DATES }), as);
  const body = checkV1Request(t, res, 'enroll', v1EnrollTemplate);
  t.equal(body.status, 'canceled');
});

t.test('requests.Client.Search — horizon-go requests/client.go:L21-L31 (RequestSearchQuery, requests.go SearchScope)', async (t) => {
  await enrolled('v1-search.example.com');
  // pageIndex 0 is omitempty: the SDK leaves it out when the caller does not set it.
  const res = await v1('POST', '/api/v1/requests/search', JSON.stringify({ query: 'workflow equals "enroll"', pageSize: 10, withCount: true, scope: 'search' }));
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}: ${res.body.slice(0, 300)}`);
  const body = res.json();
  const item = v1Request({ object: {} }) as { object: Record<string, GoShape> };
  t.same(goDecodeErrors(body, v1SearchResults({ object: { ...item.object, template: 'any' } })), [], 'decodes into SearchResults[RequestSearchResult]');
  t.ok(body.results.length >= 1);
  t.equal(body.pageIndex, 1, 'pageIndex left out = first page (1-based)');
  t.type(body.hasMore, 'boolean');
  t.type(body.count, 'number');
});

t.test('requests.Client.NewRevokeRequest — horizon-go requests/client.go:L246-L262 (certificates.go RevocationReason L20-L29)', async (t) => {
  const done = await enrolled('v1-revoke.example.com');
  const pem = done.certificate.certificate as string;
  // Field order of WebRARevokeRequest: workflow, module, dates, template, certificatePem.
  const res = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'revoke', module: 'webra', ...ZERO_DATES, template: { revocationReason: 'KEYCOMPROMISE' }, certificatePem: pem }));
  const body = checkV1Request(t, res, 'revoke', { object: { revocationReason: str } });
  t.equal(body.status, 'completed');
  const cert = (await v1('GET', `/api/v1/certificates/${done.certificateId}`)).json();
  t.equal(cert.certificate?.revoked, true, 'the certificate is revoked');
});

t.test('requests.Client.GetRenewTemplate — horizon-go requests/client.go:L177-L189', async (t) => {
  const done = await enrolled('v1-renew.example.com');
  const res = await v1('POST', '/api/v1/requests/template', JSON.stringify({ workflow: 'renew', module: 'webra', ...ZERO_DATES, certificateId: done.certificateId }));
  const body = checkV1Request(t, res, 'renew', { object: { keyType: str, csr: str, capabilities: v1Capabilities } });
  t.ok(body.template, 'renew template');
});

t.test('requests.Client.GetUpdateTemplate + NewUpdateRequest — horizon-go requests/client.go:L264-L276 + L288-L303', async (t) => {
  const done = await enrolled('v1-update.example.com');
  const updateTemplate: GoShape = { object: { owner: { object: { value: str, mandatory: bool, editable: bool } }, team: { object: { value: str, mandatory: bool, authorized: { array: str }, editable: bool } }, contactEmail: { object: { editable: bool, mandatory: bool, value: str } }, labels: { array: { object: { label: str, mandatory: bool, editable: bool, value: str } } }, metadata: { array: { object: { metadata: str, editable: bool, value: str } } } } };
  const tpl = await v1('POST', '/api/v1/requests/template', JSON.stringify({ workflow: 'update', module: 'webra', ...ZERO_DATES, certificateId: done.certificateId }));
  checkV1Request(t, tpl, 'update', updateTemplate);
  // NewContactEmailElement("ops@example.com") marshals as {"value":"ops@example.com"} (its bools are omitempty).
  const res = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'update', module: 'webra', ...ZERO_DATES, template: { contactEmail: { value: 'ops@example.com' } }, certificateId: done.certificateId }));
  const body = checkV1Request(t, res, 'update', updateTemplate);
  t.equal(body.status, 'completed');
  const cert = (await v1('GET', `/api/v1/certificates/${done.certificateId}`)).json();
  t.equal(cert.certificate?.contactEmail, 'ops@example.com');
});

t.test('requests.Client.NewImportRequest — horizon-go requests/client.go:L374-L391', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pem = toPem(selfSignedCertificate(key.privateKey, { subject: 'CN=v1-import.example.com', validityDays: 30 }), 'CERTIFICATE');
  // Template nil: left out; WebRAImportRequest field order puts profile before the dates and certificatePem after.
  const res = await v1('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'import', module: 'webra', profile: 'default', ...ZERO_DATES, certificatePem: pem }));
  const body = checkV1Request(t, res, 'import', 'any');
  t.equal(body.status, 'completed');
  t.match(body.certificate?.dn ?? '', /v1-import\.example\.com/);
});

t.test('certificates.Client.Get — horizon-go certificates/client.go:L18-L30 (certificates.go CertificateResponse L144-L146)', async (t) => {
  const done = await enrolled('v1-cert.example.com');
  const res = await v1('GET', `/api/v1/certificates/${done.certificateId}`);
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}`);
  const body = res.json();
  t.same(goDecodeErrors(body, { object: { certificate: v1Certificate } }), [], 'decodes into CertificateResponse');
  t.equal(body.certificate?._id, done.certificateId, 'the SDK returns .certificate of the wrapper');
  t.equal(body.certificate?.module, 'webra');
});

t.test('certificates.Client.Search — horizon-go certificates/client.go:L32-L42 (certificates.go L148-L173)', async (t) => {
  await enrolled('v1-certsearch.example.com');
  const res = await v1('POST', '/api/v1/certificates/search', JSON.stringify({ query: 'status is valid', fields: ['module', 'dn', 'serial', 'notAfter'], pageSize: 5, withCount: true }));
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}: ${res.body.slice(0, 300)}`);
  const body = res.json();
  const result: GoShape = { object: { _id: str, module: str, dn: str, serial: str, notAfter: int, permissions: { object: { revoke: bool, requestRevoke: bool, update: bool, requestUpdate: bool, recover: bool, requestRecover: bool, migrate: bool, requestMigrate: bool } } } };
  t.same(goDecodeErrors(body, v1SearchResults(result)), [], 'decodes into SearchResults[CertificateSearchResult]');
  t.ok(body.results.length >= 1 && body.results.length <= 5);
  t.ok(body.results.every((r: Json) => typeof r._id === 'string' && typeof r.dn === 'string'), 'requested fields are there');
});

t.test('principals.Client.Self — horizon-go principals/client.go:L17-L36 (principal.go L8-L86)', async (t) => {
  await kernel.app.inject({ method: 'POST', url: '/api/v1/security/teams/', headers: { host: 'localhost', ...v1Headers() }, payload: JSON.stringify({ name: 'v1-team' }) });
  const member = await createPrincipal(kernel, 'v1-member', { teams: [{ name: 'v1-team' }], email: 'member@example.com' });
  for (const [who, headers] of [['administrator', v1Headers()], ['v1-member', v1Headers(member.identifier, member.secret)]] as const) {
    const res = await v1('GET', '/api/v1/security/principals/self', undefined, headers);
    t.ok(res.statusCode === 200 || res.statusCode === 204, `${who}: ${res.statusCode}`);
    const body = res.json();
    // InternalPrincipal: teams as strings or as objects with a name (Teams.UnmarshalJSON); identity fields are strings.
    const shape: GoShape = { object: { identity: { object: { certificate: str, email: str, identifier: str, identityProviderName: str, identityProviderType: str, name: str } }, permissions: { array: { object: { filter: str, value: str } } }, roles: { array: str }, teams: 'any' } };
    t.same(goDecodeErrors(body, shape), [], `${who}: decodes into InternalPrincipal`);
    t.equal(body.identity?.identifier, who);
    t.ok(Array.isArray(body.teams) && body.teams.every((x: unknown) => typeof x === 'string' || (typeof x === 'object' && x !== null && typeof (x as Json).name === 'string')), `${who}: teams are strings or {name}`);
  }
});

t.test('rfc5280.Client.Trustchain — horizon-go rfc5280/client.go:L31-L53 (rfc5280.go CfCertificate, TrustchainOrder)', async (t) => {
  const done = await enrolled('v1-chain.example.com');
  const pem = done.certificate.certificate as string;
  // url.PathEscape keeps '+', '=' and '@' as they are; '/' and the newlines are escaped.
  const res = await v1('GET', `/api/v1/rfc5280/tc/${goPathEscape(pem)}?order=ltr`);
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}: ${res.body.slice(0, 200)}`);
  t.notMatch(String(res.headers['content-type']), /^text\/plain/, 'text/plain would read as "not implemented" (before 2.2.2)');
  const chain = res.json();
  const cf: GoShape = { object: { dn: str, sans: { array: { object: { sanType: str, value: str } } }, dnElements: { array: { object: { type: str, value: str } } }, keyType: str, signingAlgorithm: str, pem: str, serial: str, issuerDn: str, notBefore: int, notAfter: int, selfSigned: bool } };
  t.same(goDecodeErrors(chain, { array: cf }), [], 'decodes into []CfCertificate');
  t.ok(chain.length >= 2, 'leaf and its CA');
  t.equal(chain[0].pem.replace(/\s/g, ''), pem.replace(/\s/g, ''), 'ltr: the leaf first');
  t.equal(chain.at(-1).selfSigned, true, 'ltr: the root last');
});

t.test('certificateprofiles.Client.Get — horizon-go certificateprofiles/client.go:L9-L21', async (t) => {
  const res = await v1('GET', '/api/v1/certificate/profiles/default');
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}`);
  const body = res.json();
  t.equal(body.name, 'default');
  // certificateprofiles.go: cryptoPolicy {centralized, decentralized, escrow} are bools when present.
  t.same(goDecodeErrors(body, { object: { cryptoPolicy: { object: { centralized: bool, decentralized: bool, escrow: bool } } } }), []);
});

t.test('error answers — horizon-go http/client.go:L48-L81 (Unmarshal) + http/errors.go:L5-L9 (HorizonErrorResponse)', async (t) => {
  // GetEnrollTemplate on a profile that does not exist: the SDK reads the error body only when the
  // Content-Type header is exactly "application/json"; anything else becomes {Code: "Unknown", "Non-JSON error from Horizon"}.
  const res = await v1('POST', '/api/v1/requests/template', JSON.stringify({ workflow: 'enroll', module: 'webra', profile: 'no-such-profile', ...ZERO_DATES, template: {} }));
  t.ok(res.statusCode > 300, `an error status (${res.statusCode})`);
  t.equal(res.headers['content-type'], 'application/json', 'Content-Type is exactly application/json, else the v1 SDK loses the error code');
  const body = res.json();
  t.same(goDecodeErrors(body, { object: { error: str, message: str, detail: str } }), [], 'decodes into HorizonErrorResponse');
  t.type(body.error, 'string');
  t.type(body.message, 'string');
  // A request id that is not one: the same contract on a GET (with its Content-Type header and no body).
  const bad = await v1('GET', '/api/v1/requests/not-an-id');
  t.ok(bad.statusCode > 300, `an error status (${bad.statusCode})`);
  t.equal(bad.headers['content-type'], 'application/json', 'GET error: Content-Type exactly application/json');
});

t.test('rfc5280.Client.Pkcs10 — horizon-go rfc5280/client.go @041e01a L13-L40 (rfc5280.go CFCertificationRequest)', async (t) => {
  const csr = csrFor('v1-pkcs10.example.com', ['v1-pkcs10.example.com', 'alt.v1-pkcs10.example.com']);
  // The PEM goes in the path, url.PathEscape'd; a plain net/http request (no resty headers) through Http.Do.
  const res = await kernel.app.inject({ method: 'GET', url: `/api/v1/rfc5280/pkcs10/${goPathEscape(csr)}`, headers: { host: 'localhost', 'User-Agent': 'Go-http-client/1.1', 'X-API-ID': 'administrator', 'X-API-KEY': v1Headers()['X-API-KEY']! } });
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}: ${res.body.slice(0, 200)}`);
  const body = res.json();
  const shape: GoShape = { object: { dn: str, sans: { array: { object: { sanType: str, value: str } } }, dnElements: { array: { object: { type: str, value: str } } }, keyType: str, pem: str } };
  t.same(goDecodeErrors(body, shape), [], 'decodes into CFCertificationRequest');
  t.match(body.dn, /CN=v1-pkcs10\.example\.com/);
  t.same(body.sans.map((s: Json) => s.value).sort(), ['alt.v1-pkcs10.example.com', 'v1-pkcs10.example.com'], 'sans: the DNS names');
  t.ok(body.dnElements.some((e: Json) => e.type === 'CN' && e.value === 'v1-pkcs10.example.com'), 'dnElements: the CN');
  t.type(body.keyType, 'string');
  t.ok(body.keyType.length > 0, 'keyType named');
});

t.test('license.Client.Get — horizon-go license/client.go @041e01a L12-L24 (license.go LicenseInfo)', async (t) => {
  const res = await v1('GET', '/api/v1/licenses');
  t.ok(v1Success(res.statusCode), `status ${res.statusCode}`);
  const body = res.json();
  // Expiration and BuildTime are Go ints: a JSON null leaves them 0, a string would fail the decode.
  const shape: GoShape = { object: { isValid: bool, expiration: int, version: str, buildTime: int, modules: { array: { object: { module: str, items: int, limit: int } } }, libraries: { array: { object: { name: str, version: str } } } } };
  t.same(goDecodeErrors(body, shape), [], 'decodes into LicenseInfo');
  t.equal(body.isValid, true);
  t.type(body.version, 'string');
  t.ok(body.modules.some((m: Json) => m.module === 'webra'), 'ModuleLicenseInfo.Module names each module');
});
