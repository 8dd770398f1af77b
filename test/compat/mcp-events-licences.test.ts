/**
 * Contract tests for the vendor's MCP server (evertrust/horizon-mcp) on the calls issue 23 reworked: the event
 * object and its search fields (src/tools/lifecycle/events.ts @25d61a5, src/tools/lifecycle/event-csv.ts
 * @4fa50a3), HDQL's timestamp (src/tools/discovery-events.ts), the licence (src/tools/assist/system.ts
 * L46-L85) and a centralized enroll with a bare-string password (src/tools/lifecycle/requests.ts L131-L140,
 * L374). The decoders' multipart uploads (src/tools/assist/crypto.ts) are in test/core/pki/multipart-decoders.
 * Requests are sent as the MCP client (src/client/http.ts) sends them: X-API-ID/X-API-KEY, JSON bodies,
 * 0-based page_index turned into the API's 1-based pageIndex.
 *
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { hostname } from 'node:os';
import t from 'tap';
import { DiscoveryEventStore } from '../../core/discovery/index.js';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP } from '../helpers/kernel.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const mcp = (method: 'GET' | 'POST', url: string, body?: unknown) =>
  kernel.app.inject({
    method,
    url,
    headers: { host: 'localhost', accept: '*/*', ...ADMIN_HEADERS, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

/** buildSearchPayload(query, fields, page_index, page_size, 'timestamp:Desc', with_count), src/tools/helpers.ts. */
const searchPayload = (query: string, pageIndex: number, pageSize: number, withCount: boolean) => ({
  query,
  pageIndex: pageIndex + 1,
  pageSize,
  sortedBy: [{ element: 'timestamp', order: 'Desc' }],
  withCount,
});

// Events with details the CSV reads: a failed login (ip, actorId) and a few others.
await kernel.app.inject({ method: 'GET', url: '/api/v1/security/principals/self', headers: { host: 'localhost', 'x-api-id': 'nobody', 'x-api-key': 'wrong-secret-1!' } });
for (let i = 0; i < 3; i++) {
  await kernel.events.append({ tenant: 'default', code: 'MCP-TEST', module: 'test', status: 'success', principal: 'administrator', payload: { actorId: `actor-${i}`, ip: `192.0.2.${i}`, count: i } });
  // A later millisecond each: the CSV test sorts by timestamp, and events of one millisecond have no order.
  const at = Date.now();
  while (Date.now() === at) await new Promise((resolve) => setTimeout(resolve, 1));
}
const NODE = `${hostname()}:${process.pid}`;

t.test('search_events (timestamp after -24h, sorted timestamp:Desc) — horizon-mcp src/tools/lifecycle/events.ts:L27-L101', async (t) => {
  const res = await mcp('POST', '/api/v1/events/search', searchPayload('timestamp after -24h', 0, 25, true));
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  t.equal(res.headers['content-type'], 'application/json');
  const body = res.json() as Json;
  t.type(body.count, 'number', 'count (with_count)');
  t.type(body.hasMore, 'boolean');
  t.ok(body.results.length >= 4, 'the events of the last day');
  const stamps = body.results.map((r: Json) => r.timestamp);
  t.same(stamps, [...stamps].sort((a: number, b: number) => b - a), 'newest first by timestamp');
  for (const r of body.results) {
    for (const k of ['_id', 'code', 'module', 'node', 'status']) t.type(r[k], 'string', `${k} is text`);
    t.type(r.timestamp, 'number', 'timestamp is epoch ms');
    t.ok('removeAt' in r, 'removeAt is answered');
    t.ok(Array.isArray(r.details), 'details is a list');
    for (const d of r.details) t.same(Object.keys(d).sort(), ['key', 'value'], 'of {key, value}');
  }
  const mine = body.results.find((r: Json) => r.code === 'MCP-TEST');
  t.equal(mine.node, NODE, 'node: the process that recorded it');
  t.same(mine.details.find((d: Json) => d.key === 'count'), { key: 'count', value: mine.details.find((d: Json) => d.key === 'count').value }, 'numbers as text');
  t.match(mine.details, [{ key: 'actorId', value: /^actor-/ }, { key: 'ip', value: /^192\.0\.2\./ }, { key: 'count', value: /^\d$/ }]);

  const older = await mcp('POST', '/api/v1/events/search', searchPayload('timestamp before -24h', 0, 25, true));
  t.equal((older.json() as Json).count, 0, 'nothing older than a day');
  const byDetail = (await mcp('POST', '/api/v1/events/search', searchPayload('detail.actorId equals "actor-1"', 0, 25, true))).json() as Json;
  t.equal(byDetail.count, 1, 'detail.actorId (the translate tool writes it) finds the event');
  for (const element of ['_id', 'code', 'module', 'node', 'timestamp', 'removeAt', 'status']) {
    const sorted = await mcp('POST', '/api/v1/events/search', { ...searchPayload('', 0, 5, false), sortedBy: [{ element, order: 'Asc' }] });
    t.equal(sorted.statusCode, 200, `sortable by ${element}`);
  }
});

