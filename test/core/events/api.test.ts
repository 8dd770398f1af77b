import { hostname } from 'node:os';
import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import type { NewEventInput } from '../../../core/events/store.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

const BASE = '/api/v1/events';

/** Seven events of this test's module in the default tenant, two in another tenant. */
const SEED: Omit<NewEventInput, 'tenant'>[] = [
  { code: 'TEST-CREATED', module: 'test', status: 'success', principal: 'alice', objectType: 'thing', objectId: 'a', payload: { n: 1 } },
  { code: 'TEST-CREATED', module: 'test', status: 'success', principal: 'bob', objectType: 'thing', objectId: 'b', payload: { n: 2 } },
  { code: 'TEST-DELETED', module: 'test', status: 'success', principal: 'alice', objectType: 'thing', objectId: 'a', payload: { n: 3 } },
  { code: 'TEST-FAILED', module: 'test', status: 'failure', principal: null, objectType: 'thing', objectId: 'c', payload: { n: 4, reason: '=HYPERLINK("x")' } },
  { code: 'TEST-CREATED', module: 'test', status: 'warning', principal: 'carol', objectType: 'thing', objectId: 'd', payload: { n: 5 } },
  { code: 'OTHER-THING', module: 'test-other', status: 'success', principal: 'alice', objectType: 'widget', objectId: 'w', payload: { n: 6 } },
  { code: 'TEST-CREATED', module: 'test', status: 'success', principal: 'dave', objectType: 'thing', objectId: 'e', payload: { n: 7, text: 'a, "quoted"\nline' } },
];

async function seed(kernel: Kernel) {
  const mine = [];
  for (const e of SEED) mine.push(await kernel.events.append({ tenant: 'default', ...e }));
  const theirs = [];
  for (const code of ['TEST-CREATED', 'TEST-SECRET']) theirs.push(await kernel.events.append({ tenant: 'other', code, module: 'test', status: 'success', payload: {} }));
  return { mine, theirs };
}

