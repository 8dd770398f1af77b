/**
 * Contract tests: the client calls on teams (`managers`, `webhook`) and principal information (`enabled`,
 * `creationDate`) of the vendor's clients, each request sent exactly as the client sends it and each answer
 * checked as the client reads it.
 *
 * - horizon-go v2 (OpenAPI-generated; conventions and transport as in go-v2-config.test.ts): operation lines cite
 *   docs/<Api>.md, model lines docs/<Model>.md (a property not marked "Pointer to" is required and checked by the
 *   model's UnmarshalJSON, e.g. models/model_team_response.go @18774e9). Commits: docs/SecurityTeamAPI.md,
 *   docs/Team.md, docs/TeamResponse.md, docs/SecurityPrincipalinfoAPI.md, docs/PrincipalInfo.md,
 *   docs/PrincipalInfoResponse.md, docs/PrincipalInfoSearchResultsResponse.md @46c9c95;
 *   docs/SecurityTeamUpdateRequest.md, docs/PrincipalInfoSearchQuery.md @1071ea1; docs/Webhook.md,
 *   docs/LocalizedString.md @9bb7c7b (models/model_webhook.go @18774e9: type and url required);
 *   docs/Permission.md @18774e9.
 * - horizon-mcp create_team / update_team (transport: mcp-config-client.ts): line ranges of the index's copy of
 *   src/tools/config/teams.ts @16a96fa (webhookSchema L46-L63: {type: slack|teams, url}; managersSchema L71-L75:
 *   principal identifiers) and src/tools/config/_scaffold.ts getStripMergePutExplicit (clear_fields → null).
 */
import t, { type Test } from 'tap';
import { bootKernel, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { createPrincipal } from '../helpers/security.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';
import { McpClient, expectOk, expectProblem, getStripMergePut, itemPath, type Json as McpJson } from './mcp-config-client.js';

const kernel = await bootKernel(t);
await createPrincipal(kernel, 'mcp-alice');
await createPrincipal(kernel, 'go-manager');
const mcp = new McpClient(kernel);
await mcp.init();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };

