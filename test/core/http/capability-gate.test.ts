import t from 'tap';
import { CAPABILITIES } from '@certwright/sdk';
import { pino } from 'pino';
import { loadConfig } from '../../../core/config/index.js';
import { denyAllAuthorizer } from '../../../core/http/access.js';
import { HostPolicy, normaliseHost } from '../../../core/http/host-policy.js';
import { createHttpServer } from '../../../core/http/server.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { writeProtocolPlugin } from '../../helpers/plugins.js';

const COMMON = new Set(['webra', 'events', 'configuration']);

t.test('advanced configuration: each host reaches only the capabilities its entry allows', async (t) => {
  const plugins = tempDir(t);
  for (const cap of CAPABILITIES) writeProtocolPlugin(plugins, cap);
  // One host per capability, allowed only that one; the basic list must then be ignored.
  const endpoints = CAPABILITIES.map((cap) => ({ host: `${cap}.example`, [cap]: true }));
  const kernel = await bootKernel(t, {
    plugins: { paths: [plugins] },
    allowedHosts: ['basic.example'],
    certwright: { endpoints: endpoints as never },
  });
  const states = kernel.plugins.summaries().filter((s) => s.id.startsWith('protocol-fixture-'));
  t.equal(states.length, CAPABILITIES.length, 'one fixture protocol plugin per capability');
  t.ok(states.every((s) => s.state === 'active'), 'all fixture plugins active');

  for (const routeCap of CAPABILITIES) {
    for (const hostCap of CAPABILITIES) {
      const res = await kernel.app.inject({ method: 'GET', url: `/fixture/${routeCap}`, headers: { host: `${hostCap}.example:9000` } });
      if (routeCap === hostCap) {
        t.equal(res.statusCode, 200, `${routeCap} route on the ${hostCap} host answers`);
        t.same(res.json(), { capability: routeCap });
      } else {
        t.equal(res.statusCode, 404, `${routeCap} route on the ${hostCap} host is hidden`);
        t.equal(res.headers['content-type'], 'application/problem+json');
        t.equal(res.json().error, 'HTTP-001');
      }
    }
    const basic = await kernel.app.inject({ method: 'GET', url: `/fixture/${routeCap}`, headers: { host: 'basic.example' } });
    t.equal(basic.statusCode, 404, `basic host ignored once certwright.endpoints is set (${routeCap})`);
  }

  // Routes common to webra, events and configuration answer on a host allowed any of the three.
  for (const hostCap of CAPABILITIES) {
    const res = await kernel.app.inject({ method: 'GET', url: '/api/v1/endpoints/', headers: { host: `${hostCap}.example`, ...ADMIN_HEADERS } });
    t.equal(res.statusCode, COMMON.has(hostCap) ? 200 : 404, `/api/v1/endpoints/ on the ${hostCap} host`);
  }

  const listed = await kernel.app.inject({ method: 'GET', url: '/api/v1/endpoints/', headers: { host: 'configuration.example', ...ADMIN_HEADERS } });
  const entries = listed.json() as Record<string, unknown>[];
  t.equal(entries.length, CAPABILITIES.length);
  const est = entries.find((e) => e.host === 'est.example')!;
  t.equal(est.est, true);
  t.equal(est.acme, false, 'unset capabilities default to false');
});

t.test('basic configuration: allowed hosts get every capability, others none', async (t) => {
  const plugins = tempDir(t);
  for (const cap of CAPABILITIES) writeProtocolPlugin(plugins, cap);
  const kernel = await bootKernel(t, { plugins: { paths: [plugins] }, allowedHosts: ['pki.example', '10.0.0.5'] });
  for (const cap of CAPABILITIES) {
    for (const host of ['pki.example', 'PKI.Example.:443', '10.0.0.5:9000']) {
      const res = await kernel.app.inject({ method: 'GET', url: `/fixture/${cap}`, headers: { host } });
      t.equal(res.statusCode, 200, `${cap} on ${host}`);
    }
    for (const host of ['evil.example', 'localhost', 'pki.example.evil.example']) {
      const res = await kernel.app.inject({ method: 'GET', url: `/fixture/${cap}`, headers: { host } });
      t.equal(res.statusCode, 404, `${cap} hidden on ${host}`);
    }
  }
});

t.test('default configuration allows localhost, 127.0.0.1 and ::1 only', async (t) => {
  const kernel = await bootKernel(t);
  for (const host of ['localhost', 'localhost:9000', '127.0.0.1:9000', '[::1]:9000', '[::1]']) {
    const res = await kernel.app.inject({ method: 'GET', url: '/api/v1/endpoints/', headers: { host, ...ADMIN_HEADERS } });
    t.equal(res.statusCode, 200, host);
  }
  const evil = await kernel.app.inject({ method: 'GET', url: '/api/v1/endpoints/', headers: { host: 'evil.example' } });
  t.equal(evil.statusCode, 404);
  t.equal(evil.headers['content-type'], 'application/problem+json');
  // The hidden route looks exactly like a route that does not exist.
  const unknown = await kernel.app.inject({ method: 'GET', url: '/api/v1/nothing-here', headers: { host: 'localhost' } });
  t.same(evil.json(), unknown.json());
  // Probes answer on any host: load balancers call them by address.
  const health = await kernel.app.inject({ method: 'GET', url: '/healthz', headers: { host: '192.0.2.7:9000' } });
  t.equal(health.statusCode, 200);
});

t.test('a route without a capability or an access declaration is refused at registration', async (t) => {
  const config = loadConfig({ env: {}, overrides: { log: { level: 'silent' } } });
  const app = await createHttpServer({ config, logger: pino({ level: 'silent' }), hostPolicy: () => HostPolicy.fromConfig(config), authorizer: () => denyAllAuthorizer });
  t.teardown(() => app.close());
  t.throws(() => app.get('/forgot', async () => ({})), /declares no capability/);
  t.throws(() => app.get('/forgot-access', { config: { capability: 'webra' } }, async () => ({})), /declares no access/);
  t.doesNotThrow(() => app.get('/declared', { config: { capability: 'webra', access: 'public' } }, async () => ({})));
});

t.test('host normalisation', async (t) => {
  t.equal(normaliseHost('Example.COM.:443'), 'example.com');
  t.equal(normaliseHost('[::1]:9000'), '::1');
  t.equal(normaliseHost('::1'), '::1');
  t.equal(normaliseHost('[2001:db8::1]'), '2001:db8::1');
  t.equal(normaliseHost('127.0.0.1:80'), '127.0.0.1');
  t.equal(normaliseHost(undefined), '');
  t.equal(normaliseHost(''), '');
});
