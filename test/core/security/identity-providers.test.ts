import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { InjectOptions } from 'fastify';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, createPrincipal, login } from '../../helpers/security.js';

const FIXTURE = resolve(dirname(fileURLToPath(import.meta.url)), '../../fixtures/identity-test-header');
const BASE = '/api/v1/security/identity/providers/';
const SELF = '/api/v1/security/principals/self';
const host = { host: 'localhost' };
const admin = { ...host, ...ADMIN_HEADERS };
/** The test-header principal holding every permission (can act while `local` is disabled). */
const headerAdmin = { ...host, 'x-test-user': 'hdr-admin', 'x-test-secret': 'open-sesame' };
const headerUser = { ...host, 'x-test-user': 'hdr-user', 'x-test-secret': 'open-sesame' };

const headerProvider = (over: Record<string, unknown> = {}) => ({
  name: 'header',
  type: 'test-header',
  config: { users: ['hdr-admin', 'hdr-user'], sharedSecret: 'open-sesame' },
  ...over,
});

async function setup(t: Test) {
  const kernel = await bootKernel(t, { plugins: { paths: [FIXTURE] } });
  t.equal(kernel.plugins.records.find((r) => r.id === 'identity-test-header')?.state, 'active', 'the fixture plugin loaded');
  // Permissions live in principal information, keyed by identifier, whatever the provider.
  await createPrincipal(kernel, 'hdr-admin', { permissions: [{ value: '*' }] });
  return { kernel, call: (o: InjectOptions) => kernel.app.inject(o) };
}

