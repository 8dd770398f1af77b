/**
 * Contract tests: the principal information search of the vendor's OpenAPI-generated Go SDK, evertrust/horizon-go
 * v2 (SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch) with every criterion of its PrincipalInfoSearchQuery,
 * and `contact` in the answers as a read-modify-write caller echoes it back. Conventions and transport as in
 * go-v2-config.test.ts and teams-principal-infos.test.ts (which replays Add/Get/Update and a paging-only search):
 * operation lines cite docs/<Api>.md, model lines docs/<Model>.md (a property not marked "Pointer to" is required
 * and checked by the model's UnmarshalJSON; unknown keys land in AdditionalProperties, which ToMap writes back).
 * Commits: docs/SecurityPrincipalinfoAPI.md, docs/PrincipalInfo.md, docs/PrincipalInfoResponse.md,
 * docs/PrincipalInfoSearchResultsResponse.md, docs/BasicError.md @46c9c95; docs/PrincipalInfoSearchQuery.md
 * @1071ea1 (API 2.8+, with strictSearch) and @9bb7c7b (API 2.7, without); docs/SortElement.md @9bb7c7b;
 * models/model_principal_info_search_query.go @1071ea1 (NewPrincipalInfoSearchQuery sets strictSearch to false,
 * so every 2.8+ query carries it; ToMap writes a key only when set); models/model_principal_info.go @18774e9
 * (UnmarshalJSON keeps unknown keys in AdditionalProperties, ToMap writes them back).
 *
 * The request bodies below are json.Marshal of the model's ToMap: keys in sorted order, unset keys left out.
 * Semantics (Horizon documents only "If enabled, `role`, `identifier` and `team` fields will list exact matches
 * only"): strictSearch false (the default) = a case-insensitive substring; true = the exact, case-sensitive
 * value; contact is always a case-insensitive substring of the email; criteria combine with AND; sortedBy takes
 * identifier and role (Horizon's, per horizon-mcp src/tools/config/principal-infos.ts SORTABLE) and name, email,
 * contact, team, enabled, creationDate, order Asc|Desc; identifier breaks ties.
 */
