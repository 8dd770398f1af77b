/**
 * Contract tests: the vendor's MCP server (evertrust/horizon-mcp) tools for HTTP proxies, terms of service,
 * system configuration, storages (src/tools/config/http-proxies.ts, terms-of-service.ts,
 * system-configuration.ts, storages.ts at 16a96fa) and list_credentials (src/tools/triggers.ts), each request
 * sent as the tool sends it (mcp-config-client.ts holds the transport facts) and each answer checked as the
 * client reads it. Credentials are created as Horizon's own live tests do (tests/e2e/config-http-proxies.test.ts
 * @4fa50a3: `{name, type: 'password', login, password: {value}, targets: ['proxy']}`).
 *
 * Known gaps: storages.ts creates only `type: 's3'` storages; Certwright ships the `filesystem` and `database`
 * types and answers STORAGE-002 naming the missing type until a storage plugin provides `s3` (the vendor's own
 * e2e test accepts a licence/availability error there too).
 */
import t from 'tap';
import { bootKernel } from '../helpers/kernel.js';
import { newId } from '../../core/db/ids.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t);
const mcp = new McpClient(kernel);
await mcp.init();
const PROXY_PASSWORD = 'Mcp-Proxy-Password-91c2';

t.test('credentials for a proxy, then list_credentials — src/tools/triggers.ts list_credentials', async (t) => {
  const created = await mcp.post('/api/v1/security/credentials', { name: 'mcp-proxy-creds', type: 'password', login: 'proxyuser', password: { value: PROXY_PASSWORD }, targets: ['proxy'] });
  expectOk(t, created, 'create credentials', [201]);
  const list = await mcp.get('/api/v1/security/credentials');
  expectOk(t, list, 'list_credentials', [200]);
  const items = normalizeItems(list.body);
  const mine = items.find((c) => c.name === 'mcp-proxy-creds');
  t.ok(mine, 'the credentials are listed by name');
  t.equal(mine?.type, 'password', 'with their type');
  t.same(mine?.targets, ['proxy'], 'and targets');
  t.notMatch(list.raw, PROXY_PASSWORD, 'never the secret value');
});

// http-proxies.ts — SPEC: /api/v1/proxy/httpproxies, strip [_id], PUT on the collection.
const PROXIES = { routeCollection: '/api/v1/proxy/httpproxies', routeItem: '/api/v1/proxy/httpproxies/{name}', stripFields: ['_id'] } as const;

t.test('http proxies: create, list, get, update, delete — http-proxies.ts CREATE/UPDATE_HTTP_PROXY_OPTS', async (t) => {
  const created = await mcp.post(PROXIES.routeCollection, { name: 'mcp-proxy', host: 'proxy.example.com', port: 3128, credentials: 'mcp-proxy-creds' });
  expectOk(t, created, 'create_http_proxy', [201]);
  t.match(created.body, { _id: String, name: 'mcp-proxy', host: 'proxy.example.com', port: 3128, credentials: 'mcp-proxy-creds' });
  t.ok(normalizeItems((await mcp.get(PROXIES.routeCollection)).body).some((p) => p.name === 'mcp-proxy'), 'list_http_proxies finds it by name');
  const got = await mcp.get(itemPath(PROXIES.routeItem, 'mcp-proxy'));
  expectOk(t, got, 'get_http_proxy', [200]);
  const { res } = await getStripMergePut(t, mcp, PROXIES, 'mcp-proxy', { port: 8080 });
  expectOk(t, res, 'update_http_proxy', [200]);
  t.equal((res.body as Json).port, 8080, 'the port changed');
  t.equal((res.body as Json).credentials, 'mcp-proxy-creds', 'the credentials reference kept (GET-merge)');
  // A reference to credentials that do not exist: HTTP-PROXY-002, as Horizon answers it.
  const bad = expectProblem(t, await mcp.post(PROXIES.routeCollection, { name: 'mcp-proxy-2', host: 'p.example', port: 3128, credentials: 'nope' }), 'unknown credentials', { status: 400, suffix: '002' });
  t.equal(bad.error, 'HTTP-PROXY-002');
  expectProblem(t, await mcp.get(itemPath(PROXIES.routeItem, 'nope')), 'get of an unknown proxy', { status: 404, suffix: '003' });
  // The credentials are in use: their deletion is refused naming the proxy.
  const inUse = expectProblem(t, await mcp.delete('/api/v1/security/credentials/mcp-proxy-creds'), 'delete credentials a proxy uses', { status: 400, suffix: '005' });
  t.match(inUse.message, 'http-proxy/mcp-proxy');
  const deleted = await mcp.delete(itemPath(PROXIES.routeItem, 'mcp-proxy'));
  t.equal(deleted.status, 204, 'delete_http_proxy');
});

// terms-of-service.ts — SPEC: /api/v1/system/terms-of-services, strip [_id, tenant].
const TOS = { routeCollection: '/api/v1/system/terms-of-services', routeItem: '/api/v1/system/terms-of-services/{name}', stripFields: ['_id', 'tenant'] } as const;