t.test('the standard set, masking, and errors', async (t) => {
  const { kernel, call } = await setup(t);

  const first = await call({ url: BASE, headers: admin });
  t.equal(first.statusCode, 200);
  t.match(first.json(), [{ name: 'local', type: 'local', enabled: true, config: {} }], 'the first start created `local`');
  t.equal((first.json() as unknown[]).length, 1);

  const created = await call({ method: 'POST', url: BASE, headers: admin, payload: headerProvider() });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'header', type: 'test-header', enabled: true, config: { users: ['hdr-admin', 'hdr-user'], sharedSecret: '********', header: 'x-test-user' } });
  t.notMatch(created.body, /open-sesame/, 'the secret never leaves');
  t.match((await call({ url: `${BASE}header`, headers: admin })).json(), { name: 'header', config: { sharedSecret: '********' } });
  t.notMatch((await call({ url: BASE, headers: admin })).body, /open-sesame/);
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 200, 'the provider got the real secret');
  t.equal((await call({ url: SELF, headers: { ...headerUser, 'x-test-secret': '********' } })).statusCode, 401, 'not the mask');

  // The mask sent back keeps the stored secret; a new value replaces it.
  const kept = await call({ method: 'PUT', url: BASE, headers: admin, payload: { ...(created.json() as Record<string, unknown>), config: { users: ['hdr-admin', 'hdr-user', 'hdr-other'], sharedSecret: '********' } } });
  t.equal(kept.statusCode, 200, kept.body);
  t.match(kept.json(), { config: { users: ['hdr-admin', 'hdr-user', 'hdr-other'], sharedSecret: '********' } });
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 200, 'the masked value kept the stored secret');
  t.equal((await call({ url: SELF, headers: { ...host, 'x-test-user': 'hdr-other', 'x-test-secret': 'open-sesame' } })).statusCode, 200, 'and the rest changed');
  const rotated = await call({ method: 'PUT', url: BASE, headers: admin, payload: headerProvider({ config: { users: ['hdr-admin', 'hdr-user'], sharedSecret: 'new-secret' } }) });
  t.equal(rotated.json().config.sharedSecret, '********');
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 401, 'a new value replaces the secret: the old one is refused');
  t.equal((await call({ url: SELF, headers: { ...headerUser, 'x-test-secret': 'new-secret' } })).statusCode, 200, 'the new one accepted');
  for (const row of (await kernel.db.knex('security_identity_providers').pluck('config')) as string[]) t.notMatch(row, /\*\*\*\*/, 'the mask is never stored');

  const problems: [string, InjectOptions, number, string][] = [
    ['unknown type', { method: 'POST', url: BASE, payload: { name: 'x', type: 'teleport' } }, 400, 'SEC-IDP-002'],
    ['config refused by the type', { method: 'POST', url: BASE, payload: { name: 'x', type: 'test-header', config: { users: 'all' } } }, 400, 'SEC-IDP-002'],
    ['config missing a required field', { method: 'POST', url: BASE, payload: { name: 'x', type: 'test-header' } }, 400, 'SEC-IDP-002'],
    ['unknown field', { method: 'POST', url: BASE, payload: { name: 'x', type: 'local', enable: false } }, 400, 'SEC-IDP-002'],
    ['missing type', { method: 'POST', url: BASE, payload: { name: 'x' } }, 400, 'SEC-IDP-002'],
    ['blank name', { method: 'POST', url: BASE, payload: { name: '  ', type: 'local' } }, 400, 'SEC-IDP-002'],
    ['name with a slash', { method: 'POST', url: BASE, payload: { name: 'a/b', type: 'local' } }, 400, 'SEC-IDP-002'],
    ['config not an object', { method: 'POST', url: BASE, payload: { name: 'x', type: 'local', config: [1] } }, 400, 'SEC-IDP-002'],
    ['duplicate name', { method: 'POST', url: BASE, payload: { name: 'local', type: 'local' } }, 400, 'SEC-IDP-004'],
    ['type change', { method: 'PUT', url: BASE, payload: { name: 'header', type: 'local' } }, 400, 'SEC-IDP-002'],
    ['update of an unknown provider', { method: 'PUT', url: BASE, payload: { name: 'nobody', type: 'local' } }, 404, 'SEC-IDP-003'],
    ['get of an unknown provider', { url: `${BASE}nobody` }, 404, 'SEC-IDP-003'],
    ['delete of an unknown provider', { method: 'DELETE', url: `${BASE}nobody` }, 404, 'SEC-IDP-003'],
    ['bad search page', { method: 'POST', url: `${BASE}search`, payload: { pageIndex: 0 } }, 400, 'SEC-IDP-002'],
  ];
  const before = await kernel.db.knex('security_identity_providers').orderBy('name');
  for (const [name, request, status, code] of problems) {
    const res = await call({ ...request, headers: admin });
    t.equal(res.statusCode, status, `${name}: ${status}`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${name}: problem+json`);
    t.equal((res.json() as { error: string }).error, code, `${name}: ${code}`);
  }
  t.same(await kernel.db.knex('security_identity_providers').orderBy('name'), before, 'nothing was written');
  t.match((await call({ method: 'POST', url: BASE, headers: admin, payload: { name: 'x', type: 'teleport' } })).json(), { message: /Unknown identity provider type "teleport" \(known: .*local.*test-header/ });

  const removed = await call({ method: 'DELETE', url: `${BASE}header`, headers: admin });
  t.equal(removed.statusCode, 204);
  t.equal((await call({ url: `${BASE}header`, headers: admin })).statusCode, 404);
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 401, 'a deleted provider authenticates no one');
});

t.test('enabling and disabling apply at once, without a restart', async (t) => {
  const { kernel, call } = await setup(t);
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 401, 'no header provider yet');
  const created = await call({ method: 'POST', url: BASE, headers: admin, payload: headerProvider() });
  t.equal(created.statusCode, 201);

  const self = await call({ url: SELF, headers: headerUser });
  t.equal(self.statusCode, 200, self.body);
  t.match(self.json(), { identity: { identifier: 'hdr-user', name: 'Header user hdr-user', identityProviderName: 'header', identityProviderType: 'test-header' } });
  t.equal((await call({ url: SELF, headers: { ...headerUser, 'x-test-secret': 'wrong' } })).statusCode, 401, 'the provider checks its secret');
  const session = await login(kernel, headerUser);

  const disable = await call({ method: 'PUT', url: BASE, headers: admin, payload: headerProvider({ enabled: false, config: { users: ['hdr-admin', 'hdr-user'], sharedSecret: '********' } }) });
  t.equal(disable.statusCode, 200, disable.body);
  t.equal(disable.json().enabled, false);
  const refused = await call({ url: SELF, headers: headerUser });
  t.equal(refused.statusCode, 401, 'disabled: the same request is refused at once');
  t.equal(refused.headers['content-type'], 'application/problem+json');
  t.match((await call({ url: SELF, headers: { ...host, cookie: session.cookie } })).json(), { error: 'SEC-AUTH-004' }, "and so is the provider's session");

  const enable = await call({ method: 'PUT', url: BASE, headers: admin, payload: headerProvider({ config: { users: ['hdr-admin', 'hdr-user'], sharedSecret: '********' } }) });
  t.equal(enable.statusCode, 200);
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 200, 're-enabled: accepted again');

  // Disabling `local` while `header` is enabled: API keys stop working, header logins go on.
  t.equal((await call({ url: SELF, headers: admin })).statusCode, 200, 'the admin key works (and is cached)');
  const offLocal = await call({ method: 'PUT', url: BASE, headers: headerAdmin, payload: { name: 'local', type: 'local', enabled: false } });
  t.equal(offLocal.statusCode, 200, offLocal.body);
  const keyRefused = await call({ url: SELF, headers: admin });
  t.equal(keyRefused.statusCode, 401, 'API-key logins fail once local is disabled, cached key or not');
  t.equal((keyRefused.json() as { error: string }).error, 'SEC-AUTH-002');
  t.equal((await call({ url: SELF, headers: headerAdmin })).statusCode, 200);

  // `local` is now the only disabled one; `header` is the last enabled provider.
  const last = await call({ method: 'PUT', url: BASE, headers: headerAdmin, payload: headerProvider({ enabled: false }) });
  t.equal(last.statusCode, 400);
  t.match(last.json(), { error: 'SEC-IDP-005', status: 400 });
  const lastDelete = await call({ method: 'DELETE', url: `${BASE}header`, headers: headerAdmin });
  t.match(lastDelete.json(), { error: 'SEC-IDP-005' }, 'nor deleted');
  t.equal((await call({ url: SELF, headers: headerUser })).statusCode, 200, 'the refusal changed nothing');

  const onLocal = await call({ method: 'PUT', url: BASE, headers: headerAdmin, payload: { name: 'local', type: 'local', enabled: true } });
  t.equal(onLocal.statusCode, 200);
  t.equal((await call({ url: SELF, headers: admin })).statusCode, 200, 're-enabling local restores API-key logins');
});

t.test('dynamic/enabled: public, enabled providers only, names and types only', async (t) => {
  const { call } = await setup(t);
  const url = `${BASE}dynamic/enabled`;
  t.same((await call({ url, headers: host })).json(), [{ name: 'local', type: 'local' }]);
  await call({ method: 'POST', url: BASE, headers: admin, payload: headerProvider() });
  await call({ method: 'POST', url: BASE, headers: admin, payload: headerProvider({ name: 'spare', enabled: false, config: { users: [] } }) });

  const res = await call({ url, headers: host });
  t.equal(res.statusCode, 200, 'no credentials needed');
  t.equal(res.headers['content-type'], 'application/json');
  t.same(res.json(), [
    { name: 'header', type: 'test-header' },
    { name: 'local', type: 'local' },
  ]);
  t.notMatch(res.body, /sesame|\*\*\*|users/, 'no configuration');

  await call({ method: 'PUT', url: BASE, headers: admin, payload: headerProvider({ enabled: false }) });
  t.same((await call({ url, headers: host })).json(), [{ name: 'local', type: 'local' }], 'a disabled provider disappears at once');
  t.same((await call({ url: url.replace('/enabled', '/enabled/'), headers: host })).json(), [{ name: 'local', type: 'local' }], 'trailing slash too');
});

t.test('search', async (t) => {
  const { call } = await setup(t);
  for (const [name, enabled] of [['header-a', true], ['header-b', false], ['Header-C', true]] as const) {
    const res = await call({ method: 'POST', url: BASE, headers: admin, payload: headerProvider({ name, enabled, config: { users: ['x'], sharedSecret: 's' } }) });
    t.equal(res.statusCode, 201);
  }
  const search = async (body: Record<string, unknown>) => {
    const res = await call({ method: 'POST', url: `${BASE}search`, headers: admin, payload: body });
    t.equal(res.statusCode, 200, res.body);
    return res.json() as { results: { name: string; config: Record<string, unknown> }[]; pageIndex: number; pageSize: number; hasMore: boolean; count?: number };
  };
  const all = await search({});
  t.same(all.results.map((p) => p.name), ['Header-C', 'header-a', 'header-b', 'local']);
  t.match(all, { pageIndex: 1, pageSize: 50, hasMore: false });
  t.notOk('count' in all, 'no count unless asked');
  t.equal(all.results[0]!.config.sharedSecret, '********', 'results are masked');

  const page1 = await search({ query: 'HEADER', pageIndex: 1, pageSize: 2, withCount: true });
  t.same(page1.results.map((p) => p.name), ['Header-C', 'header-a']);
  t.match(page1, { pageIndex: 1, pageSize: 2, hasMore: true, count: 3 });
  const page2 = await search({ query: 'header', pageIndex: 2, pageSize: 2 });
  t.same(page2.results.map((p) => p.name), ['header-b']);
  t.equal(page2.hasMore, false);
  t.same((await search({ type: 'test-header', enabled: false })).results.map((p) => p.name), ['header-b']);
  t.same((await search({ type: 'local' })).results.map((p) => p.name), ['local']);
  t.same((await search({ query: 'nothing', withCount: true })), { results: [], pageIndex: 1, pageSize: 50, hasMore: false, count: 0 });
});

t.test('access: credentials and the identity-providers permissions', async (t) => {
  const { kernel, call } = await setup(t);
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:identity-providers:read' }] });
  const nobody = await createPrincipal(kernel, 'nobody');
  const routes: InjectOptions[] = [
    { url: BASE },
    { url: `${BASE}local` },
    { method: 'POST', url: `${BASE}search`, payload: {} },
    { method: 'POST', url: BASE, payload: headerProvider() },
    { method: 'PUT', url: BASE, payload: { name: 'local', type: 'local', enabled: false } },
    { method: 'DELETE', url: `${BASE}local` },
  ];
  for (const route of routes) {
    const anonymous = await call({ ...route, headers: host });
    t.equal(anonymous.statusCode, 401, `${route.method ?? 'GET'} ${route.url} without credentials: 401`);
    t.equal((anonymous.json() as { error: string }).error, 'SEC-AUTH-001');
    t.equal((await call({ ...route, headers: { ...host, ...nobody.headers } })).statusCode, 403, `${route.method ?? 'GET'} ${route.url} without the permission: 403`);
  }
  for (const route of routes.slice(0, 3)) t.equal((await call({ ...route, headers: { ...host, ...reader.headers } })).statusCode, 200, `read: ${route.url}`);
  for (const route of routes.slice(3)) t.equal((await call({ ...route, headers: { ...host, ...reader.headers } })).statusCode, 403, `read cannot ${route.method}`);
  t.equal((await call({ url: BASE, headers: { host: 'unknown.example', ...ADMIN_HEADERS } })).statusCode, 404, 'configuration routes answer only on configuration hosts');
  t.same(await kernel.db.knex('security_identity_providers').pluck('name'), ['local'], 'nothing was written');
});
