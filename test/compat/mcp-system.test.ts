/**
 * Contract tests for the vendor's MCP server (evertrust/horizon-mcp), SYSTEM side: its HTTP client's own calls
 * and answer handling (src/client/http.ts @0aad868: lazy init, CSRF, headers, status handling;
 * src/client/errors.ts @0e6bddd: error parsing), and the tools of src/tools/assist/system.ts (the version whose
 * whoami/get_license_info output schemas are `.nullish()`), src/tools/assist/query.ts @ed47874,
 * src/tools/profiles.ts @4b6798e and src/tools/dashboards.ts @1ae4e38 that target routes Certwright serves,
 * each sent exactly as the client sends it, with the checks the client and tool make on the answer.
 *
 * Calls of these source files whose routes Certwright does NOT serve yet (their contract tests arrive with
 * the issue that serves them, a later issue):
 * - system.ts explain_grading_policy: GET /api/v1/certificate/grading/policies/{name} and, with a PEM,
 *   POST /api/v1/certificate/grading/policies/{name}/explain (multipart, field `x509`, file certificate.pem,
 *   type application/x-pem-file); the older system.ts @2cb30e4 used GET /api/v1/grading/policies/{name} and
 *   POST …/evaluate with JSON {pem}.
 * - system.ts explain_grading_ruleset: GET /api/v1/certificate/grading/rulesets/{name}, POST …/explain
 *   (multipart, as above); older: GET /api/v1/grading/rulesets/{name}, POST …/evaluate {pem}.
 * - system.ts get_license_info: GET /api/v1/licenses (older: GET /api/v1/license). Not served yet, and
 *   reserved to the lead engineer (licences), who writes its contract test.
 * The query.ts validators for HEQL and HDQL (POST /api/v1/events/search, POST /api/v1/discovery/events/search
 * with {query, pageSize: 1}) target served routes whose event search is being reworked by the lead engineer:
 * he writes their tests.
 *
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { createPrincipal } from '../helpers/security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);

// ------------------------------------------------------------------ the MCP HTTP client, as it sends

/** Headers undici's fetch adds to every request (the MCP client sets no Accept of its own). */
const UNDICI_DEFAULTS = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'undici', 'accept-encoding': 'gzip, deflate' };
const ADMIN_AUTH = { 'X-API-ID': 'administrator', 'X-API-KEY': TEST_ADMIN_SECRET };

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Answer = Awaited<ReturnType<typeof kernel.app.inject>>;

/** One raw request: API-key headers, X-Request-Id, Content-Type only with a body, Csrf-Token only if given. */
function send(method: Method, path: string, options: { body?: unknown; auth?: Record<string, string>; csrf?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { host: 'localhost', ...UNDICI_DEFAULTS, ...(options.auth ?? ADMIN_AUTH), 'X-Request-Id': randomUUID().slice(0, 12) };
  if (options.csrf) headers['Csrf-Token'] = options.csrf;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  return kernel.app.inject({ method, url: path, headers, ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }) });
}

/** The client after its lazy init (http.ts _performInit → fetchCsrfToken): non-GETs carry `Csrf-Token`. */
const init = await send('GET', '/api/v1/security/csrf');
const csrfToken = init.statusCode === 200 ? ((init.json().token ?? init.json().csrfToken) as string | undefined) : undefined;
const mcp = (method: Method, path: string, body?: unknown): Promise<Answer> =>
  send(method, path, { body, ...(method !== 'GET' && csrfToken ? { csrf: csrfToken } : {}) });

