/**
 * Contract tests for the vendor's OpenAPI-generated Go SDK, evertrust/horizon-go v2 (module
 * github.com/evertrust/horizon-go/v2: api_*.go, models/model_*.go, utils/utils.go, docs/*.md), as stored in
 * the public index. Operation lines cite docs/<Api>.md (the generated page of each operation: path, body
 * model, return model, headers), model lines cite docs/<Model>.md (its property table: a property not
 * marked "Pointer to" is required and checked by the model's UnmarshalJSON). Commits: docs/RequestAPI.md
 * @46c9c95, docs/CertificateAPI.md (9-operation version, with CertificateList), docs/SecurityPrincipalAPI.md,
 * docs/Rfc5280API.md, docs/SecurityPasswordpolicyAPI.md, docs/WebRAEnrollRequestOnSubmitResponse.md @013fc32,
 * docs/Certificate.md @337149d, docs/CertificateExtension.md @9bb7c7b, docs/CertificatePermissions.md @46c9c95,
 * docs/CFCertificate.md @1071ea1, docs/PrincipalResponse.md (the version whose teams are PrincipalResponseTeamsInner objects;
 * @150382f types them []string, which the newer model replaced), docs/BasicError.md @46c9c95,
 * docs/RequestStatus.md @46c9c95; client.go @cb4db5d (selectHeaderAccept, JsonCheck), api_request.go @1071ea1.
 *
 * What the generated client does, checked here: it sends X-API-KEY and X-API-ID, `Content-Type:
 * application/json` only with a body, and `Accept: application/json` (selectHeaderAccept picks
 * application/json out of the declared "application/json, application/problem+json"); a status >= 300 is an
 * error whose body is decoded as BasicError (400/401/403/500) when its Content-Type matches JsonCheck; a
 * success body is decoded only when its Content-Type matches JsonCheck; a model's UnmarshalJSON fails on a
 * missing required key, a wrong JSON type or an enum value it does not know (RequestStatus); a oneOf answer
 * (RequestGet200Response, RequestSubmit201Response, ...) decodes when at least one member decodes.
 *
 * v2 operations targeting routes Certwright does not serve yet; their contract tests arrive with the issue
 * that serves each route:
 *   - AutomationPolicyAPI, AutomationLifecycleAPI, AutomationExecutionAPI (/api/v1/automation/...) — issue 30.
 *   - DiscoveryFeedAPI (/api/v1/discovery/feed...), DiscoveryCampaignAPI (/api/v1/discovery/campaigns...) — a later issue.
 *   - LicenseAPI (/api/v1/licenses) — a later issue; AcmeAccountAPI/AcmeEabAPI/AcmeEabpolicyAPI/AcmeOrderAPI,
 *     ArchiveAPI, AdocAPI, CertificateGradingPolicyAPI/RulesetAPI, DatasourceAPI/DatasourceFlowAPI, Dcv*API,
 *     HttpHttpproxyAPI, ReportCsvAPI, SecurityCredentialsAPI, SecurityScimprofileAPI, SecurityServiceAccountAPI,
 *     SecurityTenantAPI, SystemConfigurationAPI, SystemStorageAPI, SystemTosAPI, TemplatestringAPI,
 *     ThirdpartyConnectorAPI, WcceAPI, ConfigurationsExportAPI, ChallengeAPI — a later issue.
 * Not tested here on purpose (the lead is changing them): Rfc5280API X509/Pkcs10/Crl/Detect, the event
 * object and EventAPI search, LicenseAPI.
 *
 * Known gaps (these client calls fail today; issue 23's note lists them): none. Every v2 operation replayed
 * here passes against Certwright, CertificateAPI.CertificateFind ({id}, {certificate, permissions}) and
 * CertificateAPI.CertificateList (a JSON array of ids on POST /api/v1/certificates) included.
 */