const search = (kernel: Kernel, body: unknown, headers: Record<string, string> = ADMIN_HEADERS) =>
  kernel.app.inject({ method: 'POST', url: `${BASE}/search`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

t.test('search: queries, default order, fields, sort, pages, count, tenant isolation', async (t) => {
  const kernel = await bootKernel(t);
  const { mine } = await seed(kernel);

  const all = await search(kernel, { query: 'module equals "test"' });
  t.equal(all.statusCode, 200);
  t.equal(all.headers['content-type'], 'application/json');
  const page = all.json();
  t.equal(page.pageIndex, 1, 'pageIndex defaults to 1');
  t.equal(page.pageSize, 50, 'pageSize defaults to 50');
  t.equal(page.hasMore, false);
  t.notOk('count' in page, 'no count unless withCount');
  const expected = mine.filter((e) => e.module === 'test').reverse();
  t.same(page.results.map((r: { _id: string }) => r._id), expected.map((e) => e.id), 'newest first by default (seq descending); other tenant excluded');
  const newest = page.results[0];
  const source = expected[0]!;
  t.same(
    newest,
    {
      _id: source.id,
      seq: source.seq,
      code: 'TEST-CREATED',
      module: 'test',
      status: 'success',
      principal: 'dave',
      objectType: 'thing',
      objectId: 'e',
      node: `${hostname()}:${process.pid}`,
      details: [
        { key: 'n', value: '7' },
        { key: 'text', value: 'a, "quoted"\nline' },
      ],
      timestamp: source.createdAt,
      removeAt: null,
      prevHash: source.prevHash,
      hash: source.hash,
    },
    'a result is the whole event: Horizon names (timestamp, node, removeAt, details as {key, value} text), chain fields beside',
  );

  const failures = (await search(kernel, { query: 'status equals "failure" and module equals "test"' })).json();
  t.same(failures.results.map((r: { objectId: string }) => r.objectId), ['c'], 'status query');
  const byQueryNames = (await search(kernel, { query: 'object.type = "widget" and principal in ["alice", "bob"]' })).json();
  t.same(byQueryNames.results.map((r: { code: string }) => r.code), ['OTHER-THING'], 'object.type and in');
  const noPrincipal = (await search(kernel, { query: 'module = "test" and principal not exists' })).json();
  t.same(noPrincipal.results.map((r: { objectId: string }) => r.objectId), ['c'], 'not exists');
  const theirs = (await search(kernel, { query: 'code = "TEST-SECRET"', withCount: true })).json();
  t.same(theirs, { results: [], pageIndex: 1, pageSize: 50, hasMore: false, count: 0 }, "another tenant's events are never found");

  const projected = (await search(kernel, { query: 'module = "test"', fields: ['code', 'object.id', 'details'] })).json();
  t.same(Object.keys(projected.results[0]).sort(), ['_id', 'code', 'details', 'objectId'], 'fields by property or query name, plus _id');
  const idsOnly = (await search(kernel, { query: 'module = "test"', fields: [] })).json();
  t.same(Object.keys(idsOnly.results[0]), ['_id'], 'fields [] → _id only');

  const sorted = (await search(kernel, { query: 'module = "test"', sortedBy: [{ element: 'code', order: 'Asc' }, { element: 'seq', order: 'Desc' }], fields: ['code', 'objectId'] })).json();
  t.same(
    sorted.results.map((r: { code: string; objectId: string }) => `${r.code}:${r.objectId}`),
    ['TEST-CREATED:e', 'TEST-CREATED:d', 'TEST-CREATED:b', 'TEST-CREATED:a', 'TEST-DELETED:a', 'TEST-FAILED:c'],
    'sortedBy code Asc, then seq Desc',
  );
  const byDate = (await search(kernel, { query: 'module = "test"', sortedBy: [{ element: 'date', order: 'Asc' }, { element: '_id', order: 'Asc' }] })).json();
  t.equal(byDate.results.length, 6, 'sort by date (query name) accepted');

  const first = (await search(kernel, { query: 'module = "test"', pageSize: 4, withCount: true })).json();
  t.equal(first.hasMore, true);
  t.equal(first.count, 6, 'withCount counts every match');
  t.equal(first.results.length, 4);
  const second = (await search(kernel, { query: 'module = "test"', pageSize: 4, pageIndex: 2 })).json();
  t.equal(second.hasMore, false);
  t.equal(second.results.length, 2);
  t.same([...first.results, ...second.results].map((r: { _id: string }) => r._id), expected.map((e) => e.id), 'pages cover the matches once, in order');
  const zero = (await search(kernel, { query: 'module = "test"', pageSize: 4, pageIndex: 0 })).json();
  t.equal(zero.pageIndex, 1, 'pageIndex 0 (clients that omit it) is the first page');
  const nullQuery = (await search(kernel, { query: null, withCount: true })).json();
  t.equal(nullQuery.count, 7, 'query null or empty = every event of the tenant');
  const noBody = await kernel.app.inject({ method: 'POST', url: `${BASE}/search`, headers: ADMIN_HEADERS });
  t.equal(noBody.statusCode, 200, 'no body at all = every event');
});

t.test('search: bad queries and bodies are 400 problems', async (t) => {
  const kernel = await bootKernel(t);
  await seed(kernel);
  const problem = async (body: unknown, error: string | RegExp, what: string) => {
    const res = await search(kernel, body);
    t.equal(res.statusCode, 400, `${what}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
    t.match(res.json(), { error, status: 400, title: String, message: String }, what);
    return res.json();
  };
  const syntax = await problem({ query: 'code equals' }, 'HQL-001', 'syntax error');
  t.ok(syntax.message.length > 0);
  await problem({ query: 'nosuchfield = "x"' }, 'HQL-001', 'unknown field');
  await problem({ query: 'status = "sideways"' }, /^HQL-00\d$/, 'status outside its values');
  await problem({ sortedBy: [{ element: 'details' }] }, 'HQL-002', 'unsortable element');
  await problem({ sortedBy: [{ element: 'nosuch' }] }, 'HQL-002', 'unknown sort element');
  await problem({ fields: ['nosuch'] }, 'HQL-002', 'unknown field in fields');
  await problem({ pageSize: 5000 }, /^HTTP-00\d$/, 'pageSize above 1000');
  await problem({ pageSize: 0 }, /^HTTP-00\d$/, 'pageSize 0');
  await problem({ pageIndex: 'two' }, /^HTTP-00\d$/, 'pageIndex of the wrong type');
  await problem({ query: { code: 'x' } }, /^HTTP-00\d$/, 'query of the wrong type');
  await problem({ sortedBy: [{ element: 'principal' }] }, 'HQL-002', 'a field that does not sort');
  await problem({ sortedBy: [{ element: 'code', order: 'Sideways' }] }, /^HTTP-00\d$/, 'unknown order');
  await problem({ querry: 'code = "x"' }, /^HTTP-00\d$/, 'unknown member');
});

t.test('GET :id and the dictionary', async (t) => {
  const kernel = await bootKernel(t);
  const { mine, theirs } = await seed(kernel);
  const get = (id: string, headers: Record<string, string> = ADMIN_HEADERS) => kernel.app.inject({ method: 'GET', url: `${BASE}/${id}`, headers });

  const found = await get(mine[3]!.id);
  t.equal(found.statusCode, 200);
  t.equal(found.headers['content-type'], 'application/json');
  t.match(found.json(), { _id: mine[3]!.id, seq: mine[3]!.seq, code: 'TEST-FAILED', status: 'failure', principal: null, details: [{ key: 'n', value: '4' }], hash: mine[3]!.hash });
  t.equal((await get(mine[3]!.id.toUpperCase())).statusCode, 200, 'the id in upper case too');

  const other = await get(theirs[0]!.id);
  t.equal(other.statusCode, 404, "another tenant's event does not exist here");
  t.equal(other.headers['content-type'], 'application/problem+json');
  t.match(other.json(), { error: 'EVT-003', status: 404 });
  t.match((await get('0123456789abcdef01234567')).json(), { error: 'EVT-003' }, 'unknown id → EVT-003');
  const malformed = await get('not-an-id');
  t.equal(malformed.statusCode, 400, 'malformed id → 400');
  t.match(malformed.json(), { error: /^HTTP-00\d$/ });

  const dictionary = await kernel.app.inject({ method: 'GET', url: `${BASE}/search/dictionary`, headers: ADMIN_HEADERS });
  t.equal(dictionary.statusCode, 200, 'the dictionary is not taken for an id');
  const entries = dictionary.json() as { kind: string; name: string; property?: string; values?: string[] }[];
  t.match(entries.find((e) => e.name === 'status'), { kind: 'field', property: 'status', values: ['success', 'failure', 'warning'] });
  t.match(entries.find((e) => e.name === 'object.type'), { property: 'objectType' });
});

t.test('CSV: text/csv, header, one line per match, batches, escaping', async (t) => {
  const kernel = await bootKernel(t);
  const { mine } = await seed(kernel);
  const csv = (body: unknown) => kernel.app.inject({ method: 'POST', url: `${BASE}/csv`, headers: { ...ADMIN_HEADERS, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  const res = await csv({ query: 'module = "test"' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'text/csv');
  t.match(res.headers['content-disposition'], /filename="events\.csv"/);
  const lines = res.body.split('\r\n');
  t.equal(lines[0], '_id,seq,code,module,node,status,principal,objectType,objectId,details,timestamp,removeAt,prevHash,hash', 'every property by default');
  t.equal(lines.at(-1), '', 'ends with CRLF');
  const newest = mine[6]!;
  t.equal(
    lines[1],
    `${newest.id},${newest.seq},TEST-CREATED,test,${hostname()}:${process.pid},success,dave,thing,e,"n=7; text=a, ""quoted""\nline",${new Date(newest.createdAt).toISOString()},,${newest.prevHash},${newest.hash}`,
    'newest first; details as key=value pairs, quoted; date ISO 8601; no removeAt',
  );
  t.equal(lines.length, 1 + 6 + 1, 'a line per match');

  const picked = await csv({ query: 'code = "TEST-FAILED"', fields: ['code', 'detail.n', 'detail.reason', 'detail.absent'] });
  t.same(
    picked.body.split('\r\n'),
    ['_id,code,detail.n,detail.reason,detail.absent', `${mine[3]!.id},TEST-FAILED,4,"'=HYPERLINK(""x"")",`, ''],
    'the named fields, _id first; detail.<key> columns hold each member (a formula defused), empty when absent',
  );

  const bad = await csv({ query: 'code ==== "x"' });
  t.equal(bad.statusCode, 400, 'a bad query is a problem, not a broken stream');
  t.equal(bad.headers['content-type'], 'application/problem+json');
  t.equal(bad.json().error, 'HQL-001');

  // More than a keyset batch (1,000 rows), sorted by a non-unique column: every row once, in order.
  await kernel.db.knex.transaction(async (trx) => {
    for (let i = 0; i < 2100; i++) await kernel.events.append({ tenant: 'default', code: `BULK-${i % 3}`, module: 'bulk', status: 'success', payload: { i } }, { trx });
  });
  const bulk = await csv({ query: 'module = "bulk"', fields: ['code', 'seq'], sortedBy: [{ element: 'code', order: 'Desc' }] });
  const rows = bulk.body.trim().split('\r\n').slice(1).map((l) => l.split(','));
  t.equal(rows.length, 2100, 'every row across batches');
  t.equal(new Set(rows.map((r) => r[0])).size, 2100, 'no row twice');
  const keys = rows.map((r) => `${r[1]}`);
  t.same(keys, [...keys].sort().reverse(), 'in the requested order');
});

t.test('access: 401 without credentials, 403 without the permission, filters narrow, 404 off the events capability', async (t) => {
  const kernel = await bootKernel(t, {
    certwright: {
      endpoints: [
        { host: 'localhost', events: true, configuration: true },
        { host: 'webra.example', webra: true },
      ] as never,
    },
  });
  const { mine } = await seed(kernel);
  const anonymous = await kernel.app.inject({ method: 'POST', url: `${BASE}/search`, headers: { 'content-type': 'application/json' }, payload: '{}' });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { error: /^SEC-AUTH-00\d$/ });

  const nobody = await createPrincipal(kernel, 'nobody', { permissions: [{ value: 'search:certificates' }] });
  const refused = await search(kernel, {}, nobody.headers);
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().error, 'SEC-PERM-001');

  const narrow = await createPrincipal(kernel, 'narrow', { permissions: [{ value: 'search:events', filter: 'code = "TEST-DELETED"' }] });
  const seen = (await search(kernel, { withCount: true }, narrow.headers)).json();
  t.same(seen.results.map((r: { _id: string }) => r._id), [mine[2]!.id], 'a filtered search:events sees what its filter admits');
  t.equal(seen.count, 1);
  t.equal((await kernel.app.inject({ method: 'GET', url: `${BASE}/${mine[0]!.id}`, headers: narrow.headers })).statusCode, 404, 'outside the filter, an event is not found');
  t.equal((await kernel.app.inject({ method: 'GET', url: `${BASE}/${mine[2]!.id}`, headers: narrow.headers })).statusCode, 200);
  const narrowCsv = await kernel.app.inject({ method: 'POST', url: `${BASE}/csv`, headers: { ...narrow.headers, 'content-type': 'application/json' }, payload: '{}' });
  t.equal(narrowCsv.body.trim().split('\r\n').length, 2, 'CSV too');

  for (const [method, url] of [
    ['POST', `${BASE}/search`],
    ['POST', `${BASE}/csv`],
    ['GET', `${BASE}/${mine[0]!.id}`],
    ['GET', `${BASE}/search/dictionary`],
  ] as const) {
    const res = await kernel.app.inject({ method, url, headers: { ...ADMIN_HEADERS, host: 'webra.example', 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{}' } : {}) });
    t.equal(res.statusCode, 404, `${method} ${url} is hidden on a host without the events capability`);
    t.equal(res.json().error, 'HTTP-001');
  }
});
