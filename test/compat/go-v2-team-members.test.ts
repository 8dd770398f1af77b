/**
 * Contract tests for the team member operations of the vendor's OpenAPI-generated Go SDK, evertrust/horizon-go
 * v2 (module github.com/evertrust/horizon-go/v2), as stored in the public index; conventions as in
 * go-v2-config.test.ts. Operation lines cite docs/<Api>.md (path, body, return type, declared Accept), read
 * with the generated api_security_team.go @1071ea1 (SecurityTeamMembersAdd/Get/RemoveExecute). Commits:
 * docs/SecurityTeamAPI.md, docs/BasicError.md @46c9c95; docs/TeamAPI.md @1071ea1 (the RA route
 * /api/v1/teams/{name}/members, same operations and wire shapes).
 *
 * What the generated client does for these three operations, checked here:
 *   - SecurityTeamMembersAdd: POST /api/v1/security/teams/{name}/members, the name through url.PathEscape, body
 *     the `[]string` of identifiers through json.Marshal (a JSON array of strings), `Content-Type:
 *     application/json`, `Accept: application/problem+json` (the only declared type), no return type: only
 *     the status is read (>= 300 is an error; 401/403/404/500 bodies decoded as BasicError).
 *   - SecurityTeamMembersGet: GET, no body and no Content-Type, `Accept: application/json` (selectHeaderAccept
 *     picks it from "application/json, application/problem+json"), the answer decoded into `[]string` when its
 *     Content-Type matches JsonCheck — an array of objects fails json.Unmarshal.
 *   - SecurityTeamMembersRemove: DELETE with the same body and headers as Add, no return type.
 * X-API-KEY and X-API-ID on every call.
 *
 * The route also serves the MCP server's member tools and Certwright's own callers, which keep the member
 * objects: the shape is negotiated on Accept (core/security/groups/member-routes.ts wantsIdentifierList), and
 * test/compat/mcp-config-security.test.ts replays the MCP calls.
 */