t.test('terms of service: create, list, get, update, delete — terms-of-service.ts', async (t) => {
  const created = await mcp.post(TOS.routeCollection, { name: 'mcp-tos', contents: [{ lang: 'en', value: '# Terms\nBe nice.' }, { lang: 'fr', value: '# Conditions' }], description: 'Enrollment terms' });
  expectOk(t, created, 'create_terms_of_service', [201]);
  t.ok(normalizeItems((await mcp.get(TOS.routeCollection)).body).some((p) => p.name === 'mcp-tos'), 'listed');
  const { res } = await getStripMergePut(t, mcp, TOS, 'mcp-tos', { description: 'Changed' });
  expectOk(t, res, 'update_terms_of_service', [200]);
  t.match(res.body, { description: 'Changed', contents: [{ lang: 'en' }, { lang: 'fr' }] });
  expectProblem(t, await mcp.post(TOS.routeCollection, { name: 'mcp-tos-2', contents: [] }), 'empty contents', { status: 400, suffix: '002' });
  expectProblem(t, await mcp.post(TOS.routeCollection, { name: 'mcp-tos', contents: [{ lang: 'en', value: 'x' }] }), 'the same name twice', { status: 400, suffix: '004' });
  t.equal((await mcp.delete(itemPath(TOS.routeItem, 'mcp-tos'))).status, 204, 'delete_terms_of_service');
});

// system-configuration.ts — SPEC: /api/v1/system/configuration, idField type, strip [_id, tenant].
const SYSCONF = { routeCollection: '/api/v1/system/configuration', routeItem: '/api/v1/system/configuration/{type}', stripFields: ['_id', 'tenant'] } as const;

t.test('system configuration: list, get by type, update (upsert) — system-configuration.ts', async (t) => {
  const list = await mcp.get(SYSCONF.routeCollection);
  expectOk(t, list, 'list_system_configs', [200]);
  t.same(normalizeItems(list.body).map((e) => e.type).sort(), ['interface_customization', 'internal_monitor', 'license', 'storage'], 'the four entries exist from the first start');
  const { res } = await getStripMergePut(t, mcp, SYSCONF, 'internal_monitor', { cron: '0 /1 * ? * *' });
  expectOk(t, res, 'update_system_config internal_monitor', [200]);
  t.equal((res.body as Json).cron, '0 /1 * ? * *');
  const custom = await getStripMergePut(t, mcp, SYSCONF, 'interface_customization', { headerStart: '#fcba03', announcements: [{ level: 'warning', content: [{ lang: 'en', value: 'Maintenance' }] }] });
  expectOk(t, custom.res, 'update_system_config interface_customization', [200]);
  expectProblem(t, (await getStripMergePut(t, mcp, SYSCONF, 'internal_monitor', { cron: 'not a cron' })).res, 'an invalid Quartz cron', { status: 400, suffix: '002' });
  expectProblem(t, (await getStripMergePut(t, mcp, SYSCONF, 'storage', { archiveStorage: 'no-such-storage' })).res, 'an unknown storage', { status: 400, suffix: '002' });
  // The license entry names triggers that must exist (checked on the write's own connection: SQLite has one).
  const now = Date.now();
  await kernel.db.knex('triggers').insert({ id: newId(now), tenant: 'default', name: 'licence-alert', channel: 'log', target: '{}', target_secrets: '{}', events: '[]', thresholds: '[]', trigger_type: 'notification', created_at: now, updated_at: now });
  const license = await getStripMergePut(t, mcp, SYSCONF, 'license', { triggers: { onLicenseExpiration: ['licence-alert'] } });
  expectOk(t, license.res, 'update_system_config license', [200]);
  expectProblem(t, (await getStripMergePut(t, mcp, SYSCONF, 'license', { triggers: { onLicenseUsage: ['no-such-trigger'] } })).res, 'an unknown trigger', { status: 400, suffix: '002' });
  // No POST (the vendor's QA answers 404) and no DELETE.
  t.equal((await mcp.post(SYSCONF.routeCollection, { type: 'license' })).status, 404, 'POST is not a route');
});

// storages.ts — SPEC: /api/v1/system/storages, strip [_id].
t.test('storages: the s3 create of storages.ts, and the built-in types through the same tools', async (t) => {
  const s3 = await mcp.post('/api/v1/system/storages', { type: 's3', name: 'mcp-s3', timeout: '30s', forcePathStyle: true, bucket: 'b', checksumMode: 'when_required', partBufferSize: '9MB' });
  const problem = expectProblem(t, s3, 'an s3 storage without an s3 storage plugin', { status: 400, suffix: '002' });
  t.match(problem.message, /no storage of type "s3" is installed/);
  const fs = await mcp.post('/api/v1/system/storages', { type: 'filesystem', name: 'mcp-files', description: 'Reports' });
  expectOk(t, fs, 'create a filesystem storage', [201]);
  const { res } = await getStripMergePut(t, mcp, { routeCollection: '/api/v1/system/storages', routeItem: '/api/v1/system/storages/{name}', stripFields: ['_id'] }, 'mcp-files', { description: 'Changed' });
  expectOk(t, res, 'update_storage', [200]);
  t.equal((await mcp.delete('/api/v1/system/storages/mcp-files')).status, 204, 'delete_storage');
});