import t, { type Test } from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { createPrincipal } from '../helpers/security.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';
import { csrFor } from '../helpers/csr.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Headers of a generated operation (api_request.go RequestAggregateExecute pattern, client.go selectHeaderAccept). */
function v2Headers(withBody: boolean, id = 'administrator', key = TEST_ADMIN_SECRET): Record<string, string> {
  return { ...(withBody ? { 'Content-Type': 'application/json' } : {}), Accept: 'application/json', 'X-API-KEY': key, 'X-API-ID': id, 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
}
async function v2(method: 'GET' | 'POST', path: string, body?: unknown, who?: { id: string; key: string }) {
  return kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...v2Headers(body !== undefined, who?.id, who?.key) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

/** Success: status < 300 and a Content-Type the client decodes (client.go decode + JsonCheck). */
function v2Ok(t: Test, res: { statusCode: number; headers: Record<string, unknown>; body: string }): Json {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  return JSON.parse(res.body) as Json;
}


// ---- model shapes -------------------------------------------------------------------------------------
const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
const kv: GoShape = { array: { object: { key: str, value: str }, required: ['key', 'value'] } };
/** docs/CertificateExtension.md L7-L8: {key, value}, both required strings. */
const certificateExtension: GoShape = { object: { key: str, value: str }, required: ['key', 'value'] };
/** docs/Certificate.md @337149d L7-L41 (required: every row without "Pointer to"). */
const certificate: GoShape = {
  object: {
    _id: str, autoRenew: bool, certificate: str, contactEmail: str, crlSynchronized: bool, discoveredTrusted: bool, discoveryData: { array: 'any' },
    discoveryInfo: { array: 'any' }, dn: str, escrowed: bool, extensions: { array: certificateExtension }, grades: { array: 'any' }, holderId: str,
    issuer: str, keyType: str, labels: kv, metadata: kv, module: str, notAfter: int, notBefore: int, owner: str, profile: str,
    publicKeyThumbprint: str, requestedX509Data: 'any', revocationDate: int, revocationReason: str, revoked: bool, selfSigned: bool, serial: str,
    signingAlgorithm: str, subjectAlternateNames: { array: { object: { sanType: str, value: str }, required: ['sanType', 'value'] } }, team: str,
    thirdPartyData: { array: 'any' }, thumbprint: str, triggerResults: { array: 'any' },
  },
  required: ['_id', 'certificate', 'dn', 'escrowed', 'issuer', 'keyType', 'metadata', 'module', 'notAfter', 'notBefore', 'publicKeyThumbprint', 'revoked', 'selfSigned', 'serial', 'signingAlgorithm', 'subjectAlternateNames', 'thumbprint'],
};
/** docs/RequestStatus.md @46c9c95 L6-L14: the strict enum. */
const requestStatus: GoShape = { enum: ['denied', 'approved', 'pending', 'canceled', 'completed'] };
/** docs/WebRAEnrollRequestOnSubmitResponse.md @013fc32 L7-L37 (the oneOf member callers read, also for GET). */
const webraRequest: GoShape = {
  object: {
    certificate, error: str, externalId: 'any', module: str, password: { object: { value: str } }, pkcs12: { object: { value: str } }, retryAt: int,
    retryCount: int, template: { object: {} }, workflow: str, _id: str, approver: str, approverComment: str, contact: str, dn: str, dryRun: bool,
    expirationDate: int, globalHolderIdCount: int, holderId: str, labels: kv, lastModificationDate: int, metadata: kv, profile: str,
    profileHolderIdCount: int, registrationDate: int, removeAt: int, requester: str, requesterComment: str, status: requestStatus, team: str,
    triggerResults: { array: 'any' },
  },
  required: ['module', 'template', 'workflow', '_id', 'holderId', 'lastModificationDate', 'profile', 'registrationDate', 'removeAt', 'status'],
};
/** docs/CertificatePermissions.md @46c9c95 L7-L18. */
const certificatePermissions: GoShape = {
  object: { enroll: bool, migrate: bool, recover: bool, renew: bool, requestEnroll: bool, requestMigrate: bool, requestRecover: bool, requestRenew: bool, requestRevoke: bool, requestUpdate: bool, revoke: bool, update: bool },
  required: ['migrate', 'requestMigrate', 'requestRevoke', 'requestUpdate', 'revoke', 'update'],
};
/** docs/CertificateWithPermissionsResponse.md L7-L8. */
const certificateWithPermissions: GoShape = { object: { certificate, permissions: certificatePermissions }, required: ['certificate', 'permissions'] };
/** docs/BasicError.md @46c9c95 L7-L11. */
const basicError: GoShape = { object: { detail: str, error: str, message: str, status: int, title: str }, required: ['error', 'message', 'status', 'title'] };

function checkRequest(t: Test, res: { statusCode: number; headers: Record<string, unknown>; body: string }, workflow: string): Json {
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, webraRequest), [], 'decodes as WebRA*RequestOn*Response (required keys, types, RequestStatus enum)');
  t.equal(body.module, 'webra');
  t.equal(body.workflow, workflow);
  return body;
}

