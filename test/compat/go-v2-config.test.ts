/**
 * Contract tests for the configuration and security operations of the vendor's OpenAPI-generated Go SDK,
 * evertrust/horizon-go v2 (module github.com/evertrust/horizon-go/v2), as stored in the public index — the
 * lifecycle operations are in test/compat/go-v2.test.ts, whose conventions this file follows. Operation lines
 * cite docs/<Api>.md (path, body model, return model, declared Accept), model lines cite docs/<Model>.md (its
 * property table: a property not marked "Pointer to" is required and checked by the model's UnmarshalJSON,
 * e.g. models/model_label_response.go @18774e9 UnmarshalJSON; unknown keys land in AdditionalProperties).
 * Commits: docs/CertificateLabelAPI.md, docs/LabelResponse.md, docs/SecurityTeamAPI.md, docs/TeamResponse.md,
 * docs/Team.md, docs/SecurityPrincipalinfoAPI.md, docs/PrincipalInfo.md, docs/PrincipalInfoResponse.md,
 * docs/LocalIdentityOnAdd.md, docs/LocalIdentityResponse.md @46c9c95; docs/Label.md,
 * docs/SecurityIdentityLocalAPI.md, docs/SecurityPasswordpolicyAPI.md @18774e9; docs/SetPasswordRequest.md,
 * docs/LocalizedString.md @9bb7c7b; docs/PasswordPolicyResponse.md, docs/CertificateProfileAPI.md @6fc5fe1;
 * docs/WebRAProfileResponse.md @013fc32.
 *
 * What the generated client does, checked here: X-API-KEY and X-API-ID on every call; `Content-Type:
 * application/json` only with a body; `Accept` chosen by selectHeaderAccept from the operation's declared list
 * (application/json when listed, else the list joined: an operation with no success body — the deletes,
 * SecurityIdentityLocalPasswordSet, SecurityTeamSwitch — declares only application/problem+json); bodies are
 * the model's ToMap through json.Marshal (map keys in sorted order, optional keys left out when unset,
 * required ones always written); a status >= 300 is an error; a success body is decoded only for operations
 * with a return type, and only when its Content-Type matches JsonCheck.
 *
 * v2 operations of these APIs that this file does not replay:
 *   - SecurityTeamMembersAdd/MembersGet/MembersRemove (/api/v1/security/teams/{name}/members): served; their
 *     contract tests are in go-v2-team-members.test.ts (MembersGet answers []string to an Accept of
 *     application/json without a wildcard, member objects otherwise: member-routes.ts wantsIdentifierList).
 *   - SecurityIdentityLocalPasswordReset / PasswordResetRequest: the reset needs the uuid mailed to the
 *     identity, which no API caller can read.
 *   - CertificateProfileAPI Get/Add/List/Update: replayed in horizon-profiles.test.ts.
 *
 * Known gaps (these client calls fail today; issue 23's note lists them): none.
 *   SecurityTeamAPI Add/Get/List/Update (TeamResponse requires `managers`) and SecurityPrincipalinfoAPI
 *   Add/Update/Get/Search (`enabled`, `creationDate`) pass since teams and principal infos answer those keys:
 *   their contract tests are in teams-principal-infos.test.ts.
 */
import t, { type Test } from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/**
 * Headers of a generated operation: Content-Type only with a body, Accept as selectHeaderAccept picks it
 * (client.go: "application/json" when declared, else the declared list joined with ",").
 */
function v2Headers(withBody: boolean, accept: string): Record<string, string> {
  return { ...(withBody ? { 'Content-Type': 'application/json' } : {}), Accept: accept, 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
}
/** An operation with a return type (declares "application/json, application/problem+json"). */
async function v2(method: Method, path: string, body?: unknown): Promise<Res> {
  return kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...v2Headers(body !== undefined, 'application/json') }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}
/** An operation with no success body (declares only "application/problem+json"). */
async function v2NoContent(method: Method, path: string, body?: unknown): Promise<Res> {
  return kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...v2Headers(body !== undefined, 'application/problem+json') }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

