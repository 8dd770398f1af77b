import t from 'tap';
import type { HostPolicy } from '../../../core/http/host-policy.js';
import type { RouteTableEntry } from '../../../core/http/route-guards.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

/**
 * The only /api/v1 routes answered without credentials. A route added as public by mistake, or one
 * that forgets to declare a permission, fails this test (a route without any access declaration cannot
 * even be registered).
 */
const PUBLIC_ROUTES = new Set([
  'GET /api/v1/openapi.json', // the API reference
  'GET /api/v1/security/principals/logout', // ends whatever session the cookie names
  'GET /api/v1/security/identity/providers/dynamic/enabled', // the login page lists the providers
  'GET /api/v1/security/identity/providers/:name/login', // a browser login (OpenID Connect) starts before any credential
  'GET /api/v1/security/identity/providers/:name/callback', // the provider's code and the sealed login state are the proof
  'POST /api/v1/challenge/submit', // the one-time challenge is the credential
  'GET /pki/:connector/crl', // CRL distribution point (RFC 5280 §4.2.1.13): relying parties hold no credentials
  'GET /pki/:connector/ca', // AIA caIssuers
  'POST /pki/:connector/ocsp', // OCSP responder (RFC 6960)
  'GET /pki/:connector/ocsp/*', // OCSP GET form
  'GET /api/v1/ui/', // the login page's customization (version, logo, announcements): nothing secret
]);

/**
 * Authenticated routes whose answer is limited to the configuration sections the caller may read, and that
 * refuse (403) a caller who may read none (spec: adoc.get answers 403).
 */
const SECTION_LIMITED = new Set(['GET /api/v1/adoc']);

/**
 * Routes whose refusals the spec fixes otherwise: the execution-policy list answers 204 to a caller without the
 * permission (interface-spec automation.execution.list) and SecAuth001 with status 500 (its Errors rule 2).
 */
const SPEC_REFUSALS = new Map([['GET /api/v1/automation/executions/', { anonymous: 500, withoutPermission: 204 }]]);

/** A concrete URL for a route pattern: parameters and wildcards filled with a harmless value. */
function concrete(url: string): string {
  return url
    .replace(/:([A-Za-z0-9_]+)\([^)]*\)/g, '000000000000000000000000')
    .replace(/:([A-Za-z0-9_]+)/g, 'matrix-probe')
    .replace(/\*$/, 'matrix-probe');
}

const describe = (r: RouteTableEntry) => `${r.method} ${r.url}`;

t.test('authorization matrix generated from the route table', async (t) => {
  const kernel = await bootKernel(t);
  const nobody = await createPrincipal(kernel, 'nobody'); // authenticated, holds no permission
  // /reports/:uuid: the link a report mail carries, outside /api/v1 but guarded like the API.
  const routes = kernel.app.routeTable.filter((r) => (r.url.startsWith('/api/v1') || r.url.startsWith('/reports/')) && r.method !== 'HEAD');
  t.ok(routes.length >= 40, `the table lists the API routes (${routes.length})`);

  const call = (route: RouteTableEntry, headers: Record<string, string>) => {
    const body = ['POST', 'PUT', 'PATCH'].includes(route.method);
    return kernel.app.inject({
      method: route.method as 'GET',
      url: concrete(route.url),
      headers: { host: 'localhost', ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { payload: {} } : {}),
    });
  };

  let checked = 0;
  for (const route of routes) {
    const name = describe(route);
    if (route.access === 'public') {
      t.ok(PUBLIC_ROUTES.has(name), `${name} is public on purpose`);
      continue;
    }
    const anonymous = await call(route, {});
    const special = SPEC_REFUSALS.get(name);
    t.equal(anonymous.statusCode, special?.anonymous ?? 401, `${name}: no credentials → ${special?.anonymous ?? 401}`);
    t.match(anonymous.json(), { error: /^SEC-AUTH-00\d$/ }, `${name}: SEC-AUTH code`);

    const withoutPermission = await call(route, nobody.headers);
    if (special) {
      t.equal(withoutPermission.statusCode, special.withoutPermission, `${name}: without ${route.access === 'authenticated' ? 'a right' : route.access.permission} → ${special.withoutPermission}`);
    } else if (route.access === 'authenticated' && SECTION_LIMITED.has(name)) {
      t.equal(withoutPermission.statusCode, 403, `${name}: a caller who may read no section → 403`);
      t.match(withoutPermission.json(), { error: 'SEC-PERM-001' });
    } else if (route.access === 'authenticated') {
      t.not(withoutPermission.statusCode, 401, `${name}: open to any authenticated principal`);
      t.not(withoutPermission.statusCode, 403, `${name}: open to any authenticated principal`);
    } else {
      t.equal(withoutPermission.statusCode, 403, `${name}: without ${route.access.permission} → 403`);
      t.match(withoutPermission.json(), { error: 'SEC-PERM-001' });
    }

    const admin = await call(route, ADMIN_HEADERS);
    t.notOk([401, 403].includes(admin.statusCode), `${name}: the administrator is neither refused nor unauthenticated (${admin.statusCode})`);
    t.not(admin.statusCode, 500, `${name}: no internal error on a probe request`);
    checked++;
  }
  t.ok(checked >= 30, `${checked} guarded routes checked`);
});

t.test('a route that declares no access cannot be registered', async (t) => {
  const kernel = await bootKernel(t);
  const fastify = (await import('fastify')).default;
  const { installRouteGuards } = await import('../../../core/http/route-guards.js');
  const app = fastify();
  const policy = kernel.container.resolve<() => HostPolicy>('hostPolicy');
  installRouteGuards(app, () => policy(), () => kernel.security.authorizer);
  t.throws(() => app.get('/api/v1/forgotten', { config: { capability: 'configuration' } }, async () => ({})), /declares no access/);
  await app.close();
});