async function enrolled(cn: string): Promise<Json> {
  const res = await v2('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'default', template: { csr: csrFor(cn, [cn]) } });
  if (res.statusCode >= 300) throw new Error(`enroll ${cn}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const requester = await createPrincipal(kernel, 'v2-requester', { permissions: [{ value: 'lifecycle:webra:default:enroll:request' }] });
const asRequester = { id: requester.identifier, key: requester.secret };
async function pendingRequest(cn: string): Promise<Json> {
  const res = await v2('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'default', template: { csr: csrFor(cn) } }, asRequester);
  if (res.statusCode >= 300 || res.json().status !== 'pending') throw new Error(`pending ${cn}: ${res.statusCode} ${res.body}`);
  return res.json();
}

t.test('RequestAPI.RequestTemplate (webra enroll) — horizon-go docs/RequestAPI.md:L680-L743', async (t) => {
  const res = await v2('POST', '/api/v1/requests/template', { module: 'webra', workflow: 'enroll', profile: 'default', template: { csr: csrFor('v2-tpl.example.com') } });
  const body = v2Ok(t, res);
  // RequestTemplate200Response, WebRAEnrollRequestOnTemplateResponse: module, workflow, profile and a typed template.
  const templateShape: GoShape = {
    object: {
      module: str, workflow: str, profile: str,
      template: { object: { capabilities: { object: { centralized: bool, decentralized: bool, escrow: bool, defaultKeyType: str, authorizedKeyTypes: { array: str } } }, contactEmail: { object: {} }, extensions: { array: 'any' }, labels: { array: 'any' }, metadata: { array: 'any' }, owner: { object: {} }, passwordPolicy: { object: {} }, sans: { array: { object: { type: str, value: { array: str } } } }, subject: { array: { object: { element: str, type: str, value: str, editable: bool, mandatory: bool } } }, team: { object: {} } } },
    },
    required: ['module', 'workflow', 'profile', 'template'],
  };
  t.same(goDecodeErrors(body, templateShape), [], 'decodes as the enroll template answer');
  t.equal(body.module, 'webra');
  t.equal(body.workflow, 'enroll');
});

t.test('RequestAPI.RequestSubmit (webra enroll) — horizon-go docs/RequestAPI.md:L614-L677 + docs/WebRAEnrollRequestOnSubmitResponse.md:L7-L37', async (t) => {
  const res = await v2('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'default', template: { csr: csrFor('v2-submit.example.com', ['v2-submit.example.com']), contactEmail: { value: 'pki@example.com' } } });
  const body = checkRequest(t, res, 'enroll');
  t.equal(body.status, 'completed');
  t.ok(body.certificate, 'the issued certificate is embedded');
  t.same(goDecodeErrors(body.certificate, certificate), [], 'the embedded certificate decodes as Certificate (docs/Certificate.md L7-L41; extensions L17 = []CertificateExtension)');
});

t.test('RequestAPI.RequestGet — horizon-go docs/RequestAPI.md:L478-L545 (RequestGet200Response oneOf)', async (t) => {
  const done = await enrolled('v2-get.example.com');
  const res = await v2('GET', `/api/v1/requests/${done._id}`);
  const body = checkRequest(t, res, 'enroll');
  t.equal(body._id, done._id);
  t.same(goDecodeErrors(body.certificate, certificate), [], 'embedded certificate decodes');
});

t.test('RequestAPI.RequestApprove — horizon-go docs/RequestAPI.md:L87-L150 (RequestApproveRequest: WebRAEnrollRequestOnApprove)', async (t) => {
  const pending = await pendingRequest('v2-approve.example.com');
  const res = await v2('POST', '/api/v1/requests/approve', { _id: pending._id, module: 'webra', workflow: 'enroll', approverComment: 'ok' });
  const body = checkRequest(t, res, 'enroll');
  t.equal(body.status, 'completed');
});

t.test('RequestAPI.RequestDeny — horizon-go docs/RequestAPI.md:L351-L414 (RequestDenyRequest)', async (t) => {
  const pending = await pendingRequest('v2-deny.example.com');
  const res = await v2('POST', '/api/v1/requests/deny', { _id: pending._id, module: 'webra', workflow: 'enroll', approverComment: 'no' });
  const body = checkRequest(t, res, 'enroll');
  t.equal(body.status, 'denied');
});

t.test('RequestAPI.RequestCancel — horizon-go docs/RequestAPI.md:L153-L216 (RequestCancelRequest)', async (t) => {
  const pending = await pendingRequest('v2-cancel.example.com');
  const res = await v2('POST', '/api/v1/requests/cancel', { _id: pending._id, module: 'webra', workflow: 'enroll' }, asRequester);
  const body = checkRequest(t, res, 'enroll');
  t.equal(body.status, 'canceled');
});

t.test('RequestAPI.RequestSearch — horizon-go docs/RequestAPI.md:L548-L611 (RequestSearchResultsResponse)', async (t) => {
  await enrolled('v2-rsearch.example.com');
  const res = await v2('POST', '/api/v1/requests/search', { query: 'status equals "completed"', pageIndex: 1, pageSize: 10, withCount: true, sortedBy: [{ element: 'registrationDate', order: 'Desc' }] });
  const body = v2Ok(t, res);
  const shape: GoShape = { object: { results: { array: { object: { _id: str, module: str, workflow: str, status: requestStatus, registrationDate: int, lastModificationDate: int } } }, pageIndex: int, pageSize: int, hasMore: bool, count: int }, required: ['results', 'pageIndex', 'pageSize', 'hasMore'] };
  t.same(goDecodeErrors(body, shape), [], 'decodes as RequestSearchResultsResponse');
  t.ok(body.results.length >= 1);
  const dates = body.results.map((r: Json) => r.registrationDate);
  t.same(dates, [...dates].sort((a: number, b: number) => b - a), 'sortedBy registrationDate Desc');
});

t.test('RequestAPI.RequestAggregate — horizon-go docs/RequestAPI.md:L21-L84 (RequestAggregateResultResponse)', async (t) => {
  const res = await v2('POST', '/api/v1/requests/aggregate', { query: '', groupBy: ['workflow'], withCount: true });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { object: { items: { array: { object: { _id: { object: {} }, count: int }, required: ['_id', 'count'] } }, count: int }, required: ['items'] }), []);
  t.ok(body.items.some((i: Json) => i._id?.workflow === 'enroll' && i.count >= 1), 'an enroll group');
});

t.test('CertificateAPI.CertificateGetId — horizon-go docs/CertificateAPI.md:L280-L347 (CertificateWithPermissionsResponse)', async (t) => {
  const done = await enrolled('v2-certid.example.com');
  const res = await v2('GET', `/api/v1/certificates/${done.certificateId}`);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, certificateWithPermissions), [], 'decodes as CertificateWithPermissionsResponse');
  t.equal(body.certificate?._id, done.certificateId);
});

t.test('CertificateAPI.CertificateGetPem — horizon-go docs/CertificateAPI.md:L350-L417 (CertificateResponse, bare)', async (t) => {
  const done = await enrolled('v2-certpem.example.com');
  // The generated client url.PathEscape-s the path parameter it is given (the raw PEM).
  const res = await v2('GET', `/api/v1/certificates/${goPathEscape(done.certificate.certificate)}`);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, certificate), [], 'decodes as CertificateResponse');
  t.equal(body._id, done.certificateId);
});

t.test('CertificateAPI.CertificateFind — horizon-go docs/CertificateAPI.md:L214-L277 (CertificateFindRequest → CertificateWithPermissionsResponse)', async (t) => {
  const done = await enrolled('v2-find.example.com');
  // FindCertificateByPem {pem} and FindCertificateById {id} (the oneOf members of CertificateFindRequest).
  for (const sent of [{ pem: done.certificate.certificate }, { id: done.certificateId }]) {
    const res = await v2('POST', '/api/v1/certificates/find', sent);
    const body = v2Ok(t, res);
    t.same(goDecodeErrors(body, certificateWithPermissions), [], `${Object.keys(sent)[0]}: decodes as CertificateWithPermissionsResponse`);
    t.equal(body.certificate?._id, done.certificateId, `${Object.keys(sent)[0]}: the certificate found`);
  }
});

t.test('CertificateAPI.CertificateList — horizon-go docs/CertificateAPI.md:L420-L483 (POST /api/v1/certificates, []string → []CertificateWithPermissionsResponse)', async (t) => {
  const a = await enrolled('v2-list-a.example.com');
  const b = await enrolled('v2-list-b.example.com');
  const res = await v2('POST', '/api/v1/certificates', [a.certificateId, b.certificateId]);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { array: certificateWithPermissions }), [], 'decodes as []CertificateWithPermissionsResponse');
  t.same(Array.isArray(body) ? body.map((x: Json) => x.certificate?._id).sort() : body, [a.certificateId, b.certificateId].sort());
});

t.test('CertificateAPI.CertificateSearch — horizon-go docs/CertificateAPI.md:L560-L625 (CertificateSearchResultsResponse)', async (t) => {
  await enrolled('v2-csearch.example.com');
  const res = await v2('POST', '/api/v1/certificates/search', { query: 'status is valid and profile equals "default"', fields: ['dn', 'notAfter', 'extensions', 'subjectAlternateNames'], pageIndex: 1, pageSize: 3, withCount: true });
  const body = v2Ok(t, res);
  const item: GoShape = { object: { ...(certificate as { object: Record<string, GoShape> }).object }, required: ['_id'] };
  t.same(goDecodeErrors(body, { object: { results: { array: item }, pageIndex: int, pageSize: int, hasMore: bool, count: int }, required: ['results', 'pageIndex', 'pageSize', 'hasMore'] }), [], 'decodes as the search results');
  t.ok(body.results.length >= 1 && body.results.length <= 3);
  t.type(body.count, 'number', 'count with withCount');
});

t.test('CertificateAPI.CertificateAggregate — horizon-go docs/CertificateAPI.md:L19-L84 (CertificateAggregateResultResponse)', async (t) => {
  const res = await v2('POST', '/api/v1/certificates/aggregate', { query: 'status is valid', groupBy: ['profile'], sortOrder: 'Desc', withCount: true });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { object: { items: { array: { object: { _id: { object: {} }, count: int }, required: ['_id', 'count'] } }, count: int }, required: ['items'] }), []);
  t.ok(body.items.some((i: Json) => i._id?.profile === 'default'));
});

t.test('SecurityPrincipalAPI.SecurityPrincipalSelf — horizon-go docs/SecurityPrincipalAPI.md:L9 + docs/PrincipalResponse.md:L7-L12 (teams: []PrincipalResponseTeamsInner) + docs/PrincipalResponseTeamsInner.md:L7-L11', async (t) => {
  await v2('POST', '/api/v1/security/teams/', { name: 'v2-team' });
  const member = await createPrincipal(kernel, 'v2-member', { teams: [{ name: 'v2-team' }] });
  for (const who of [undefined, { id: member.identifier, key: member.secret }]) {
    const res = await v2('GET', '/api/v1/security/principals/self', undefined, who);
    const body = v2Ok(t, res);
    const shape: GoShape = { object: { identity: { object: { identifier: str, name: str, email: str, identityProviderName: str, identityProviderType: str } }, permissions: { array: { object: { value: str, filter: str }, required: ['value'] } }, roles: { array: str }, teams: { array: { object: { description: { array: 'any' }, displayName: { array: 'any' }, externallyManaged: bool, manager: bool, name: str } } }, preferences: { object: {} }, customDashboards: { array: 'any' } }, required: ['identity'] };
    t.same(goDecodeErrors(body, shape), [], `${who?.id ?? 'administrator'}: decodes as PrincipalResponse`);
    t.equal(body.identity?.identifier, who?.id ?? 'administrator');
    if (who) t.same(body.teams?.map((x: Json) => x.name), ['v2-team'], 'the team is listed by name');
  }
});

t.test('Rfc5280API.Rfc5280TcPem — horizon-go docs/Rfc5280API.md:L12 + docs/CFCertificate.md:L7-L32', async (t) => {
  const done = await enrolled('v2-tc.example.com');
  const res = await v2('GET', `/api/v1/rfc5280/tc/${goPathEscape(done.certificate.certificate)}?order=ltr`);
  const chain = v2Ok(t, res);
  const cf: GoShape = {
    object: { basicConstraints: { object: {} }, certificateSHAOneThumbprint: str, certificateThumbprint: str, crldps: { array: str }, dn: str, dnElements: { array: { object: { type: str, value: str } } }, extendedKeyUsages: { array: str }, extensions: { array: certificateExtension }, isExtendedKeyUsagesCritical: bool, isKeyUsagesCritical: bool, issuerDn: str, keyType: str, keyUsages: { array: str }, notAfter: int, notBefore: int, pem: str, publicKeyThumbprint: str, sans: { array: { object: { sanType: str, value: str } } }, selfSigned: bool, serial: str, signingAlgorithm: str, subjectKeyIdentifier: str },
    required: ['basicConstraints', 'certificateSHAOneThumbprint', 'certificateThumbprint', 'dn', 'dnElements', 'extendedKeyUsages', 'isExtendedKeyUsagesCritical', 'isKeyUsagesCritical', 'issuerDn', 'keyType', 'keyUsages', 'notAfter', 'notBefore', 'pem', 'publicKeyThumbprint', 'selfSigned', 'signingAlgorithm', 'subjectKeyIdentifier'],
  };
  t.same(goDecodeErrors(chain, { array: cf }), [], 'decodes as []CFCertificate');
  t.ok(chain.length >= 2);
  t.equal(chain.at(-1)?.selfSigned, true, 'ltr ends with the root');
});

t.test('SecurityPasswordpolicyAPI.PasswordPolicyGenerate — horizon-go docs/SecurityPasswordpolicyAPI.md:L9', async (t) => {
  const list = (await v2('GET', '/api/v1/security/passwordpolicies/')).json();
  const name = list[0]?.name as string;
  const res = await v2('GET', `/api/v1/security/passwordpolicies/${goPathEscape(name)}/generate`);
  const body = v2Ok(t, res);
  t.type(body, 'string', 'the return type is string: a bare JSON string');
  t.ok(String(body).length >= 12);
});

t.test('error answers (BasicError) — horizon-go api_request.go @1071ea1 RequestAggregateExecute error branch + docs/BasicError.md:L7-L11', async (t) => {
  const missing = await v2('POST', '/api/v1/requests/template', { module: 'webra', workflow: 'enroll', profile: 'no-such-profile' });
  const notFound = await v2('GET', '/api/v1/requests/0123456789abcdef01234567');
  const unauth = await kernel.app.inject({ method: 'GET', url: '/api/v1/security/principals/self', headers: { host: 'localhost', ...v2Headers(false, 'administrator', 'wrong-secret') } });
  for (const [what, res] of [['unknown profile', missing], ['unknown request', notFound], ['bad credentials', unauth]] as const) {
    t.ok(res.statusCode >= 300, `${what}: an error (${res.statusCode})`);
    t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, `${what}: Content-Type matches JsonCheck`);
    const body = res.json();
    t.same(goDecodeErrors(body, basicError), [], `${what}: decodes as BasicError`);
    t.equal(body.status, res.statusCode, `${what}: status is the HTTP status`);
  }
  t.equal(unauth.statusCode, 401);
  t.equal(unauth.json().error, 'SEC-AUTH-002');
});
