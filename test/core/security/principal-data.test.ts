import t, { type Test } from 'tap';
import type { InjectOptions } from 'fastify';
import { DICTIONARY_CAP } from '../../../core/security/principal-data/dictionary.js';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, createPrincipal, login } from '../../helpers/security.js';

const P = '/api/v1/security/principals';
const host = { host: 'localhost' };

async function setup(t: Test) {
  const kernel = await bootKernel(t);
  const alice = await createPrincipal(kernel, 'alice', { email: 'alice@example.com' });
  const bob = await createPrincipal(kernel, 'bob');
  const as = (who: { headers: Record<string, string> }) => (o: InjectOptions) => kernel.app.inject({ ...o, headers: { ...host, ...who.headers, ...(o.headers as Record<string, string>) } });
  return { kernel, alice, bob, asAlice: as(alice), asBob: as(bob) };
}

const code = (res: { json(): unknown }): string => (res.json() as { error: string }).error;

t.test('saved queries: each principal sees and changes only its own', async (t) => {
  const { kernel, asAlice, asBob } = await setup(t);
  const query = { name: 'expiring', type: 'certificates', query: 'status is valid and notAfter before 30d', fields: ['dn', 'notAfter'], sortedBy: [{ element: 'notAfter', order: 'Asc' }], columnWidths: { dn: 300 } };

  const created = await asAlice({ method: 'POST', url: `${P}/queries`, payload: query });
  t.equal(created.statusCode, 201, created.body);
  t.same(created.json(), query, 'answered as sent, display keys kept');
  t.same((await asAlice({ url: `${P}/queries` })).json(), [query]);
  t.same((await asAlice({ url: `${P}/queries/expiring` })).json(), query);

  t.same((await asBob({ url: `${P}/queries` })).json(), [], "bob does not see alice's queries");
  const bobGet = await asBob({ url: `${P}/queries/expiring` });
  t.equal(bobGet.statusCode, 404);
  t.equal(code(bobGet), 'SEC-QUERY-003');
  t.equal(code(await asBob({ method: 'DELETE', url: `${P}/queries/expiring` })), 'SEC-QUERY-003', 'nor delete them');
  const bobs = await asBob({ method: 'POST', url: `${P}/queries`, payload: { name: 'expiring', type: 'requests', query: 'status is pending' } });
  t.equal(bobs.statusCode, 201, 'the same name is free for bob');

  const replaced = await asAlice({ method: 'POST', url: `${P}/queries`, payload: { name: 'expiring', type: 'certificates', query: 'notAfter before 7d' } });
  t.equal(replaced.statusCode, 200, 'a second save replaces');
  t.same((await asAlice({ url: `${P}/queries` })).json(), [{ name: 'expiring', type: 'certificates', query: 'notAfter before 7d' }]);
  t.same((await asBob({ url: `${P}/queries/expiring` })).json(), { name: 'expiring', type: 'requests', query: 'status is pending' }, "bob's untouched");

  const slash = await asAlice({ method: 'POST', url: `${P}/queries`, payload: { name: 'a/b c', type: 'events', query: '' } });
  t.equal(slash.statusCode, 201);
  t.equal((await asAlice({ url: `${P}/queries/${encodeURIComponent('a/b c')}` })).statusCode, 200, 'any name is addressable URL-encoded');

  const bad: [string, Record<string, unknown>][] = [
    ['unknown type', { name: 'x', type: 'cats', query: '' }],
    ['missing query', { name: 'x', type: 'events' }],
    ['missing name', { type: 'events', query: '' }],
    ['blank name', { name: ' ', type: 'events', query: '' }],
    ['fields not strings', { name: 'x', type: 'events', query: '', fields: [{}] }],
    ['too large', { name: 'x', type: 'events', query: '', blob: 'x'.repeat(70 * 1024) }],
  ];
  const before = await kernel.db.knex('security_principal_queries').orderBy('id');
  for (const [name, payload] of bad) {
    const res = await asAlice({ method: 'POST', url: `${P}/queries`, payload });
    t.equal(res.statusCode, 400, `${name}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.equal(code(res), 'SEC-QUERY-002', `${name}: SEC-QUERY-002`);
  }
  t.same(await kernel.db.knex('security_principal_queries').orderBy('id'), before, 'nothing was written');

  t.equal((await asAlice({ method: 'DELETE', url: `${P}/queries/expiring` })).statusCode, 204);
  t.equal(code(await asAlice({ url: `${P}/queries/expiring` })), 'SEC-QUERY-003');
  t.equal((await asBob({ url: `${P}/queries/expiring` })).statusCode, 200, "deleting alice's left bob's");
});

t.test('preferences: replaced, shown by /self at once, principal information created when missing', async (t) => {
  const { kernel, asAlice } = await setup(t);
  const prefs = { theme: 'dark', table: { pageSize: 25, columns: ['dn', 'notAfter'] }, lang: 'fr' };
  t.same((await asAlice({ url: `${P}/self` })).json().preferences, {}, 'empty at first (and the principal is now cached)');
  const res = await asAlice({ method: 'POST', url: `${P}/preferences`, payload: prefs });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json(), prefs, 'answers what was stored');
  t.same((await asAlice({ url: `${P}/self` })).json().preferences, prefs, '/self shows them at once');
  t.same((await asAlice({ method: 'POST', url: `${P}/preferences`, payload: { theme: 'light' } })).json(), { theme: 'light' });
  t.same((await asAlice({ url: `${P}/self` })).json().preferences, { theme: 'light' }, 'replaced, not merged');

  // Through a session too (cookie + csrf-token).
  const session = await login(kernel, { ...host, 'x-api-id': 'alice', 'x-api-key': 'Secret-of-alice-1!' });
  const viaSession = await kernel.app.inject({ method: 'POST', url: `${P}/preferences`, headers: { ...host, cookie: session.cookie, 'csrf-token': session.csrf }, payload: { theme: 'session' } });
  t.equal(viaSession.statusCode, 200);
  const noCsrf = await kernel.app.inject({ method: 'POST', url: `${P}/preferences`, headers: { ...host, cookie: session.cookie }, payload: { theme: 'forged' } });
  t.equal(noCsrf.statusCode, 401, 'a session write needs the csrf token');

  const bad: [string, unknown, RegExp][] = [
    ['an array', [1, 2], /^Invalid preferences: body must be object$/],
    ['a string', 'dark', /^Invalid preferences: body must be object$/],
    ['too large', { blob: 'x'.repeat(65 * 1024) }, /^Invalid preferences: \d+ bytes of JSON, more than the 64 KiB allowed$/],
    ['too deep', JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`), /^Invalid preferences: nested deeper than 32 levels$/],
  ];
  for (const [name, payload, message] of bad) {
    const r = await asAlice({ method: 'POST', url: `${P}/preferences`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
    t.equal(r.statusCode, 400, `${name}: 400`);
    t.equal(r.headers['content-type'], 'application/problem+json');
    t.match(r.json(), { error: 'SEC-PREF-002', status: 400, message }, `${name}: SEC-PREF-002 saying why`);
  }
  t.same((await asAlice({ url: `${P}/self` })).json().preferences, { theme: 'session' }, 'refused preferences changed nothing');

  // A principal with no principal information (a local account only): the row is created, granting nothing.
  await kernel.security.identities.insert('default', { identifier: 'carol', name: 'Carol', email: null, enabled: true }, await kernel.security.hasher.hash('Secret-of-carol-1!'));
  const carol = { ...host, 'x-api-id': 'carol', 'x-api-key': 'Secret-of-carol-1!' };
  const saves = await Promise.all([1, 2, 3, 4, 5].map((n) => kernel.app.inject({ method: 'POST', url: `${P}/preferences`, headers: carol, payload: { n } })));
  t.same(saves.map((s) => s.statusCode), [200, 200, 200, 200, 200], 'concurrent first saves all succeed');
  const rows = (await kernel.db.knex('security_principal_infos').where({ identifier: 'carol' })) as { permissions: string; preferences: string; name: string }[];
  t.equal(rows.length, 1, 'one principal information row');
  t.equal(rows[0]!.permissions, '[]', 'granting nothing');
  t.equal(rows[0]!.name, 'Carol');
  const self = (await kernel.app.inject({ url: `${P}/self`, headers: carol })).json();
  t.same(self.preferences, JSON.parse(rows[0]!.preferences), '/self shows the stored ones');
  t.same(self.permissions, []);
});

t.test('dictionary: principal information and local accounts, deduplicated, sorted, filtered', async (t) => {
  const { kernel, asAlice } = await setup(t);
  await kernel.security.identities.insert('default', { identifier: 'zed_local', name: 'Zed', email: 'zed@corp.example', enabled: true }, null);
  await kernel.security.identities.insert('default', { identifier: 'off', name: 'Disabled', email: null, enabled: false }, null);
  await createPrincipal(kernel, '100%_sure');

  const all = await asAlice({ url: `${P}/dictionary` });
  t.equal(all.statusCode, 200);
  t.same(all.json(), [
    { identifier: '100%_sure', name: '100%_sure' },
    { identifier: 'administrator', name: 'Administrator' },
    { identifier: 'alice', name: 'alice', email: 'alice@example.com' },
    { identifier: 'bob', name: 'bob' },
    { identifier: 'zed_local', name: 'Zed', email: 'zed@corp.example' },
  ]);
  const ids = (all.json() as { identifier: string }[]).map((e) => e.identifier);
  t.same(ids, [...ids].sort(), 'in identifier order');
  t.equal(new Set(ids).size, ids.length, 'each principal once');
  t.notOk(ids.includes('off'), 'disabled local accounts are not offered');

  const filter = async (query: string) => ((await asAlice({ url: `${P}/dictionary?query=${encodeURIComponent(query)}` })).json() as { identifier: string }[]).map((e) => e.identifier);
  t.same(await filter('ALI'), ['alice'], 'substring, case-insensitive');
  t.same(await filter('corp.example'), ['zed_local'], 'matches emails');
  t.same(await filter('zed'), ['zed_local'], 'and names');
  t.same(await filter('%'), ['100%_sure'], 'LIKE wildcards are literal');
  t.same(await filter('_'), ['100%_sure', 'zed_local']);
  t.same(await filter('nobody-here'), []);

  // The cap.
  const now = Date.now();
  const many = Array.from({ length: DICTIONARY_CAP + 5 }, (_, i) => ({
    id: `${String(i).padStart(24, '0')}`,
    tenant: 'default',
    identifier: `user-${String(i).padStart(5, '0')}`,
    name: null,
    email: null,
    permissions: '[]',
    preferences: '{}',
    created_at: now,
    updated_at: now,
  }));
  for (let i = 0; i < many.length; i += 200) await kernel.db.knex('security_principal_infos').insert(many.slice(i, i + 200));
  const capped = (await asAlice({ url: `${P}/dictionary` })).json() as { identifier: string }[];
  t.equal(capped.length, DICTIONARY_CAP, `at most ${DICTIONARY_CAP}`);
  t.equal(capped[0]!.identifier, '100%_sure', 'the first ones in order');
  t.equal((await filter('user-01004')).length, 1, 'the rest are reachable by query');
});

t.test('dashboards: own only, create / replace / delete, answered with their name', async (t) => {
  const { kernel, asAlice, asBob } = await setup(t);
  const board = { name: 'ops', layout: [{ widget: 'expiring', x: 0, y: 0, w: 6, h: 4, query: 'notAfter before 30d' }], refresh: 60 };

  const created = await asAlice({ method: 'POST', url: `${P}/dashboards`, payload: board });
  t.equal(created.statusCode, 201, created.body);
  t.same(created.json(), board);
  const dup = await asAlice({ method: 'POST', url: `${P}/dashboards`, payload: board });
  t.equal(dup.statusCode, 400);
  t.equal(code(dup), 'SEC-DASH-004');
  t.same((await asAlice({ url: `${P}/dashboards` })).json(), [board]);
  t.same((await asAlice({ url: `${P}/dashboards/ops` })).json(), board);
  t.same((await asAlice({ url: `${P}/self` })).json().customDashboards, [board], '/self lists them');

  t.same((await asBob({ url: `${P}/dashboards` })).json(), [], "bob does not see alice's");
  t.equal(code(await asBob({ url: `${P}/dashboards/ops` })), 'SEC-DASH-003');
  t.equal(code(await asBob({ method: 'PUT', url: `${P}/dashboards`, payload: { name: 'ops', layout: [] } })), 'SEC-DASH-003', 'nor replace');
  t.equal(code(await asBob({ method: 'DELETE', url: `${P}/dashboards/ops` })), 'SEC-DASH-003', 'nor delete');
  t.same((await asBob({ url: `${P}/self` })).json().customDashboards, []);

  const updated = await asAlice({ method: 'PUT', url: `${P}/dashboards`, payload: { name: 'ops', layout: [] } });
  t.equal(updated.statusCode, 200);
  t.same(updated.json(), { name: 'ops', layout: [] });
  t.same((await asAlice({ url: `${P}/dashboards/ops` })).json(), { name: 'ops', layout: [] }, 'replaced, not merged');

  const bad: [string, InjectOptions, string][] = [
    ['no name', { method: 'POST', url: `${P}/dashboards`, payload: { layout: [] } }, 'SEC-DASH-002'],
    ['name not a string', { method: 'POST', url: `${P}/dashboards`, payload: { name: { first: 'a' } } }, 'SEC-DASH-002'],
    ['too large', { method: 'POST', url: `${P}/dashboards`, payload: { name: 'big', blob: 'x'.repeat(257 * 1024) } }, 'SEC-DASH-002'],
    ['too large on update', { method: 'PUT', url: `${P}/dashboards`, payload: { name: 'ops', blob: 'x'.repeat(257 * 1024) } }, 'SEC-DASH-002'],
    ['update of an unknown one', { method: 'PUT', url: `${P}/dashboards`, payload: { name: 'nope' } }, 'SEC-DASH-003'],
  ];
  const before = await kernel.db.knex('security_dashboards').orderBy('id');
  for (const [name, request, expected] of bad) {
    const res = await asAlice(request);
    t.equal(res.statusCode, expected === 'SEC-DASH-003' ? 404 : 400, `${name}: status`);
    t.equal(code(res), expected, `${name}: ${expected}`);
  }
  t.same(await kernel.db.knex('security_dashboards').orderBy('id'), before, 'nothing was written');

  t.equal((await asAlice({ method: 'DELETE', url: `${P}/dashboards/ops` })).statusCode, 204);
  t.equal((await asAlice({ url: `${P}/dashboards/ops` })).statusCode, 404);
  t.same((await asAlice({ url: `${P}/self` })).json().customDashboards, []);
});

t.test('no credentials: 401 on every route', async (t) => {
  const kernel = await bootKernel(t);
  const routes: InjectOptions[] = [
    { url: `${P}/queries` },
    { url: `${P}/queries/x` },
    { method: 'POST', url: `${P}/queries`, payload: { name: 'x', type: 'events', query: '' } },
    { method: 'DELETE', url: `${P}/queries/x` },
    { method: 'POST', url: `${P}/preferences`, payload: {} },
    { url: `${P}/dictionary` },
    { url: `${P}/dashboards` },
    { url: `${P}/dashboards/x` },
    { method: 'POST', url: `${P}/dashboards`, payload: { name: 'x' } },
    { method: 'PUT', url: `${P}/dashboards`, payload: { name: 'x' } },
    { method: 'DELETE', url: `${P}/dashboards/x` },
  ];
  for (const route of routes) {
    const res = await kernel.app.inject({ ...route, headers: host });
    t.equal(res.statusCode, 401, `${route.method ?? 'GET'} ${route.url}: 401`);
    t.equal(code(res), 'SEC-AUTH-001');
  }
  const wrong = await kernel.app.inject({ url: `${P}/dashboards`, headers: { ...host, 'x-api-id': 'administrator', 'x-api-key': 'wrong-secret-value' } });
  t.equal(wrong.statusCode, 401, 'bad credentials: 401');
  t.equal((await kernel.app.inject({ url: `${P}/dashboards`, headers: { ...host, ...ADMIN_HEADERS } })).statusCode, 200, 'any authenticated principal may');
});