t.test('get_event — horizon-mcp src/tools/lifecycle/events.ts:L103-L120', async (t) => {
  const first = ((await mcp('POST', '/api/v1/events/search', searchPayload('code = "MCP-TEST"', 0, 1, false))).json() as Json).results[0];
  const res = await mcp('GET', `/api/v1/events/${encodeURIComponent(first._id)}`);
  t.equal(res.statusCode, 200);
  t.same(res.json(), first, 'the same event object');
});

t.test('export_events_csv (its paged-search CSV) — horizon-mcp src/tools/lifecycle/event-csv.ts:L9-L164', async (t) => {
  // The tool pages /events/search (100 a page, withCount on the first page only) and builds a `;` CSV: base
  // columns _id, code, module, node, timestamp, status, then detail.<key> for every key of `details`.
  const records: Json[] = [];
  for (let page = 0; page < 10; page++) {
    const body = (await mcp('POST', '/api/v1/events/search', searchPayload('code = "MCP-TEST"', page, 100, page === 0))).json() as Json;
    records.push(...body.results);
    if (!body.hasMore) break;
  }
  const detailKeys = [...new Set(records.flatMap((r) => r.details.map((d: Json) => `detail.${d.key}`)))].sort();
  t.same(detailKeys, ['detail.actorId', 'detail.count', 'detail.ip'], 'the detail columns the client discovers');
  const fields = ['_id', 'code', 'module', 'node', 'timestamp', 'status', ...detailKeys];
  for (const r of records) {
    const cells = fields.map((f) => (f.startsWith('detail.') ? r.details.find((d: Json) => `detail.${d.key}` === f)?.value : r[f]));
    t.ok(cells.every((c) => c !== undefined && c !== null && c !== ''), `every column filled: ${cells.join(';')}`);
  }
});

t.test('the server-side event CSV with timestamp, node and detail.* columns (POST /api/v1/events/csv)', async (t) => {
  const res = await mcp('POST', '/api/v1/events/csv', { query: 'code = "MCP-TEST"', fields: ['code', 'node', 'timestamp', 'detail.actorId', 'detail.ip'], sortedBy: [{ element: 'timestamp', order: 'Asc' }] });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'text/csv');
  const [header, ...lines] = res.body.trim().split('\r\n');
  t.equal(header, '_id,code,node,timestamp,detail.actorId,detail.ip');
  t.equal(lines.length, 3);
  lines.forEach((line, i) => t.match(line, new RegExp(`^[0-9a-f]{24},MCP-TEST,${NODE.replace(/[.]/g, '\\.')},\\d{4}-\\d\\d-\\d\\dT[^,]+Z,actor-${i},192\\.0\\.2\\.${i}$`), `line ${i + 1} filled`));
});

// What discovery clients report through the feed (its routes arrive with a later issue): written to the store.
const [discovered] = await new DiscoveryEventStore(kernel.db.knex).append('default', [
  { campaign: 'mcp-lab', code: 'NETSCAN', status: 'success', sessionId: 's-1', hostname: 'web.example.com', ip: '192.0.2.10', port: 443, source: 'scanner' },
  { campaign: 'mcp-lab', code: 'SESSION-END', status: 'warning', sessionId: 's-1', port: null },
]);

t.test('search_discovery_events (HDQL timestamp) — horizon-mcp src/tools/discovery-events.ts:L36-L118', async (t) => {
  const res = await mcp('POST', '/api/v1/discovery/events/search?enableAnalytics=false', { query: 'timestamp after -24h', pageIndex: 1, pageSize: 25, sortedBy: [{ element: 'timestamp', order: 'Desc' }] });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  const body = res.json() as Json;
  t.match(body, { pageIndex: 1, pageSize: 25, hasMore: false });
  t.same(body.results.map((r: Json) => r.code).sort(), ['NETSCAN', 'SESSION-END'], 'the events of the last day');
  for (const r of body.results) t.type(r.timestamp, 'number', 'timestamp is epoch ms');
  const older = (await mcp('POST', '/api/v1/discovery/events/search?enableAnalytics=true', { query: 'timestamp before -24h', pageIndex: 1, pageSize: 25, withCount: true })).json() as Json;
  t.equal(older.count, 0, 'none older');
});

