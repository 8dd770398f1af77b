/**
 * Who may reach reports (core/reports/routes.ts): every route needs a signed-in caller (401); the download and
 * the list by task name need search:certificates with no filter (a report covers the whole inventory); the
 * list of every report and deletion need configuration:reports:read / write. The uuid alone opens nothing.
 */
import t from 'tap';
import { createPrincipal, type TestPrincipal } from '../../helpers/security.js';
import { LINK_TASK, reportKernel } from './harness.js';

const { kernel, admin, run } = await reportKernel(t);
let uuid = '';
// In a before hook: tap ends a root test left idle at top level while a run is awaited.
t.before(async () => {
  t.equal((await admin('POST', '/api/v1/scheduler/tasks/', LINK_TASK)).statusCode, 201);
  const result = await run('expiring');
  t.equal(result.status, 'success', result.summary);
  uuid = String(result.details!.report);
});

const routes = {
  download: { method: 'GET', url: () => `/reports/${uuid}` },
  byName: { method: 'GET', url: () => '/api/v1/reports/expiring' },
  list: { method: 'GET', url: () => '/api/v1/reports/' },
  remove: { method: 'DELETE', url: () => `/api/v1/reports/${uuid}` },
} as const;
type Route = keyof typeof routes;
const call = (route: Route, who?: TestPrincipal) => kernel.app.inject({ method: routes[route].method, url: routes[route].url(), headers: { host: 'localhost', ...(who?.headers ?? {}) } });

t.test('no credentials: 401 on every route, the download included', async (t) => {
  for (const route of Object.keys(routes) as Route[]) {
    const res = await call(route);
    t.equal(res.statusCode, 401, `${route}: 401`);
    t.match(res.json(), { error: /^SEC-AUTH-00\d$/ });
    t.notMatch(res.body, /_id,dn/, 'no content');
  }
});

t.test('each route refuses (403) who lacks its permission, and admits who holds it', async (t) => {
  const nobody = await createPrincipal(kernel, 'nobody');
  const narrow = await createPrincipal(kernel, 'narrow', { permissions: [{ value: 'search:certificates', filter: 'team equals "pki"' }] });
  const searcher = await createPrincipal(kernel, 'searcher', { permissions: [{ value: 'search:certificates' }] });
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:reports:read' }] });
  const writer = await createPrincipal(kernel, 'writer', { permissions: [{ value: 'configuration:reports:write' }] });
  const expect: [string, TestPrincipal, Record<Route, number>][] = [
    ['no permission', nobody, { download: 403, byName: 403, list: 403, remove: 403 }],
    ['a filtered search:certificates', narrow, { download: 403, byName: 403, list: 403, remove: 403 }],
    ['search:certificates', searcher, { download: 200, byName: 200, list: 403, remove: 403 }],
    ['configuration:reports:read', reader, { download: 403, byName: 403, list: 200, remove: 403 }],
  ];
  for (const [what, who, statuses] of expect) {
    for (const route of Object.keys(statuses) as Route[]) {
      const res = await call(route, who);
      t.equal(res.statusCode, statuses[route], `${what}: ${route} → ${statuses[route]}`);
      if (res.statusCode === 403) t.match(res.json(), { error: 'SEC-PERM-001' });
    }
  }
  t.equal((await call('list', writer)).statusCode, 200, 'write implies read');
  t.equal((await call('remove', writer)).statusCode, 204, 'configuration:reports:write deletes');
  t.equal((await call('download', searcher)).statusCode, 404, 'and the report is gone');
});