import t, { type Test } from 'tap';
import { bootKernel, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { GO_V2_JSON_CHECK, goDecodeErrors, goPathEscape, type GoShape } from './go-shapes.js';

const kernel = await bootKernel(t);

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
/** An error: status >= 300, the body decoded as BasicError when its Content-Type matches JsonCheck. */
function v2Error(t: Test, res: Res, status: number): Json {
  t.equal(res.statusCode, status, `status ${res.statusCode}: ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  const body = JSON.parse(res.body) as Json;
  t.same(goDecodeErrors(body, basicError), [], 'the error decodes as BasicError');
  return body;
}

// ---- model shapes -------------------------------------------------------------------------------------
const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
/** docs/BasicError.md @46c9c95 L7-L11. */
const basicError: GoShape = { object: { detail: str, error: str, message: str, status: int, title: str }, required: ['error', 'message', 'status', 'title'] };
/** docs/Permission.md @18774e9 L7-L8. */
const permission: GoShape = { object: { filter: str, value: str }, required: ['value'] };
/** docs/PrincipalInfoResponse.md @46c9c95 L7-L19 (contact L8: NullableString). */
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
/** docs/PrincipalInfo.md @46c9c95 L7-L15 (the search results' model; contact L7). */
const principalInfo: GoShape = {
  object: { contact: str, customDashboards: 'any', enabled: bool, identifier: str, permissions: { array: permission }, preferences: 'any', roles: { array: str }, savedQueries: 'any', teams: { array: str } },
  required: ['enabled', 'identifier'],
};
/** docs/PrincipalInfoSearchResultsResponse.md @46c9c95 L7-L11. */
const searchResults: GoShape = { object: { count: int, hasMore: bool, pageIndex: int, pageSize: int, results: { array: principalInfo } }, required: ['hasMore', 'pageIndex', 'pageSize', 'results'] };

const SEARCH = '/api/v1/security/principalinfos/search';

/** SecurityPrincipalInfoSearch with `query` (already in ToMap's key order): the decoded answer, checked. */
async function search(t: Test, query: Json): Promise<Json> {
  t.same(Object.keys(query), Object.keys(query).sort(), 'the body is written with json.Marshal of a map: keys sorted');
  const body = v2Ok(t, await v2('POST', SEARCH, query));
  t.same(goDecodeErrors(body, searchResults), [], 'decodes as PrincipalInfoSearchResultsResponse');
  return body;
}
const idsOf = (body: Json): string[] => (body.results as Json[]).map((r) => r.identifier as string);

// ---- set-up (through the routes; the Add bodies as NewPrincipalInfo + setters write them) -------------------

for (const name of ['v2s-auditors', 'v2s-auditors-eu', 'v2s-operators']) {
  const res = await v2('POST', '/api/v1/security/roles', { name, permissions: [] });
  if (res.statusCode >= 300) throw new Error(`set-up: role ${name}: ${res.body}`);
}
for (const name of ['v2s-pki', 'v2s-pki-eu']) {
  const res = await v2('POST', '/api/v1/security/teams', { name });
  if (res.statusCode >= 300) throw new Error(`set-up: team ${name}: ${res.body}`);
}
for (const body of [
  { contact: 'Alice@Corp.example', enabled: true, identifier: 'v2s-alice', roles: ['v2s-auditors'], teams: ['v2s-pki'] },
  { enabled: true, identifier: 'v2s-alice.ops', roles: ['v2s-auditors-eu'], teams: ['v2s-pki-eu'] },
  { contact: 'bob@other.example', enabled: false, identifier: 'v2s-bob', roles: [], teams: [] },
  { contact: 'carol@corp.example', enabled: true, identifier: 'v2s-carol', roles: ['v2s-operators', 'v2s-auditors'], teams: ['v2s-pki'] },
]) {
  const res = await v2('POST', '/api/v1/security/principalinfos', body);
  if (res.statusCode >= 300) throw new Error(`set-up: principal ${body.identifier}: ${res.body}`);
}

// ---- SecurityPrincipalInfoSearch ----------------------------------------------------------------------------

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, NewPrincipalInfoSearchQuery() alone — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (PrincipalInfoSearchQuery docs/PrincipalInfoSearchQuery.md:L13 strictSearch, default false → PrincipalInfoSearchResultsResponse docs/PrincipalInfoSearchResultsResponse.md:L7-L11)', async (t) => {
  // The 2.8+ constructor sets strictSearch (a NullableBool) to false: ToMap writes it, nothing else.
  const body = await search(t, { strictSearch: false });
  t.same(idsOf(body), ['administrator', 'v2s-alice', 'v2s-alice.ops', 'v2s-bob', 'v2s-carol'], 'everyone, by identifier');
  t.match(body, { pageIndex: 1, pageSize: 50, hasMore: false });
  t.notOk('count' in body, 'no count unless withCount');
  const alice = (body.results as Json[]).find((r) => r.identifier === 'v2s-alice');
  t.match(alice, { contact: 'Alice@Corp.example', enabled: true, roles: ['v2s-auditors'], teams: ['v2s-pki'] }, 'each result carries contact (PrincipalInfo.contact)');
  t.match((body.results as Json[]).find((r) => r.identifier === 'v2s-alice.ops'), { contact: null }, 'no email: contact null (NullableString)');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetIdentifier — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L8 identifier, L13 strictSearch)', async (t) => {
  t.same(idsOf(await search(t, { identifier: 'V2S-ALICE', strictSearch: false })), ['v2s-alice', 'v2s-alice.ops'], 'strictSearch false: a case-insensitive substring');
  t.same(idsOf(await search(t, { identifier: 'v2s-alice', strictSearch: true })), ['v2s-alice'], 'SetStrictSearch(true): exactly this identifier');
  t.same(idsOf(await search(t, { identifier: 'V2S-ALICE', strictSearch: true })), [], 'an exact identifier is case-sensitive');
  t.same(idsOf(await search(t, { identifier: 'nobody', strictSearch: false })), [], 'no match: an empty page');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetContact — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L7 contact, L13 strictSearch)', async (t) => {
  t.same(idsOf(await search(t, { contact: 'corp.EXAMPLE', strictSearch: false })), ['v2s-alice', 'v2s-carol'], 'a case-insensitive substring of the email');
  t.same(idsOf(await search(t, { contact: 'corp', strictSearch: true })), ['v2s-alice', 'v2s-carol'], 'strictSearch covers role, identifier and team only: contact stays a substring');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetRole — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L11 role, L13 strictSearch)', async (t) => {
  t.same(idsOf(await search(t, { role: 'V2S-Auditors', strictSearch: false })), ['v2s-alice', 'v2s-alice.ops', 'v2s-carol'], 'members of a role whose name contains it (case-insensitive)');
  t.same(idsOf(await search(t, { role: 'v2s-auditors', strictSearch: true })), ['v2s-alice', 'v2s-carol'], 'strict: members of the role of exactly this name');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetTeam — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L14 team, L13 strictSearch)', async (t) => {
  t.same(idsOf(await search(t, { strictSearch: false, team: 'v2s-pki' })), ['v2s-alice', 'v2s-alice.ops', 'v2s-carol']);
  t.same(idsOf(await search(t, { strictSearch: true, team: 'v2s-pki' })), ['v2s-alice', 'v2s-carol']);
  // Every criterion together: they combine (AND).
  t.same(idsOf(await search(t, { contact: 'example', identifier: 'v2s-', role: 'operators', strictSearch: false, team: 'pki' })), ['v2s-carol'], 'criteria combine');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetSortedBy — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L12 sortedBy []SortElement, docs/SortElement.md:L7-L8 element and order, both required)', async (t) => {
  // []SortElement{*NewSortElement("identifier", "Desc")}: SortElement.ToMap writes element and order.
  t.same(idsOf(await search(t, { identifier: 'v2s-', sortedBy: [{ element: 'identifier', order: 'Desc' }], strictSearch: false })), ['v2s-carol', 'v2s-bob', 'v2s-alice.ops', 'v2s-alice']);
  t.same(idsOf(await search(t, { identifier: 'v2s-', sortedBy: [{ element: 'identifier', order: 'Asc' }], strictSearch: false })), ['v2s-alice', 'v2s-alice.ops', 'v2s-bob', 'v2s-carol']);
  // role: a principal's first role name ascending (none first), its last descending; ties by identifier.
  t.same(idsOf(await search(t, { identifier: 'v2s-', sortedBy: [{ element: 'role', order: 'Asc' }], strictSearch: false })), ['v2s-bob', 'v2s-alice', 'v2s-carol', 'v2s-alice.ops']);
  t.same(idsOf(await search(t, { identifier: 'v2s-', sortedBy: [{ element: 'role', order: 'Desc' }], strictSearch: false })), ['v2s-carol', 'v2s-alice.ops', 'v2s-alice', 'v2s-bob']);
  t.same(
    idsOf(await search(t, { identifier: 'v2s-', sortedBy: [{ element: 'contact', order: 'Asc' }, { element: 'identifier', order: 'Desc' }], strictSearch: false })),
    ['v2s-alice.ops', 'v2s-alice', 'v2s-bob', 'v2s-carol'],
    'contact (case-insensitive, none first), then the next key',
  );
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, SetPageIndex + SetPageSize + SetWithCount — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md:L9-L10, L15)', async (t) => {
  const first = await search(t, { identifier: 'v2s-', pageIndex: 1, pageSize: 3, strictSearch: false, withCount: true });
  t.same(idsOf(first), ['v2s-alice', 'v2s-alice.ops', 'v2s-bob']);
  t.match(first, { pageIndex: 1, pageSize: 3, hasMore: true, count: 4 });
  const second = await search(t, { identifier: 'v2s-', pageIndex: 2, pageSize: 3, strictSearch: false, withCount: true });
  t.same(idsOf(second), ['v2s-carol']);
  t.match(second, { pageIndex: 2, pageSize: 3, hasMore: false, count: 4 });
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, API 2.7 model (no strictSearch) — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (docs/PrincipalInfoSearchQuery.md @9bb7c7b L7-L14)', async (t) => {
  // The 2.7 constructor sets nothing: SetIdentifier + SetRole write those two keys only; no strictSearch = substrings.
  t.same(idsOf(await search(t, { identifier: 'alice', role: 'auditors' })), ['v2s-alice', 'v2s-alice.ops']);
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoSearch, a sort the server refuses — horizon-go docs/SecurityPrincipalinfoAPI.md:L219-L282 (400 decoded as BasicError docs/BasicError.md:L7-L11)', async (t) => {
  for (const [element, order, message] of [
    ['lastAuthentication', 'Asc', /sortedBy\[0\]\.element "lastAuthentication" is not one of identifier, name, email, contact, role, team, enabled, creationDate/],
    ['role', 'KeyAsc', /sortedBy\[0\]\.order "KeyAsc": role is not a key-value element/],
    ['identifier', 'Ascending', /sortedBy\[0\]\.order "Ascending" is not Asc or Desc/],
  ] as const) {
    const body = v2Error(t, await v2('POST', SEARCH, { sortedBy: [{ element, order }], strictSearch: false }), 400);
    t.equal(body.error, 'SEC-PRINC-002', `${element} ${order}`);
    t.match(body.message, message);
  }
});

// ---- contact in answers, echoed back ------------------------------------------------------------------------

t.test('SecurityPrincipalinfoAPI.ScurityPrincipalInfoGet — horizon-go docs/SecurityPrincipalinfoAPI.md:L15-L82 (PrincipalInfoResponse docs/PrincipalInfoResponse.md:L8 contact)', async (t) => {
  const body = v2Ok(t, await v2('GET', `/api/v1/security/principalinfos/${goPathEscape('v2s-carol')}`));
  t.same(goDecodeErrors(body, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.equal(body.contact, 'carol@corp.example', 'GetContact(): the email');
});

t.test('SecurityPrincipalinfoAPI.SecurityPrincipalInfoUpdate of a search result — horizon-go docs/SecurityPrincipalinfoAPI.md:L285-L348 (a PrincipalInfo from the results, docs/PrincipalInfo.md:L7-L15, PUT back → PrincipalInfoResponse)', async (t) => {
  // A result decoded into PrincipalInfo keeps Certwright's other keys (_id, name, email, creationDate) in
  // AdditionalProperties, and ToMap writes them back beside contact: the PUT carries both contact and email.
  const found = (await search(t, { identifier: 'v2s-carol', strictSearch: true })).results[0] as Json;
  const echoed = Object.fromEntries(Object.entries(found).sort(([a], [b]) => (a < b ? -1 : 1)));
  t.ok('contact' in echoed && 'email' in echoed, 'the echoed body carries contact and email');
  const same = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', echoed));
  t.same(goDecodeErrors(same, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.match(same, { identifier: 'v2s-carol', contact: 'carol@corp.example', roles: ['v2s-auditors', 'v2s-operators'], teams: ['v2s-pki'] }, 'put back as it is: unchanged');
  // SetContact("carol@new.example"): contact changes, the echoed email does not; the change wins.
  const changed = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', { ...echoed, contact: 'carol@new.example' }));
  t.same(goDecodeErrors(changed, principalInfoResponse), [], 'decodes as PrincipalInfoResponse');
  t.match(changed, { contact: 'carol@new.example', email: 'carol@new.example' });
  // SetContactNil(): clears it.
  const cleared = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', { ...echoed, contact: null, email: 'carol@new.example' }));
  t.match(cleared, { contact: null, email: null });
  // NewPrincipalInfo(resp.Enabled, resp.Identifier) + SetContact + SetRoles + SetTeams from a GET: no email key at all.
  const rebuilt = v2Ok(t, await v2('PUT', '/api/v1/security/principalinfos', { contact: 'carol@corp.example', enabled: true, identifier: 'v2s-carol', roles: ['v2s-auditors', 'v2s-operators'], teams: ['v2s-pki'] }));
  t.match(rebuilt, { contact: 'carol@corp.example', email: 'carol@corp.example' });
});