/** A generated operation with a return type: Content-Type only with a body, Accept application/json (selectHeaderAccept). */
async function v2(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Res> {
  const headers = { host: 'localhost', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), Accept: 'application/json', 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
  return kernel.app.inject({ method, url: path, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}
/** Success with a return type: status < 300 and a Content-Type matching JsonCheck. */
function v2Ok(t: Test, res: Res): Json {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  return JSON.parse(res.body) as Json;
}

// ---- model shapes -------------------------------------------------------------------------------------
const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
/** docs/LocalizedString.md @9bb7c7b L7-L8. */
const localized: GoShape = { array: { object: { lang: str, value: str }, required: ['lang', 'value'] } };
/** docs/Webhook.md @9bb7c7b L7-L8 (NullableWebhook: null decodes as unset). */
const webhook: GoShape = { object: { type: str, url: str }, required: ['type', 'url'] };
/** docs/TeamResponse.md @46c9c95 L7-L13: _id, managers ([]string) and name required. */
const teamResponse: GoShape = {
  object: { _id: str, contact: str, description: localized, displayName: localized, managers: { array: str }, name: str, webhook },
  required: ['_id', 'managers', 'name'],
};
/** docs/Permission.md @18774e9 L7-L8. */
const permission: GoShape = { object: { filter: str, value: str }, required: ['value'] };
/** docs/PrincipalInfoResponse.md @46c9c95 L7-L19: _id, creationDate (int64), enabled (bool), identifier required. */
const principalInfoResponse: GoShape = {
  object: {
    _id: str,
    contact: str,
    creationDate: int,
    customDashboards: 'any',
    enabled: bool,
    identifier: str,
    lastAuthentication: int,
    lastModification: int,
    permissions: { array: permission },
    preferences: 'any',
    roles: { array: str },
    savedQueries: 'any',
    teams: { array: str },
  },
  required: ['_id', 'creationDate', 'enabled', 'identifier'],
};
/** docs/PrincipalInfo.md @46c9c95 L7-L15 (the search results' model): enabled and identifier required. */
const principalInfo: GoShape = {
  object: { contact: str, customDashboards: 'any', enabled: bool, identifier: str, permissions: { array: permission }, preferences: 'any', roles: { array: str }, savedQueries: 'any', teams: { array: str } },
  required: ['enabled', 'identifier'],
};
/** docs/PrincipalInfoSearchResultsResponse.md @46c9c95 L7-L11. */
const principalInfoSearchResults: GoShape = { object: { count: int, hasMore: bool, pageIndex: int, pageSize: int, results: { array: principalInfo } }, required: ['hasMore', 'pageIndex', 'pageSize', 'results'] };

const now = Date.now();
/** creationDate: int64 epoch milliseconds of a row written by this run. */
const recentMs = (t: Test, value: unknown) => t.ok(Number.isInteger(value) && (value as number) > now - 3_600_000 && (value as number) <= Date.now() + 1000, `creationDate ${String(value)} is epoch ms`);

// ---- horizon-go v2 SecurityTeamAPI ------------------------------------------------------------------------

t.test('SecurityTeamAPI.SecurityTeamAdd — horizon-go docs/SecurityTeamAPI.md:L19-L82 (Team docs/Team.md:L7-L12 → TeamResponse docs/TeamResponse.md:L7-L13)', async (t) => {
  // NewTeam("v2-pki-ops") alone: ToMap writes name only.
  const minimal = v2Ok(t, await v2('POST', '/api/v1/security/teams', { name: 'v2-pki-ops' }));
  t.same(goDecodeErrors(minimal, teamResponse), [], 'decodes as TeamResponse');
  t.same(minimal.managers, [], 'managers: an empty []string');
  // Every setter: json.Marshal of the ToMap map writes the keys in sorted order.
  const full = v2Ok(
    t,
    await v2('POST', '/api/v1/security/teams', {
      contact: 'pki@example.com',
      description: [{ lang: 'en', value: 'PKI operations' }],
      displayName: [{ lang: 'en', value: 'PKI Ops' }],
      managers: ['go-manager'],
      name: 'v2-pki-full',
      webhook: { type: 'teams', url: 'https://example.webhook.office.com/webhookb2/abc' },
    }),
  );
  t.same(goDecodeErrors(full, teamResponse), [], 'decodes as TeamResponse');
  t.match(full, { name: 'v2-pki-full', contact: 'pki@example.com', managers: ['go-manager'], webhook: { type: 'teams', url: 'https://example.webhook.office.com/webhookb2/abc' } });
});

t.test('SecurityTeamAPI.SecurityTeamGet — horizon-go docs/SecurityTeamAPI.md:L153-L220 (TeamResponse)', async (t) => {
  const body = v2Ok(t, await v2('GET', `/api/v1/security/teams/${goPathEscape('v2-pki-full')}`));
  t.same(goDecodeErrors(body, teamResponse), [], 'decodes as TeamResponse');
  t.same(body.managers, ['go-manager']);
  t.same(body.webhook, { type: 'teams', url: 'https://example.webhook.office.com/webhookb2/abc' });
});

t.test('SecurityTeamAPI.SecurityTeamList — horizon-go docs/SecurityTeamAPI.md:L223-L281 ([]TeamResponse)', async (t) => {
  const body = v2Ok(t, await v2('GET', '/api/v1/security/teams'));
  t.same(goDecodeErrors(body, { array: teamResponse }), [], 'decodes as []TeamResponse');
  t.ok(Array.isArray(body) && body.some((team: Json) => team.name === 'v2-pki-ops'), 'the team is listed');
});

t.test('SecurityTeamAPI.SecurityTeamUpdate — horizon-go docs/SecurityTeamAPI.md:L565-L628 (SecurityTeamUpdateRequest docs/SecurityTeamUpdateRequest.md:L7-L13 → TeamResponse)', async (t) => {
  // NewSecurityTeamUpdateRequest("v2-pki-ops") + SetManagers + SetWebhook.
  const body = v2Ok(t, await v2('PUT', '/api/v1/security/teams', { managers: ['go-manager'], name: 'v2-pki-ops', webhook: { type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/x' } }));
  t.same(goDecodeErrors(body, teamResponse), [], 'decodes as TeamResponse');
  t.match(body, { name: 'v2-pki-ops', managers: ['go-manager'], webhook: { type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/x' } });
  // SetWebhookNil: an explicit null clears it (NullableWebhook decodes null as unset).
  const cleared = v2Ok(t, await v2('PUT', '/api/v1/security/teams', { name: 'v2-pki-ops', webhook: null }));
  t.same(goDecodeErrors(cleared, teamResponse), [], 'decodes as TeamResponse');
  t.equal(cleared.webhook, null);
  t.same(cleared.managers, ['go-manager'], 'managers unset in the request: kept');
});

// ---- horizon-go v2 SecurityPrincipalinfoAPI ----------------------------------------------------------------

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoAdd — horizon-go docs/SecurityPrincipalinfoAPI.md:L85-L148 (PrincipalInfo docs/PrincipalInfo.md:L7-L15 → PrincipalInfoResponse docs/PrincipalInfoResponse.md:L7-L19)', async (t) => {
  // NewPrincipalInfo(true, "v2-grace") + SetContact + SetPermissions + SetRoles + SetTeams, keys sorted.
  const body = v2Ok(
    t,
    await v2('POST', '/api/v1/security/principalinfos', {
      contact: 'grace@example.com',
      enabled: true,
      identifier: 'v2-grace',
      permissions: [{ value: 'configuration:teams:read' }],
      roles: [],
      teams: ['v2-pki-ops'],
    }),
  );
  t.same(goDecodeErrors(body, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.match(body, { identifier: 'v2-grace', enabled: true, teams: ['v2-pki-ops'], permissions: [{ value: 'configuration:teams:read' }] });
  recentMs(t, body.creationDate);
  // NewPrincipalInfo(false, "v2-henry"): created disabled.
  const disabled = v2Ok(t, await v2('POST', '/api/v1/security/principalinfos', { enabled: false, identifier: 'v2-henry' }));
  t.same(goDecodeErrors(disabled, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.equal(disabled.enabled, false);
});

t.test('SecurityPrincipalinfoAPI.ScurityPrincipalInfoGet — horizon-go docs/SecurityPrincipalinfoAPI.md:L15-L82 (PrincipalInfoResponse)', async (t) => {
  const body = v2Ok(t, await v2('GET', `/api/v1/security/principalinfos/${goPathEscape('v2-grace')}`));
  t.same(goDecodeErrors(body, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.match(body, { identifier: 'v2-grace', enabled: true });
  recentMs(t, body.creationDate);
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoUpdate — horizon-go docs/SecurityPrincipalinfoAPI.md:L285-L348 (PUT PrincipalInfo → PrincipalInfoResponse)', async (t) => {
  const created = JSON.parse((await v2('GET', `/api/v1/security/principalinfos/${goPathEscape('v2-grace')}`)).body) as Json;
  // NewPrincipalInfo(false, "v2-grace") + SetTeams: disables the principal.
  const body = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', { enabled: false, identifier: 'v2-grace', teams: ['v2-pki-ops'] }));
  t.same(goDecodeErrors(body, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.match(body, { identifier: 'v2-grace', enabled: false, teams: ['v2-pki-ops'] });
  t.equal(body.creationDate, created.creationDate, 'creationDate does not move on an update');
  const enabled = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', { enabled: true, identifier: 'v2-grace' }));
  t.equal(enabled.enabled, true);
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (PrincipalInfoSearchQuery docs/PrincipalInfoSearchQuery.md:L7-L15 → PrincipalInfoSearchResultsResponse)', async (t) => {
  // NewPrincipalInfoSearchQuery() + SetPageIndex(1) + SetPageSize(100) + SetWithCount(true).
  const body = v2Ok(t, await v2('POST', '/api/v1/security/principalinfos/search', { pageIndex: 1, pageSize: 100, withCount: true }));
  t.same(goDecodeErrors(body, principalInfoSearchResults), [], 'decodes as PrincipalInfoSearchResultsResponse');
  const henry = (body.results as Json[]).find((r) => r.identifier === 'v2-henry');
  t.match(henry, { enabled: false }, 'each result carries enabled');
  // NewPrincipalInfoSearchQuery() alone: an empty object.
  t.same(goDecodeErrors(v2Ok(t, await v2('POST', '/api/v1/security/principalinfos/search', {})), principalInfoSearchResults), [], 'decodes');
});

// ---- horizon-mcp teams.ts ---------------------------------------------------------------------------------
const TEAMS = { routeCollection: '/api/v1/security/teams', routeItem: '/api/v1/security/teams/{name}', stripFields: ['_id', 'scim'] } as const;

t.test('create_team — horizon-mcp src/tools/config/teams.ts:L34-L44,L46-L63,L71-L75,L84-L113,L139-L146', async (t) => {
  // buildTeamBody's key order: name, description, contact, webhook, managers, displayName.
  const body = {
    name: 'mcp_full',
    description: [{ lang: 'en', value: 'Every field' }],
    contact: 'full@example.com',
    webhook: { type: 'slack', url: 'https://hooks.slack.com/services/T1/B1/y' },
    managers: ['mcp-alice'],
    displayName: [{ lang: 'en', value: 'Full' }],
  };
  const res = await mcp.post(TEAMS.routeCollection, body);
  expectOk(t, res, 'POST /api/v1/security/teams with every field');
  t.match(res.body, { name: 'mcp_full', contact: 'full@example.com', webhook: body.webhook, managers: ['mcp-alice'], displayName: body.displayName, description: body.description });
  const got = await mcp.get(itemPath(TEAMS.routeItem, 'mcp_full'));
  t.match(got.body, { webhook: body.webhook, managers: ['mcp-alice'] }, 'get_team shows what was created');
  expectProblem(t, await mcp.post(TEAMS.routeCollection, { name: 'mcp_bad', webhook: { type: 'slack', url: 'not a url' } }), 'a webhook URL that is not a URL', { status: 400, suffix: '002' });
});

t.test('update_team — horizon-mcp src/tools/config/teams.ts:L34-L44,L115-L128,L148-L155 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  const teamsHook = { type: 'teams', url: 'https://example.webhook.office.com/webhookb2/def' };
  const { current, res } = await getStripMergePut(t, mcp, TEAMS, 'mcp_full', { webhook: teamsHook });
  t.ok('managers' in current && 'webhook' in current, 'the GET before the PUT carries managers and webhook (echoed back)');
  expectOk(t, res, 'PUT with a webhook override', [200]);
  t.match(res.body, { name: 'mcp_full', webhook: teamsHook, managers: ['mcp-alice'], contact: 'full@example.com' });
  const managers = await getStripMergePut(t, mcp, TEAMS, 'mcp_full', { managers: [] });
  expectOk(t, managers.res, 'PUT with managers: []', [200]);
  t.same((managers.res.body as McpJson).managers, [], 'passing managers replaces them');
  // clear_fields: ["webhook", "contact"] → both sent as null.
  const cleared = await getStripMergePut(t, mcp, TEAMS, 'mcp_full', { webhook: null, contact: null });
  expectOk(t, cleared.res, 'PUT with webhook and contact cleared', [200]);
  t.match(cleared.res.body, { webhook: null, contact: null });
});
