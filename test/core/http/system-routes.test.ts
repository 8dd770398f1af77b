import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';

const host = { host: 'localhost' };

t.test('probes: liveness, readiness (database and migrations)', async (t) => {
  const kernel = await bootKernel(t);
  const live = await kernel.app.inject({ url: '/healthz', headers: host });
  t.equal(live.statusCode, 200);
  t.same(live.json(), { status: 'ok' });
  const ready = await kernel.app.inject({ url: '/readyz', headers: host });
  t.equal(ready.statusCode, 200);
  t.same(ready.json(), { status: 'ready' });

  // Roll back the last core migration behind the kernel's back: readiness must notice.
  await kernel.db.knex.schema.dropTable('plugin_kv');
  await kernel.db.knex('cw_migrations').where({ name: '0002_plugin_kv' }).delete();
  const notReady = await kernel.app.inject({ url: '/readyz', headers: host });
  t.equal(notReady.statusCode, 503);
  t.equal(notReady.headers['content-type'], 'application/problem+json');
  t.match(notReady.json(), { error: 'SRV-002', detail: /migrations/ });
});

t.test('GET /api/v1/licenses/modules lists installed plugins with kind, version and state', async (t) => {
  const kernel = await bootKernel(t);
  const res = await kernel.app.inject({ url: '/api/v1/licenses/modules', headers: { ...host, ...ADMIN_HEADERS } });
  t.equal(res.statusCode, 200);
  const modules = res.json() as Record<string, unknown>[];
  const log = modules.find((m) => m.id === 'trigger-log');
  t.match(log, { id: 'trigger-log', kind: 'trigger-channel', version: '1.0.0', state: 'active', source: 'built-in' });
  t.ok(kernel.provided.triggerChannels.get('log'), 'the log channel is registered');
});

t.test('GET /api/v1/openapi.json documents the routes, version 2.11.0', async (t) => {
  const kernel = await bootKernel(t);
  const res = await kernel.app.inject({ url: '/api/v1/openapi.json', headers: host });
  t.equal(res.statusCode, 200);
  const doc = res.json() as { openapi: string; info: { version: string }; paths: Record<string, Record<string, unknown>> };
  t.match(doc.openapi, /^3\./);
  t.equal(doc.info.version, '2.11.0');
  for (const path of ['/healthz', '/readyz', '/api/v1/endpoints/', '/api/v1/licenses/modules']) t.ok(doc.paths[path]?.get, `documents GET ${path}`);
  t.ok((doc.paths['/api/v1/endpoints/']!.get as { responses: Record<string, unknown> }).responses['200'], 'with its response schema');
});
