import t from 'tap';
import { DiscoveryEventStore } from '../../../core/discovery/event-store.js';
import type { DiscoveryEventInput } from '../../../core/discovery/types.js';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

const BASE = '/api/v1/discovery/events';
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const event = (campaign: string, code: string, status: DiscoveryEventInput['status'], extra: Partial<DiscoveryEventInput> = {}): DiscoveryEventInput => ({ campaign, code, status, ...extra });

/** Three batches at three instants in the default tenant, one in another tenant. */
async function seed(kernel: Kernel) {
  let now = T0;
  const store = new DiscoveryEventStore(kernel.db.knex, () => now);
  const first = await store.append(
    'default',
    [event('lan', 'NETSCAN', 'success', { hostname: 'a.example', ip: '10.0.0.1', port: 443, sessionId: 's1' }), event('lan', 'NETSCAN', 'failure', { hostname: 'b.example', port: 8443, errorCode: 'TIMEOUT', errorMessage: '=cmd|x', sessionId: 's1' })],
    { clientVersion: 'hdc/1.2', clientIp: '192.0.2.7', clientId: 'scanner' },
  );
  now += 60_000;
  const second = await store.append('default', [event('files', 'LOCALSCAN', 'success', { source: '/etc/ssl/a.pem' }), event('files', 'SESSION-END', 'warning')], { clientId: 'agent' });
  now += 60_000;
  const third = await store.append('default', event('lan', 'NETSCAN', 'success', { hostname: 'c.example', port: 443 }), { clientId: 'scanner', certificateId: 'ABCDEF0123456789ABCDEF01' });
  const theirs = await store.append('other', event('lan', 'NETSCAN', 'success', { hostname: 'secret.example' }));
  return { mine: [...first, ...second, ...third], theirs };
}

