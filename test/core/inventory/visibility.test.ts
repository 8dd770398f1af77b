import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory, type SeedCertificate } from '../../helpers/inventory-seed.js';
import { createPrincipal } from '../../helpers/security.js';

/**
 * Permission filters (issue 6 item 4): a search permission's filter (a certificate query) is AND-ed
 * into every search, aggregate, CSV and get of the principal holding it; several filters are OR-ed;
 * a filter that does not parse admits nothing. Plus the route guards: 401, 403, wrong host 404.
 */
const seeds: SeedCertificate[] = ['web', 'web', 'net', 'sec'].map((team, i) => ({
  name: `c${i}`,
  subject: `CN=host${i}.example.com`,
  sans: [{ sanType: 'DNSNAME', value: `host${i}.example.com` }],
  issuer: 'acme',
  key: 'ec',
  notBefore: -1,
  notAfter: 30 + i,
  input: { profile: 'webserver', team, module: 'webra' },
}));

t.test('permission filters narrow every read; routes are guarded', async (t) => {
  const kernel = await bootKernel(t);
  const seeded = await seedInventory(kernel, seeds);
  const id = (name: string): string => seeded.get(name)!._id;
  const webOnly = await createPrincipal(kernel, 'web-reader', { permissions: [{ value: 'search:certificates', filter: 'team equals "web"' }] });
  const webOrNet = await createPrincipal(kernel, 'two-filters', { permissions: [{ value: 'search:certificates', filter: 'team equals "web"' }, { value: 'search:*', filter: 'team = "net"' }] });
  const broken = await createPrincipal(kernel, 'broken-filter', { permissions: [{ value: 'search:certificates', filter: 'team equals' }] });
  const unfiltered = await createPrincipal(kernel, 'plain-reader', { permissions: [{ value: 'search:certificates' }, { value: 'search:certificates', filter: 'team = "web"' }] });
  const nobody = await createPrincipal(kernel, 'no-search', { permissions: [{ value: 'configuration:labels:read' }] });

  const call = (headers: Record<string, string>, method: 'GET' | 'POST', url: string, payload?: object) =>
    kernel.app.inject({ method, url, headers: { host: 'localhost', ...headers }, ...(payload ? { payload } : {}) });
  const found = async (headers: Record<string, string>, query = ''): Promise<string[]> => {
    const res = await call(headers, 'POST', '/api/v1/certificates/search', { query, fields: [] });
    t.equal(res.statusCode, 200, res.body);
    return (res.json().results as { _id: string }[]).map((r) => r._id).sort();
  };
  const ids = (...names: string[]): string[] => names.map(id).sort();

  t.same(await found(ADMIN_HEADERS), ids('c0', 'c1', 'c2', 'c3'), 'administrator sees everything');
  t.same(await found(webOnly.headers), ids('c0', 'c1'), 'the filter narrows the search');
  t.same(await found(webOnly.headers, 'team = "net" or team = "web"'), ids('c0', 'c1'), 'the query cannot widen it');
  t.same(await found(webOrNet.headers), ids('c0', 'c1', 'c2'), 'two filters are OR-ed');
  t.same(await found(broken.headers), [], 'a filter that does not parse admits nothing');
  t.same(await found(unfiltered.headers), ids('c0', 'c1', 'c2', 'c3'), 'a permission without filter admits everything');

  const agg = await call(webOnly.headers, 'POST', '/api/v1/certificates/aggregate', { groupBy: ['team'] });
  t.same(agg.json().items, [{ _id: { team: 'web' }, count: 2 }], 'aggregate sees only the filtered certificates');
  const csv = await call(webOnly.headers, 'POST', '/api/v1/certificates/csv', { fields: ['team'] });
  t.same(csv.body.trimEnd().split('\r\n').slice(1).map((l) => l.split(',')[1]), ['web', 'web'], 'CSV too');

  const own = await call(webOnly.headers, 'GET', `/api/v1/certificates/${id('c0')}`);
  t.equal(own.statusCode, 200, 'a visible certificate');
  const other = await call(webOnly.headers, 'GET', `/api/v1/certificates/${id('c3')}`);
  t.equal(other.statusCode, 403, 'a certificate outside the filter');
  t.equal(other.json().error, 'SEC-PERM-001');
  const pem = encodeURIComponent(seeded.get('c3')!.certificate);
  t.equal((await call(webOnly.headers, 'GET', `/api/v1/certificates/${pem}`)).statusCode, 403, 'by PEM too');

  for (const [method, url, payload] of [
    ['POST', '/api/v1/certificates/search', { query: '' }],
    ['POST', '/api/v1/certificates/aggregate', { groupBy: ['team'] }],
    ['POST', '/api/v1/certificates/csv', {}],
    ['GET', '/api/v1/certificates/search/dictionary', undefined],
  ] as const) {
    t.equal((await call({}, method, url, payload)).statusCode, 401, `${url}: no auth → 401`);
    t.equal((await call(nobody.headers, method, url, payload)).statusCode, 403, `${url}: no search permission → 403`);
    const wrongHost = await kernel.app.inject({ method, url, headers: { host: 'evil.example', ...ADMIN_HEADERS }, ...(payload ? { payload } : {}) });
    t.equal(wrongHost.statusCode, 404, `${url}: wrong host → 404`);
  }
});