import t, { type Test } from 'tap';
import { bootKernel, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';

const kernel = await bootKernel(t);

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/**
 * A generated operation: Content-Type only with a body, Accept as selectHeaderAccept picks it
 * ("application/json" when declared, else the declared list joined).
 */
async function v2(method: 'GET' | 'POST' | 'DELETE', path: string, accept: string, body?: unknown): Promise<Res> {
  const headers = { host: 'localhost', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), Accept: accept, 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
  return kernel.app.inject({ method, url: path, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}
/** The operations with a return type declare "application/json, application/problem+json". */
const RETURNS = 'application/json';
/** The operations with no success body declare only "application/problem+json". */
const NO_CONTENT = 'application/problem+json';

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
/** An error: status >= 300, the body decoded as BasicError when its Content-Type matches JsonCheck. */
function v2Error(t: Test, res: Res, status: number): void {
  t.equal(res.statusCode, status, `answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'the error Content-Type matches JsonCheck');
  t.same(goDecodeErrors(JSON.parse(res.body), basicError), [], 'the error decodes as BasicError');
}

/** docs/BasicError.md @46c9c95 L7-L11. */
const basicError: GoShape = { object: { detail: 'string', error: 'string', message: 'string', status: 'int', title: 'string' }, required: ['error', 'message', 'status', 'title'] };
/** The return type of SecurityTeamMembersGet / TeamMembersGet. */
const identifiers: GoShape = { array: 'string' };

const TEAM = 'v2 members'; // a space, so the name goes through url.PathEscape as %20
const members = (base: string, name: string) => `${base}/${goPathEscape(name)}/members`;
const SECURITY = '/api/v1/security/teams';
const RA = '/api/v1/teams';

t.before(async () => {
  const created = await v2('POST', SECURITY, RETURNS, { name: TEAM });
  if (created.statusCode >= 300) throw new Error(`set-up: team not created: ${created.body}`);
});

// ---- SecurityTeamAPI -----------------------------------------------------------------------------------

t.test('SecurityTeamAPI.SecurityTeamMembersAdd — horizon-go docs/SecurityTeamAPI.md:L284-L351 (body []string, no return type)', async (t) => {
  v2Done(t, await v2('POST', members(SECURITY, TEAM), NO_CONTENT, ['v2-alice', 'v2-bob', 'v2.carol@example.com']));
  const listed = v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS));
  t.same(listed, ['v2-alice', 'v2-bob', 'v2.carol@example.com'], 'the three are members');
  v2Done(t, await v2('POST', members(SECURITY, TEAM), NO_CONTENT, ['v2-alice']));
  t.same(v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS)), listed, 'adding a member again changes nothing');
  v2Error(t, await v2('POST', members(SECURITY, 'v2 no such team'), NO_CONTENT, ['v2-alice']), 404);
});

t.test('SecurityTeamAPI.SecurityTeamMembersGet — horizon-go docs/SecurityTeamAPI.md:L354-L421 ([]string)', async (t) => {
  const body = v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS));
  t.same(goDecodeErrors(body, identifiers), [], 'decodes as []string');
  t.ok(Array.isArray(body) && body.includes('v2-alice'), `the member is listed: ${JSON.stringify(body)}`);
  v2Error(t, await v2('GET', members(SECURITY, 'v2 no such team'), RETURNS), 404);

  // The same route keeps Certwright's member objects for callers that send no Accept or a wildcard (the MCP
  // server's undici fetch sends */*).
  for (const accept of [undefined, '*/*', 'application/json, text/plain, */*']) {
    const res = await kernel.app.inject({ method: 'GET', url: members(SECURITY, TEAM), headers: { host: 'localhost', 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', ...(accept ? { Accept: accept } : {}) } });
    t.equal(res.statusCode, 200);
    t.match(res.headers.vary, /\bAccept\b/, 'the answer varies on Accept');
    const objects = JSON.parse(res.body) as Json;
    t.ok(Array.isArray(objects) && objects.some((m: Json) => m.identifier === 'v2-alice' && m.manager === false), `Accept ${accept ?? '(none)'}: member objects: ${res.body.slice(0, 200)}`);
  }
});

t.test('SecurityTeamAPI.SecurityTeamMembersRemove — horizon-go docs/SecurityTeamAPI.md:L424-L491 (body []string, no return type)', async (t) => {
  v2Done(t, await v2('DELETE', members(SECURITY, TEAM), NO_CONTENT, ['v2-bob', 'v2.carol@example.com']));
  t.same(v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS)), ['v2-alice'], 'the two are gone');
  v2Done(t, await v2('DELETE', members(SECURITY, TEAM), NO_CONTENT, ['v2-bob']));
  t.same(v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS)), ['v2-alice'], 'removing a non-member changes nothing');
  v2Error(t, await v2('DELETE', members(SECURITY, 'v2 no such team'), NO_CONTENT, ['v2-alice']), 404);
});

// ---- TeamAPI (RA route, same operations) ----------------------------------------------------------------

t.test('TeamAPI.TeamMembersAdd — horizon-go docs/TeamAPI.md:L13-L80 (body []string, no return type)', async (t) => {
  v2Done(t, await v2('POST', members(RA, TEAM), NO_CONTENT, ['v2-dave']));
  t.ok((v2Ok(t, await v2('GET', members(SECURITY, TEAM), RETURNS)) as string[]).includes('v2-dave'), 'the member is added');
});

t.test('TeamAPI.TeamMembersGet — horizon-go docs/TeamAPI.md:L83-L150 ([]string)', async (t) => {
  const body = v2Ok(t, await v2('GET', members(RA, TEAM), RETURNS));
  t.same(goDecodeErrors(body, identifiers), [], 'decodes as []string');
  t.same(body, ['v2-alice', 'v2-dave']);
});

t.test('TeamAPI.TeamMembersRemove — horizon-go docs/TeamAPI.md:L153-L220 (body []string, no return type)', async (t) => {
  v2Done(t, await v2('DELETE', members(RA, TEAM), NO_CONTENT, ['v2-dave']));
  t.same(v2Ok(t, await v2('GET', members(RA, TEAM), RETURNS)), ['v2-alice'], 'the member is gone');
});