/** http.ts: status >= 400 throws (parseErrorResponse); DELETE 204 → null; otherwise JSON.parse(text) ('' → {}). */
function accepted(t: Test, res: Answer, what: string): Json | null {
  t.ok(res.statusCode < 400, `${what}: the client accepts the status (${res.statusCode}): ${res.body.slice(0, 300)}`);
  if (res.statusCode === 204) return null;
  if (res.body) t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON answer`);
  return res.body ? (JSON.parse(res.body) as Json) : {};
}

/** errors.ts parseErrorResponse: code = error (string, or object {code|error}) ?? code; message ?? title; detail. */
function parsedError(res: Answer): { code?: string; message?: string; detail?: string } {
  const raw = JSON.parse(res.body) as Json;
  if (typeof raw.error === 'object' && raw.error !== null) return { code: raw.error.code ?? raw.error.error, message: raw.error.message ?? raw.message ?? raw.title, detail: raw.error.detail ?? raw.detail };
  return { code: raw.error ?? raw.code, message: raw.message ?? raw.title, detail: raw.detail };
}

// ------------------------------------------------------------------ http.ts / errors.ts

t.test('client init: CSRF token — horizon-mcp src/client/http.ts:L346-L393 (fetchCsrfToken)', async (t) => {
  // Step 4: GET /api/v1/security/csrf with the auth headers only; 200 → `token ?? csrfToken`.
  const res = await send('GET', '/api/v1/security/csrf');
  t.equal(res.statusCode, 200, res.body);
  const data = res.json() as Json;
  const token = data.token ?? data.csrfToken;
  t.type(token, 'string', 'a token the client keeps');
  t.ok(String(token).length > 0);
});

t.test('client init: whoami probe — horizon-mcp src/client/http.ts:L430-L495 (_performInit)', async (t) => {
  // GET /api/v1/security/principals/self with the auth headers and, when it has one, `Csrf-Token`.
  const res = await send('GET', '/api/v1/security/principals/self', { csrf: csrfToken });
  t.equal(res.statusCode, 200, 'anything but 200 is "continuing without principal info"');
  const principal = res.json() as Json;
  t.equal(principal.identity?.identifier ?? principal.identifier ?? principal.name, 'administrator', 'principal name: identity.identifier');
  t.type(principal._horizonVersion, 'string', 'the Horizon version the client logs');
  t.match(principal._horizonVersion, /^\d+\.\d+/, 'major.minor parsed for the compatibility log');
});

t.test('mutating calls with and without Csrf-Token — horizon-mcp src/client/http.ts:L525-L551, L710-L730 (_request, _buildHeaders)', async (t) => {
  // With a token from /csrf every POST/PUT/DELETE carries it; without one the header is omitted.
  t.ok(csrfToken, 'the client holds a token');
  for (const csrf of [csrfToken, undefined]) {
    const res = await send('POST', '/api/v1/certificates/search', { body: { query: '', pageIndex: 1, pageSize: 1 }, ...(csrf ? { csrf } : {}) });
    t.equal(res.statusCode, 200, `${csrf ? 'with' : 'without'} Csrf-Token: API-key callers are not refused: ${res.body.slice(0, 200)}`);
  }
});

t.test('error answers — horizon-mcp src/client/errors.ts:L153-L208 (parseErrorResponse), src/client/http.ts:L590-L671, L775-L792', async (t) => {
  // 404: JSON with a string `error` code and a `message`.
  const missing = await mcp('GET', '/api/v1/requests/0123456789abcdef01234567');
  t.equal(missing.statusCode, 404);
  const notFound = parsedError(missing);
  t.match(notFound.code, /^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-\d{3}$/, `a code of the FAMILY-NNN form the remediation map keys on: ${notFound.code}`);
  t.type(notFound.message, 'string');
  t.ok(notFound.message!.length > 0, 'a message');
  // 400 bad query: HQL-001 (the code the client's remediation map knows).
  const bad = await mcp('POST', '/api/v1/certificates/search', { query: 'dn equals', pageSize: 1 });
  t.equal(bad.statusCode, 400);
  t.equal(parsedError(bad).code, 'HQL-001');
  // 401 bad credentials: a JSON error too.
  const unauth = await send('GET', '/api/v1/security/principals/self', { auth: { 'X-API-ID': 'administrator', 'X-API-KEY': 'wrong-secret' } });
  t.equal(unauth.statusCode, 401);
  t.type(parsedError(unauth).code, 'string');
  // 403 for lack of permission must not mention CSRF: the client would take it for a CSRF rejection,
  // refetch a token and retry (_isCsrfRejection), instead of reporting the permission error.
  const nobody = await createPrincipal(kernel, 'mcp-nobody');
  const auth = { 'X-API-ID': nobody.identifier, 'X-API-KEY': nobody.secret };
  const forbidden = await send('POST', '/api/v1/certificate/profiles/', { auth, body: { name: 'x' }, csrf: csrfToken });
  t.equal(forbidden.statusCode, 403, forbidden.body);
  const body = forbidden.json() as Json;
  t.notMatch(`${String(body.error)} ${String(body.message)}`.toLowerCase(), /csrf/, 'a permission 403 is not a CSRF rejection');
  t.type(parsedError(forbidden).code, 'string');
});

// ------------------------------------------------------------------ assist/system.ts

t.test('whoami — horizon-mcp src/tools/assist/system.ts:L12-L44', async (t) => {
  const result = accepted(t, await mcp('GET', '/api/v1/security/principals/self'), 'whoami')!;
  // The raw answer is the tool's structuredContent, validated by the MCP SDK against the output schema:
  // identifier, name, team: string|null|absent; teams: string[]|null|absent; roles: array|null|absent.
  for (const key of ['identifier', 'name', 'team']) t.ok(result[key] === undefined || result[key] === null || typeof result[key] === 'string', `${key}: nullish string`);
  t.ok(result.teams === undefined || result.teams === null || (Array.isArray(result.teams) && result.teams.every((x: unknown) => typeof x === 'string')), `teams: array of strings or nullish (${JSON.stringify(result.teams)})`);
  t.ok(result.roles === undefined || result.roles === null || Array.isArray(result.roles), 'roles: array or nullish');
  // What the tool description tells the model to read for ownership queries.
  t.equal(result.identity?.identifier, 'administrator');
  t.ok(Array.isArray(result.permissions), 'permissions');
});

t.test('whoami of a team member: teams as names, the team objects in teamInfos — horizon-mcp src/tools/assist/system.ts:L17-L32', async (t) => {
  await mcp('POST', '/api/v1/security/teams', { name: 'mcp-whoami-team' });
  const member = await createPrincipal(kernel, 'mcp-whoami-member', { teams: [{ name: 'mcp-whoami-team', manager: true }] });
  const res = await send('GET', '/api/v1/security/principals/self', { auth: { 'X-API-ID': member.identifier, 'X-API-KEY': member.secret } });
  const result = accepted(t, res, 'whoami')!;
  t.same(result.teams, ['mcp-whoami-team'], 'teams: z.array(z.string())');
  t.ok(Array.isArray(result.teamInfos) && result.teamInfos[0]?.name === 'mcp-whoami-team' && result.teamInfos[0]?.manager === true, 'teamInfos: the team objects');
  t.match(String(res.headers.vary), /Accept/, 'the shape follows Accept: Vary says so');
});

// ------------------------------------------------------------------ assist/query.ts

/** query.ts validateQuery: POST {query, pageSize: 1}; valid ⇔ no throw; reports count ?? null, hasMore ?? null. */
async function validate(t: Test, path: string, good: string, bad: string): Promise<void> {
  const ok = accepted(t, await mcp('POST', path, { query: good, pageSize: 1 }), `valid ${good}`)!;
  t.ok(ok.count === undefined || typeof ok.count === 'number', 'count: number when present');
  t.type(ok.hasMore, 'boolean', 'has_more');
  t.ok(Array.isArray(ok.results) && ok.results.length <= 1, 'pageSize 1 is honoured');
  const res = await mcp('POST', path, { query: bad, pageSize: 1 });
  t.equal(res.statusCode, 400, 'an invalid query is an error the tool reports as valid: false');
  const err = parsedError(res);
  t.equal(err.code, 'HQL-001', 'the query-syntax code');
  t.type(err.message, 'string');
}

t.test('validate_hql (hcql) — horizon-mcp src/tools/assist/query.ts:L256-L337', async (t) => {
  await validate(t, '/api/v1/certificates/search', 'status is valid and valid.until before 30d', 'status is sleepy');
});

t.test('validate_hql (hrql) — horizon-mcp src/tools/assist/query.ts:L256-L337', async (t) => {
  await validate(t, '/api/v1/requests/search', 'workflow equals "enroll" and status equals "pending"', 'workflow equals');
});

// ------------------------------------------------------------------ profiles.ts

t.test('list_profiles — horizon-mcp src/tools/profiles.ts:L24-L69', async (t) => {
  // PROFILE_BASE without a trailing slash.
  const data = accepted(t, await mcp('GET', '/api/v1/certificate/profiles'), 'list')!;
  const items: Json[] = Array.isArray(data) ? (data as Json[]) : ((data.items as Json[] | undefined) ?? [data]);
  t.ok(Array.isArray(data), 'a bare array');
  const names = items.filter((i) => typeof i.name === 'string').map((i) => i.name as string);
  t.ok(names.includes('default'), 'name_contains filters on name');
  const webra = items.filter((i) => typeof i.module === 'string' && i.module.toLowerCase() === 'webra');
  t.ok(webra.some((i) => i.name === 'default'), 'module filters on module');
});

t.test('get_profile — horizon-mcp src/tools/profiles.ts:L71-L88', async (t) => {
  const body = accepted(t, await mcp('GET', '/api/v1/certificate/profiles/default'), 'get')!;
  t.equal(body.name, 'default');
  t.equal(body.module, 'webra');
});

// ------------------------------------------------------------------ dashboards.ts

const DASHBOARD_BASE = '/api/v1/security/principals/dashboards';
const QUERY_BASE = '/api/v1/security/principals/queries';
const BOARD = 'MCP Board';

/** dashboards.ts fetchDashboardByName: GET self, customDashboards, find by name. */
async function dashboardByName(t: Test, name: string): Promise<Json | undefined> {
  const principal = accepted(t, await mcp('GET', '/api/v1/security/principals/self'), 'self')!;
  const dashboards = (principal.customDashboards ?? []) as Json[];
  t.ok(Array.isArray(dashboards), 'customDashboards is an array');
  return dashboards.find((d) => d.name === name);
}

t.test('create_dashboard — horizon-mcp src/tools/dashboards.ts:L183-L253', async (t) => {
  const payload = { name: BOARD, type: 'certificate', charts: [], description: 'made by the MCP contract' };
  const body = accepted(t, await mcp('POST', DASHBOARD_BASE, payload), 'create')!;
  t.equal(body.name, BOARD, 'the created dashboard is answered');
  t.equal(body.type, 'certificate');
});

t.test('list_dashboards — horizon-mcp src/tools/dashboards.ts:L115-L162', async (t) => {
  const principal = accepted(t, await mcp('GET', '/api/v1/security/principals/self'), 'self')!;
  const data = (principal.customDashboards ?? []) as Json[];
  const certificateBoards = data.filter((d) => d.type === 'certificate');
  t.ok(certificateBoards.some((d) => d.name === BOARD && d.description === 'made by the MCP contract'), 'listed with its type and description');
});

t.test('get_dashboard — horizon-mcp src/tools/dashboards.ts:L164-L181 (+ fetchDashboardByName L62-L93)', async (t) => {
  const board = await dashboardByName(t, BOARD);
  t.ok(board, 'found by name');
  t.same(board?.charts, [], 'with its charts');
});

t.test('add_dashboard_chart — horizon-mcp src/tools/dashboards.ts:L344-L398', async (t) => {
  const chart = { type: 'donut', title: 'Key types', localQuery: 'status is valid', fields: ['keyType'], sortOrder: 'Desc', colors: ['#A6ADF7', '#4D54A2'], i: 'chart-mcp1', x: 0, y: 0, w: 6, h: 4 };
  const existing = await dashboardByName(t, BOARD);
  const merged = { ...existing, charts: [...((existing?.charts ?? []) as Json[]), chart] };
  const body = accepted(t, await mcp('PUT', DASHBOARD_BASE, merged), 'add chart')!;
  t.same(body.charts, [chart], 'the dashboard with its new chart');
  t.same((await dashboardByName(t, BOARD))?.charts, [chart], 'kept');
});

t.test('update_dashboard_chart — horizon-mcp src/tools/dashboards.ts:L400-L583', async (t) => {
  const existing = (await dashboardByName(t, BOARD))!;
  const charts = [...(existing.charts as Json[])];
  const idx = charts.findIndex((c) => c.i === 'chart-mcp1');
  t.ok(idx >= 0, 'the chart is found by its i');
  charts[idx] = { ...charts[idx], title: 'Key types (valid)', log: true, limit: 10, having: { operator: 'gte', value: 1 }, description: null };
  const body = accepted(t, await mcp('PUT', DASHBOARD_BASE, { ...existing, charts }), 'update chart')!;
  t.equal(body.charts?.[0]?.title, 'Key types (valid)');
  t.equal(body.charts?.[0]?.log, true);
});

t.test('remove_dashboard_chart — horizon-mcp src/tools/dashboards.ts:L585-L641', async (t) => {
  const existing = (await dashboardByName(t, BOARD))!;
  const charts = (existing.charts as Json[]).filter((c) => c.i !== 'chart-mcp1');
  const body = accepted(t, await mcp('PUT', DASHBOARD_BASE, { ...existing, charts }), 'remove chart')!;
  t.same(body.charts, [], 'the chart is gone');
});

t.test('update_dashboard — horizon-mcp src/tools/dashboards.ts:L255-L310', async (t) => {
  const existing = (await dashboardByName(t, BOARD))!;
  const merged: Json = { ...existing, description: 'renamed by the MCP contract' };
  const body = accepted(t, await mcp('PUT', DASHBOARD_BASE, merged), 'update')!;
  t.equal(body.description, 'renamed by the MCP contract');
  // clear_fields: top-level fields set to null.
  const cleared = accepted(t, await mcp('PUT', DASHBOARD_BASE, { ...merged, description: null }), 'clear description')!;
  t.equal(cleared.description, null);
  t.equal((await dashboardByName(t, BOARD))?.type, 'certificate', 'the rest is kept');
});

t.test('delete_dashboard — horizon-mcp src/tools/dashboards.ts:L312-L338', async (t) => {
  const res = await mcp('DELETE', `${DASHBOARD_BASE}/${encodeURIComponent(BOARD)}`);
  accepted(t, res, 'delete');
  t.equal(await dashboardByName(t, BOARD), undefined, 'gone from the self view');
});

t.test('upsert_saved_query — horizon-mcp src/tools/dashboards.ts:L716-L769', async (t) => {
  // type is the query language, lower case (hcql, hrql, heql, hdql, hpql).
  const created = accepted(t, await mcp('POST', QUERY_BASE, { name: 'mcp-valid', type: 'hcql', query: 'status is valid', description: 'valid certificates' }), 'create')!;
  t.equal(created.name, 'mcp-valid');
  t.equal(created.type, 'hcql');
  const other = accepted(t, await mcp('POST', QUERY_BASE, { name: 'mcp-pending', type: 'hrql', query: 'status equals "pending"' }), 'create hrql');
  t.equal(other?.type, 'hrql');
  const updated = accepted(t, await mcp('POST', QUERY_BASE, { name: 'mcp-valid', type: 'hcql', query: 'status is valid and module equals "webra"' }), 'upsert')!;
  t.equal(updated.query, 'status is valid and module equals "webra"', 'the same name is replaced');
});

t.test('list_saved_queries — horizon-mcp src/tools/dashboards.ts:L647-L693', async (t) => {
  const res = await mcp('GET', `${QUERY_BASE}?${new URLSearchParams({ type: 'hcql' }).toString()}`);
  const data = accepted(t, res, 'list');
  const items: Json[] = data === null ? [] : Array.isArray(data) ? (data as Json[]) : [data];
  t.ok(items.some((q) => q.name === 'mcp-valid'), 'the HCQL query is listed');
  t.ok(items.every((q) => q.type === 'hcql'), 'only the type asked for');
});

t.test('get_saved_query — horizon-mcp src/tools/dashboards.ts:L695-L714', async (t) => {
  const body = accepted(t, await mcp('GET', `${QUERY_BASE}/${encodeURIComponent('mcp-valid')}`), 'get')!;
  t.equal(body.name, 'mcp-valid');
  t.equal(body.type, 'hcql');
  t.equal(body.query, 'status is valid and module equals "webra"', 'the query as last saved');
});

t.test('delete_saved_query — horizon-mcp src/tools/dashboards.ts:L771-L797', async (t) => {
  accepted(t, await mcp('DELETE', `${QUERY_BASE}/${encodeURIComponent('mcp-valid')}`), 'delete');
  t.equal((await mcp('GET', `${QUERY_BASE}/mcp-valid`)).statusCode, 404, 'gone');
});