t.test('get_discovery_event — horizon-mcp src/tools/discovery-events.ts:L124-L143', async (t) => {
  const res = await mcp('GET', `/api/v1/discovery/events/${discovered!._id}`);
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  t.match(res.json(), { _id: discovered!._id, campaign: 'mcp-lab', code: 'NETSCAN', status: 'success', hostname: 'web.example.com', port: 443, timestamp: Number });
});

t.test('export_discovery_events_csv — horizon-mcp src/tools/discovery-events.ts:L149-L196', async (t) => {
  const res = await mcp('POST', '/api/v1/discovery/events/csv?enableAnalytics=false', { query: 'campaign = "mcp-lab"', pageIndex: 1, pageSize: 1000, withCount: true, fields: ['code', 'hostname', 'timestamp'], sortedBy: [{ element: 'timestamp', order: 'Asc' }] });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  t.equal(res.headers['content-type'], 'text/csv');
  // The tool counts rows as the lines split on \n, less the header.
  const lines = res.body.trim().split('\n').map((l) => l.replace(/\r$/, ''));
  t.equal(lines[0], '_id,code,hostname,timestamp');
  t.equal(lines.length - 1, 2, 'a row per event');
  t.match(lines.slice(1).join('\n'), /NETSCAN,web\.example\.com,\d{4}-/);
});

t.test('get_license_info — horizon-mcp src/tools/assist/system.ts:L46-L85', async (t) => {
  const res = await mcp('GET', '/api/v1/licenses');
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/json');
  const body = res.json() as Json;
  t.equal(body.isValid, true);
  t.match(body.version, /^\d+\.\d+\.\d+$/, 'a version the client compares by major.minor');
  t.equal(body.version, ((await mcp('GET', '/api/v1/security/principals/self')).json() as Json)._horizonVersion, 'the same version as whoami');
  t.equal(body.expiration, null, 'no expiry');
  t.ok(Array.isArray(body.modules) && body.modules.length > 0);
  for (const m of body.modules) t.match(m, { name: String, isValid: true });
  t.ok(body.modules.some((m: Json) => m.name === 'webra'));
  const anonymous = await kernel.app.inject({ method: 'GET', url: '/api/v1/licenses', headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401, 'credentials needed');
  const wrongHost = await kernel.app.inject({ method: 'GET', url: '/api/v1/licenses', headers: { host: 'evil.example', ...ADMIN_HEADERS } });
  t.equal(wrongHost.statusCode, 404, 'wrong host');
});

t.test('submit_request (centralized enroll, password as a bare string) — horizon-mcp src/tools/lifecycle/requests.ts:L131-L140, L352-L388', async (t) => {
  const base = (await mcp('GET', '/api/v1/certificate/profiles/default')).json() as Json;
  for (const k of ['_id', 'createdAt', 'updatedAt']) delete base[k];
  const created = await mcp('POST', '/api/v1/certificate/profiles/', { ...base, name: 'mcp-manual', keyPolicy: { ...base.keyPolicy, centralized: true, p12passwordMode: 'manual' } });
  t.equal(created.statusCode < 300, true, created.body.slice(0, 300));
  const password = 'Chosen-Passw0rd!';
  const enroll = (profile: string) => ({ module: 'webra', workflow: 'enroll', profile, template: { subject: [{ element: 'cn.1', value: `${profile}.example.com` }], keyType: 'ec-secp256r1' }, password });
  const res = await mcp('POST', '/api/v1/requests/submit', enroll('mcp-manual'));
  t.equal(res.statusCode, 201, res.body.slice(0, 300));
  const body = res.json() as Json;
  t.equal(body.status, 'completed');
  t.type(body.pkcs12?.value, 'string', 'the PKCS#12 comes back');
  const opened = await mcp('POST', '/api/v1/rfc5280/pkcs12', { pkcs12: body.pkcs12.value, password });
  t.equal(opened.statusCode, 200, 'the PKCS#12 opens with the password the requester chose');
  const wrong = await mcp('POST', '/api/v1/rfc5280/pkcs12', { pkcs12: body.pkcs12.value, password: 'not-it' });
  t.equal(wrong.json().error, 'PKI-003', 'and with no other');

  const refused = await mcp('POST', '/api/v1/requests/submit', enroll('default'));
  t.equal(refused.statusCode, 400, 'a profile that generates the password refuses a chosen one');
  t.equal(refused.headers['content-type'], 'application/problem+json');
  t.match(refused.json(), { error: 'WEBRA-ENROLL-010', message: /generates the PKCS#12 password/ });
  const search = (await mcp('POST', '/api/v1/requests/search', { query: 'profile = "default"', withCount: true })).json() as Json;
  t.equal(search.count, 0, 'and records no request');
});