/** Success with a return type: status < 300 and a Content-Type the client decodes (client.go decode + JsonCheck). */
function v2Ok(t: Test, res: Res): Json {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  return JSON.parse(res.body) as Json;
}
/** Success with no return type: only the status is read (the generated Execute returns the *http.Response). */
function v2Done(t: Test, res: Res): void {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 300)}`);
}

// ---- model shapes -------------------------------------------------------------------------------------
const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
/** docs/LocalizedString.md @9bb7c7b L7-L8: {lang, value}, both required. */
const localized: GoShape = { array: { object: { lang: str, value: str }, required: ['lang', 'value'] } };
/** docs/LabelResponse.md @46c9c95 L7-L10. */
const labelResponse: GoShape = { object: { _id: str, description: localized, displayName: localized, name: str }, required: ['_id', 'name'] };
/** docs/LocalIdentityResponse.md @46c9c95 L7-L10. */
const localIdentityResponse: GoShape = { object: { _id: str, email: str, identifier: str, name: str }, required: ['_id', 'identifier'] };
/** docs/PasswordPolicyResponse.md @6fc5fe1 L7-L15. */
const passwordPolicyResponse: GoShape = {
  object: { _id: str, name: str, minChar: int, maxChar: int, minUpChar: int, minLoChar: int, minDiChar: int, spChar: str, minSpChar: int },
  required: ['_id', 'name', 'minChar'],
};

// ---- CertificateLabelAPI -------------------------------------------------------------------------------

t.test('CertificateLabelAPI.LabelAdd — horizon-go docs/CertificateLabelAPI.md:L15-L78 (Label docs/Label.md:L7-L9 → LabelResponse docs/LabelResponse.md:L7-L10)', async (t) => {
  // NewLabel("v2-bu") with a display name: ToMap writes displayName (set) and name (required); description unset is left out.
  const res = await v2('POST', '/api/v1/certificate/labels', { displayName: [{ lang: 'en', value: 'Business unit' }], name: 'v2-bu' });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, labelResponse), [], 'decodes as LabelResponse');
  t.equal(body.name, 'v2-bu');
  t.same(body.displayName, [{ lang: 'en', value: 'Business unit' }]);
});

t.test('CertificateLabelAPI.LabelList — horizon-go docs/CertificateLabelAPI.md:L219-L277 ([]LabelResponse)', async (t) => {
  await v2('POST', '/api/v1/certificate/labels', { name: 'v2-list-label' });
  const res = await v2('GET', '/api/v1/certificate/labels');
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { array: labelResponse }), [], 'decodes as []LabelResponse');
  t.ok(Array.isArray(body) && body.some((l: Json) => l.name === 'v2-list-label'), 'the label is listed');
});

t.test('CertificateLabelAPI.LabelGet — horizon-go docs/CertificateLabelAPI.md:L149-L216 (LabelResponse)', async (t) => {
  await v2('POST', '/api/v1/certificate/labels', { name: 'v2-get-label' });
  const res = await v2('GET', `/api/v1/certificate/labels/${goPathEscape('v2-get-label')}`);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, labelResponse), [], 'decodes as LabelResponse');
  t.equal(body.name, 'v2-get-label');
});

t.test('CertificateLabelAPI.LabelUpdate — horizon-go docs/CertificateLabelAPI.md:L280-L343 (PUT /api/v1/certificate/labels, the label named in the body)', async (t) => {
  await v2('POST', '/api/v1/certificate/labels', { name: 'v2-upd-label' });
  const res = await v2('PUT', '/api/v1/certificate/labels', { description: [{ lang: 'en', value: 'Cost centre' }], name: 'v2-upd-label' });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, labelResponse), [], 'decodes as LabelResponse');
  t.same(body.description, [{ lang: 'en', value: 'Cost centre' }], 'the description is updated');
});

t.test('CertificateLabelAPI.LabelDelete — horizon-go docs/CertificateLabelAPI.md:L81-L146 (no return type, Accept application/problem+json)', async (t) => {
  await v2('POST', '/api/v1/certificate/labels', { name: 'v2-del-label' });
  v2Done(t, await v2NoContent('DELETE', `/api/v1/certificate/labels/${goPathEscape('v2-del-label')}`));
  const gone = await v2('GET', `/api/v1/certificate/labels/${goPathEscape('v2-del-label')}`);
  t.equal(gone.statusCode, 404, 'the label is gone');
});

// ---- SecurityTeamAPI (Add/Get/List/Update: teams-principal-infos.test.ts) ---------------------------------------------------

t.test('SecurityTeamAPI.SecurityTeamDelete — horizon-go docs/SecurityTeamAPI.md:L85-L150 (no return type)', async (t) => {
  // Set-up through the route.
  t.ok((await v2('POST', '/api/v1/security/teams', { name: 'v2-del-team' })).statusCode < 300, 'set-up: team created');
  v2Done(t, await v2NoContent('DELETE', `/api/v1/security/teams/${goPathEscape('v2-del-team')}`));
  t.equal((await v2('GET', `/api/v1/security/teams/${goPathEscape('v2-del-team')}`)).statusCode, 404, 'the team is gone');
});

t.test('SecurityTeamAPI.SecurityTeamSwitch — horizon-go docs/SecurityTeamAPI.md:L494-L562 (PATCH /api/v1/security/teams/{previousTeam}/{newTeam}, no body, no return type)', async (t) => {
  t.ok((await v2('POST', '/api/v1/security/teams', { name: 'v2-old-team' })).statusCode < 300, 'set-up: team created');
  v2Done(t, await v2NoContent('PATCH', `/api/v1/security/teams/${goPathEscape('v2-old-team')}/${goPathEscape('v2-new-team')}`));
  t.equal((await v2('GET', `/api/v1/security/teams/${goPathEscape('v2-new-team')}`)).statusCode, 200, 'the objects are now under the new team');
});

// ---- SecurityIdentityLocalAPI ---------------------------------------------------------------------------

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalAdd — horizon-go docs/SecurityIdentityLocalAPI.md:L18-L81 (LocalIdentityOnAdd docs/LocalIdentityOnAdd.md:L7-L10 → LocalIdentityResponse docs/LocalIdentityResponse.md:L7-L10)', async (t) => {
  // NewLocalIdentityOnAdd("v2-alice") + SetEmail: {email, identifier} in key order; name and password unset.
  const res = await v2('POST', '/api/v1/security/identity/locals', { email: 'alice@example.com', identifier: 'v2-alice' });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, localIdentityResponse), [], 'decodes as LocalIdentityResponse');
  t.equal(body.identifier, 'v2-alice');
  t.equal(body.email, 'alice@example.com');
});

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalPasswordSet — horizon-go docs/SecurityIdentityLocalAPI.md:L415-L476 (PATCH SetPasswordRequest docs/SetPasswordRequest.md:L7-L9, no return type)', async (t) => {
  await v2('POST', '/api/v1/security/identity/locals', { email: 'bob@example.com', identifier: 'v2-bob' });
  // NewSetPasswordRequest(password) + SetIdentifier: {identifier, password}; previousPassword unset (an administrator setting another's password).
  v2Done(t, await v2NoContent('PATCH', '/api/v1/security/identity/locals', { identifier: 'v2-bob', password: 'Sup3r-Secure-Passw0rd!' }));
});

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalGet — horizon-go docs/SecurityIdentityLocalAPI.md:L152-L219', async (t) => {
  await v2('POST', '/api/v1/security/identity/locals', { identifier: 'v2-carol' });
  const res = await v2('GET', `/api/v1/security/identity/locals/${goPathEscape('v2-carol')}`);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, localIdentityResponse), [], 'decodes as LocalIdentityResponse');
  t.equal(body.identifier, 'v2-carol');
});

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalList — horizon-go docs/SecurityIdentityLocalAPI.md:L222-L280 ([]LocalIdentityResponse)', async (t) => {
  const res = await v2('GET', '/api/v1/security/identity/locals');
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { array: localIdentityResponse }), [], 'decodes as []LocalIdentityResponse');
  t.ok(Array.isArray(body) && body.some((i: Json) => i.identifier === 'administrator'), 'the administrator is listed');
});

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalUpdate — horizon-go docs/SecurityIdentityLocalAPI.md:L479-L542 (PUT LocalIdentity)', async (t) => {
  await v2('POST', '/api/v1/security/identity/locals', { identifier: 'v2-dave' });
  // NewLocalIdentity("v2-dave") + SetEmail + SetName: {email, identifier, name}.
  const res = await v2('PUT', '/api/v1/security/identity/locals', { email: 'dave@example.com', identifier: 'v2-dave', name: 'Dave' });
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, localIdentityResponse), [], 'decodes as LocalIdentityResponse');
  t.equal(body.email, 'dave@example.com');
  t.equal(body.name, 'Dave');
});

t.test('SecurityIdentityLocalAPI.SecurityIdentityLocalDelete — horizon-go docs/SecurityIdentityLocalAPI.md:L84-L149 (no return type)', async (t) => {
  await v2('POST', '/api/v1/security/identity/locals', { identifier: 'v2-erin' });
  v2Done(t, await v2NoContent('DELETE', `/api/v1/security/identity/locals/${goPathEscape('v2-erin')}`));
  t.equal((await v2('GET', `/api/v1/security/identity/locals/${goPathEscape('v2-erin')}`)).statusCode, 404, 'the identity is gone');
});

// ---- SecurityPrincipalinfoAPI (Add/Get/Update/Search: teams-principal-infos.test.ts) ---------------------------------------

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoDelete — horizon-go docs/SecurityPrincipalinfoAPI.md:L151-L216 (no return type)', async (t) => {
  // Set-up with the secret engine's body ({identifier, contact, roles, teams}, client-compat §7).
  const created = await v2('POST', '/api/v1/security/principalinfos', { identifier: 'v2-frank', contact: 'frank@example.com', roles: [], teams: [] });
  t.ok(created.statusCode < 300, `set-up: principal information created (${created.statusCode} ${created.body.slice(0, 200)})`);
  v2Done(t, await v2NoContent('DELETE', `/api/v1/security/principalinfos/${goPathEscape('v2-frank')}`));
  t.equal((await v2('GET', `/api/v1/security/principalinfos/${goPathEscape('v2-frank')}`)).statusCode, 404, 'the principal information is gone');
});

// ---- SecurityPasswordpolicyAPI ---------------------------------------------------------------------------

t.test('SecurityPasswordpolicyAPI.PasswordPolicyList — horizon-go docs/SecurityPasswordpolicyAPI.md:L290-L348 ([]PasswordPolicyResponse docs/PasswordPolicyResponse.md:L7-L15)', async (t) => {
  const res = await v2('GET', '/api/v1/security/passwordpolicies');
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, { array: passwordPolicyResponse }), [], 'decodes as []PasswordPolicyResponse');
  t.ok(Array.isArray(body) && body.length >= 1, 'at least the default policy');
});

t.test('SecurityPasswordpolicyAPI.PasswordPolicyGet — horizon-go docs/SecurityPasswordpolicyAPI.md:L220-L287 (PasswordPolicyResponse)', async (t) => {
  const name = (JSON.parse((await v2('GET', '/api/v1/security/passwordpolicies')).body) as Json[])[0]?.name as string;
  const res = await v2('GET', `/api/v1/security/passwordpolicies/${goPathEscape(name)}`);
  const body = v2Ok(t, res);
  t.same(goDecodeErrors(body, passwordPolicyResponse), [], 'decodes as PasswordPolicyResponse');
  t.equal(body.name, name);
  t.ok(Number.isInteger(body.minChar) && body.minChar > 0, 'minChar (int64)');
});