const post = (kernel: Kernel, path: string, body: unknown, headers: Record<string, string> = ADMIN_HEADERS) =>
  kernel.app.inject({ method: 'POST', url: `${BASE}/${path}`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

t.test('discovery events: search, fields, sort, pages, count, tenant isolation', async (t) => {
  const kernel = await bootKernel(t);
  const { mine } = await seed(kernel);

  const all = await post(kernel, 'search', { withCount: true });
  t.equal(all.statusCode, 200);
  t.equal(all.headers['content-type'], 'application/json');
  const page = all.json();
  t.equal(page.count, 5, "only this tenant's events");
  t.equal(page.hasMore, false);
  t.same(
    page.results.map((r: { timestamp: number }) => r.timestamp),
    [T0 + 120_000, T0 + 60_000, T0 + 60_000, T0, T0],
    'newest first by default',
  );
  const newest = page.results[0];
  t.same(newest, { ...mine[4], certificateId: 'abcdef0123456789abcdef01' }, 'a result is the stored event (client-compat §5 keys)');
  t.same(Object.keys(newest).sort(), ['_id', 'campaign', 'certificateId', 'clientId', 'clientIp', 'clientVersion', 'code', 'errorCode', 'errorMessage', 'hostname', 'ip', 'port', 'sessionId', 'source', 'status', 'timestamp']);

  const sessionEnd = (await post(kernel, 'search', { query: 'code = "SESSION-END"' })).json();
  t.same(sessionEnd.results.map((r: { campaign: string }) => r.campaign), ['files'], 'code = "SESSION-END" (client-compat §4 example)');
  const ports = (await post(kernel, 'search', { query: 'port equals 443 and client.id = "scanner"', fields: ['hostname'] })).json();
  t.same(ports.results.map((r: { hostname: string }) => r.hostname), ['c.example', 'a.example'], 'numbers unquoted; client.* fields');
  t.same(Object.keys(ports.results[0]).sort(), ['_id', 'hostname']);
  const recent = (await post(kernel, 'search', { query: `date after "${new Date(T0 + 30_000).toISOString()}"`, withCount: true })).json();
  t.equal(recent.count, 3, 'date compares the timestamp');
  const hidden = (await post(kernel, 'search', { query: 'hostname = "secret.example"', withCount: true })).json();
  t.equal(hidden.count, 0, "another tenant's events are never found");

  const byPort = (await post(kernel, 'search', { query: 'port exists', sortedBy: [{ element: 'port', order: 'Desc' }, { element: 'hostname', order: 'Asc' }], fields: ['port', 'hostname'] })).json();
  t.same(
    byPort.results.map((r: { port: number; hostname: string }) => `${r.port}/${r.hostname}`),
    ['8443/b.example', '443/a.example', '443/c.example'],
    'sortedBy port Desc, hostname Asc',
  );
  const p1 = (await post(kernel, 'search', { pageSize: 2, pageIndex: 1 })).json();
  const p2 = (await post(kernel, 'search', { pageSize: 2, pageIndex: 2 })).json();
  const p3 = (await post(kernel, 'search', { pageSize: 2, pageIndex: 3 })).json();
  t.same([p1.hasMore, p2.hasMore, p3.hasMore], [true, true, false], 'hasMore until the last page');
  t.same([...p1.results, ...p2.results, ...p3.results].map((r: { _id: string }) => r._id), page.results.map((r: { _id: string }) => r._id), 'pages cover every match once');
});

t.test('discovery events: problems, GET :id, dictionary, CSV', async (t) => {
  const kernel = await bootKernel(t);
  const { mine, theirs } = await seed(kernel);

  const bad = await post(kernel, 'search', { query: 'port equals "many"' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.headers['content-type'], 'application/problem+json');
  t.match(bad.json(), { error: /^HQL-00\d$/ });
  t.match((await post(kernel, 'search', { query: 'hostname =' })).json(), { error: 'HQL-001', status: 400 });
  t.match((await post(kernel, 'search', { sortedBy: [{ element: 'errorMessage' }] })).json(), { error: 'HQL-002' }, 'a field that does not sort');
  t.equal((await post(kernel, 'search', { pageSize: 1001 })).statusCode, 400, 'pageSize above 1000');
  t.equal((await post(kernel, 'search', { withCount: 'yes please' })).statusCode, 400, 'withCount of the wrong type');

  const get = (id: string) => kernel.app.inject({ method: 'GET', url: `${BASE}/${id}`, headers: ADMIN_HEADERS });
  const found = await get(mine[1]!._id);
  t.equal(found.statusCode, 200);
  t.same(found.json(), mine[1], 'GET :id answers the stored event');
  const other = await get(theirs[0]!._id);
  t.equal(other.statusCode, 404);
  t.match(other.json(), { error: 'EVT-DSC-003', status: 404 });
  t.equal((await get('xyz')).statusCode, 400, 'malformed id');

  const dictionary = await kernel.app.inject({ method: 'GET', url: `${BASE}/search/dictionary`, headers: ADMIN_HEADERS });
  t.equal(dictionary.statusCode, 200);
  const names = (dictionary.json() as { name: string }[]).map((e) => e.name);
  t.ok(['campaign', 'sessionid', 'port', 'client.version', 'certificate.id', 'date'].every((n) => names.includes(n)), 'the HDQL fields');

  const csv = await post(kernel, 'csv', { query: 'campaign = "lan"', sortedBy: [{ element: 'date', order: 'Asc' }, { element: 'hostname', order: 'Asc' }], fields: ['timestamp', 'hostname', 'port', 'errorMessage'] });
  t.equal(csv.statusCode, 200);
  t.equal(csv.headers['content-type'], 'text/csv');
  t.match(csv.headers['content-disposition'], /discovery-events\.csv/);
  t.same(
    csv.body.split('\r\n'),
    [
      '_id,timestamp,hostname,port,errorMessage',
      `${mine[0]!._id},${new Date(T0).toISOString()},a.example,443,`,
      `${mine[1]!._id},${new Date(T0).toISOString()},b.example,8443,'=cmd|x`,
      `${mine[4]!._id},${new Date(T0 + 120_000).toISOString()},c.example,443,`,
      '',
    ],
    'CSV lines in the requested order; a formula-like cell is defused',
  );
  const header = (await post(kernel, 'csv', {})).body.split('\r\n')[0];
  t.equal(header, '_id,timestamp,campaign,sessionId,code,status,errorCode,errorMessage,hostname,ip,port,source,clientVersion,clientIp,clientId,certificateId', 'every key by default');
});

t.test('discovery events: 401, 403, permission filters, events capability', async (t) => {
  const kernel = await bootKernel(t, { certwright: { endpoints: [{ host: 'localhost', events: true }, { host: 'disco.example', discovery: true, webra: true }, { host: 'feed.example', discovery: true }] as never } });
  const { mine } = await seed(kernel);
  t.equal((await post(kernel, 'search', {}, {})).statusCode, 401);
  const eventsOnly = await createPrincipal(kernel, 'auditor', { permissions: [{ value: 'search:events' }] });
  const refused = await post(kernel, 'search', {}, eventsOnly.headers);
  t.equal(refused.statusCode, 403, 'search:events does not cover discovery events');
  t.equal(refused.json().error, 'SEC-PERM-001');
  const lan = await createPrincipal(kernel, 'lan-viewer', { permissions: [{ value: 'search:discovery-events', filter: 'campaign = "lan"' }] });
  const seen = (await post(kernel, 'search', { withCount: true }, lan.headers)).json();
  t.equal(seen.count, 3, 'a filtered permission sees its campaign only');
  const outside = await kernel.app.inject({ method: 'GET', url: `${BASE}/${mine[2]!._id}`, headers: lan.headers });
  t.equal(outside.statusCode, 404);
  for (const [method, url] of [
    ['POST', `${BASE}/search`],
    ['POST', `${BASE}/csv`],
    ['GET', `${BASE}/${mine[0]!._id}`],
  ] as const) {
    const res = await kernel.app.inject({ method, url, headers: { ...ADMIN_HEADERS, host: 'disco.example', 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{}' } : {}) });
    t.equal(res.statusCode, 404, `${method} ${url}: not on a host without the events capability`);
  }
  // The spec lists the HDQL dictionary under webra as well as events.
  const onWebra = await kernel.app.inject({ method: 'GET', url: `${BASE}/search/dictionary`, headers: { ...ADMIN_HEADERS, host: 'disco.example' } });
  t.equal(onWebra.statusCode, 200, 'the dictionary answers on a webra host');
  const onDiscoveryOnly = await kernel.app.inject({ method: 'GET', url: `${BASE}/search/dictionary`, headers: { ...ADMIN_HEADERS, host: 'feed.example' } });
  t.equal(onDiscoveryOnly.statusCode, 404, 'but not on a discovery-only host');
});
