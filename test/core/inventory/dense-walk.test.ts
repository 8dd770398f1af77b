import t from 'tap';
import type { InventoryContext } from '../../../core/inventory/index.js';
import { CERTIFICATE_LANGUAGE } from '../../../core/inventory/language.js';
import { applyQuery, DENSE_SIDE_MATCHES, denseSideWalk, parseQuery } from '../../../core/query/index.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory, type SeedCertificate } from '../../helpers/inventory-seed.js';
import { createPrincipal } from '../../helpers/security.js';

/**
 * A positive range condition on SANs whose matches are dense (DENSE_SIDE_MATCHES side rows or more) is
 * read by walking the certificates in id order and probing each (core/query/source.ts denseSideWalk),
 * so a page stops early instead of collecting and sorting every match; a sparse one keeps `id IN (…)`.
 * The answers must not depend on the choice. On SQLite, and on MariaDB with TEST_DATABASE_URL.
 */
const PER_CERT = 100;
const DENSE = Math.ceil(DENSE_SIDE_MATCHES / PER_CERT) + 2;
const seeds: SeedCertificate[] = [];
for (let i = 0; i < DENSE + 30; i++) {
  const dense = i % 3 !== 2 && seeds.filter((s) => s.name.startsWith('d')).length < DENSE;
  const name = dense ? `d${i}` : `s${i}`;
  const sans = dense
    ? Array.from({ length: PER_CERT }, (_, k) => ({ sanType: 'DNSNAME' as const, value: `n${k}.h${i}.Dense.Example` }))
    : [{ sanType: 'DNSNAME' as const, value: i % 2 === 0 ? `h${i}.sparse.example` : `h${i}.other.example` }];
  seeds.push({ name, subject: `CN=h${i}`, sans, issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 10 + i, input: { team: i % 4 === 0 ? 'net' : 'web' } });
}

t.test('dense SAN ranges are walked along the id, sparse ones collected, with the same answers', async (t) => {
  const kernel = await bootKernel(t);
  const seeded = await seedInventory(kernel, seeds);
  const { knex } = kernel.container.resolve<InventoryContext>('inventory');
  const idsOf = (test: (s: SeedCertificate) => boolean): string[] => seeds.filter(test).map((s) => seeded.get(s.name)!._id).sort();
  const hasSan = (s: SeedCertificate, test: (v: string) => boolean): boolean => (s.sans ?? []).some((x) => test(x.value.toLowerCase()));

  const cases: { query: string; dense: boolean; ids: string[] }[] = [
    { query: 'san matches "\\\\.dense\\\\.example$"', dense: true, ids: idsOf((s) => hasSan(s, (v) => v.endsWith('.dense.example'))) },
    { query: 'san within ["\\\\.DENSE\\\\.example$", "^h1\\\\."]', dense: true, ids: idsOf((s) => hasSan(s, (v) => v.endsWith('.dense.example') || v.startsWith('h1.'))) },
    { query: 'san matches "^n7\\\\."', dense: false, ids: idsOf((s) => hasSan(s, (v) => v.startsWith('n7.'))) },
    { query: 'san matches "\\\\.sparse\\\\.example$"', dense: false, ids: idsOf((s) => hasSan(s, (v) => v.endsWith('.sparse.example'))) },
    { query: 'san equals "h2.sparse.example"', dense: false, ids: idsOf((s) => hasSan(s, (v) => v === 'h2.sparse.example')) },
  ];
  t.ok(cases[0]!.ids.length >= DENSE && cases[3]!.ids.length > 0, 'dense and sparse matches seeded');

  // The SQL of each search, to see which form it took.
  const statements: string[] = [];
  const listen = (q: { sql: string }) => void statements.push(q.sql.toLowerCase());
  knex.on('query', listen);
  t.teardown(() => void knex.off('query', listen));

  const search = async (headers: Record<string, string>, body: object) => {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers, payload: body });
    t.equal(res.statusCode, 200, res.body);
    return res.json() as { results: { _id: string }[]; hasMore: boolean; count?: number };
  };

  for (const { query, dense, ids } of cases) {
    const ast = parseQuery(query, CERTIFICATE_LANGUAGE);
    const ctx = { knex, now: Date.now(), table: 'inv_certificates', tenant: 'default' };
    t.equal(await denseSideWalk(ast, CERTIFICATE_LANGUAGE, ctx, true), dense, `${query}: ${dense ? 'dense: walked' : 'sparse: collected'}`);
    t.equal(await denseSideWalk(ast, CERTIFICATE_LANGUAGE, ctx, false), false, `${query}: not walked when sorted by another field`);

    statements.length = 0;
    const all = await search(ADMIN_HEADERS, { query, pageSize: 1000, withCount: true, fields: [] });
    t.same(all.results.map((r) => r._id), ids, `${query}: every match once, in id order`);
    t.equal(all.count, ids.length, `${query}: withCount`);
    // The page's own statement: the kernel's background work (the scheduler's polls) also orders and limits.
    const page = statements.find((s) => s.includes('inv_certificates') && s.includes('order by') && s.includes('limit'));
    t.equal(/is not null/.test(page ?? ''), dense, `${query}: page read ${dense ? 'by per-row probes' : 'from the collected ids'}`);

    const paged: string[] = [];
    for (let pageIndex = 1; pageIndex <= 40; pageIndex++) {
      const p = await search(ADMIN_HEADERS, { query, pageIndex, pageSize: 7, fields: [] });
      paged.push(...p.results.map((r) => r._id));
      if (!p.hasMore) break;
    }
    t.same(paged, ids, `${query}: pages of 7 neither skip nor repeat`);

    const desc = await search(ADMIN_HEADERS, { query, pageSize: 1000, fields: [], sortedBy: [{ element: '_id', order: 'Desc' }] });
    t.same(desc.results.map((r) => r._id), [...ids].reverse(), `${query}: descending by id`);
    const byDate = await search(ADMIN_HEADERS, { query, pageSize: 1000, fields: [], sortedBy: [{ element: 'notAfter', order: 'Asc' }] });
    t.same(byDate.results.map((r) => r._id).sort(), ids, `${query}: sorted by notAfter, the same set`);

    const csv = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload: { query, fields: ['_id'] } });
    t.equal(csv.statusCode, 200);
    t.same(csv.body.trimEnd().split('\r\n').slice(1).filter(Boolean), ids, `${query}: CSV`);

    // Compiled both ways by hand: the same rows.
    const both = await Promise.all(
      [false, true].map(async (walk) => {
        const qb = knex('inv_certificates').where('inv_certificates.tenant', 'default').select('inv_certificates.id').orderBy('inv_certificates.id');
        applyQuery(qb, ast, CERTIFICATE_LANGUAGE, { ...ctx, walk });
        return ((await qb) as { id: string }[]).map((r) => r.id);
      }),
    );
    t.same(both[1], both[0], `${query}: walk and collected forms agree`);
    t.same(both[0], ids, `${query}: and match the fixture`);
  }

  // A permission filter is AND-ed into the walked form.
  const net = await createPrincipal(kernel, 'net-reader', { permissions: [{ value: 'search:certificates', filter: 'team equals "net"' }] });
  const filtered = await search({ host: 'localhost', ...net.headers }, { query: cases[0]!.query, pageSize: 1000, fields: [], withCount: true });
  const netDense = idsOf((s) => s.input!.team === 'net' && hasSan(s, (v) => v.endsWith('.dense.example')));
  t.ok(netDense.length > 0);
  t.same(filtered.results.map((r) => r._id), netDense, 'filtered principal: only its certificates');
  t.equal(filtered.count, netDense.length);

  // Negated and mixed queries are not walked, and still answer right.
  for (const [query, ids] of [
    ['not san matches "\\\\.dense\\\\.example$"', idsOf((s) => !hasSan(s, (v) => v.endsWith('.dense.example')))],
    ['san matches "\\\\.dense\\\\.example$" and team = "net"', netDense],
  ] as const) {
    t.notOk(await denseSideWalk(parseQuery(query, CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex, now: Date.now(), table: 'inv_certificates', tenant: 'default' }, true), `${query}: not walked`);
    t.same((await search(ADMIN_HEADERS, { query, pageSize: 1000, fields: [] })).results.map((r) => r._id), ids, `${query}: answer`);
  }
});

t.test('the walked page probes the SAN table per certificate, in id order, without a sort', async (t) => {
  const kernel = await bootKernel(t);
  const { knex } = kernel.container.resolve<InventoryContext>('inventory');
  const mysql = (knex.client as { dialect?: string }).dialect === 'mysql';
  const qb = knex('inv_certificates').where('inv_certificates.tenant', 'default').select('inv_certificates.id').orderBy('inv_certificates.id').limit(51);
  applyQuery(qb, parseQuery('san matches "\\\\.example\\\\.com$"', CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex, now: Date.now(), table: 'inv_certificates', tenant: 'default', walk: true });
  const page = qb.toSQL();
  if (mysql) {
    const [rows] = (await knex.raw(`EXPLAIN ${page.sql}`, page.bindings as never[])) as [Record<string, unknown>[]];
    t.equal(rows[0]!.table, 'inv_certificates', 'the certificates are read first');
    t.equal(rows[1]!.select_type, 'DEPENDENT SUBQUERY', 'the SAN table is probed per certificate');
    t.notMatch(String(rows[1]!.Extra), /temporary/i, 'nothing collected first');
    // Whether MariaDB then reads the primary key in order or sorts depends on the table's size (an
    // empty table here sorts nothing); at 1,000,000 rows it walks PRIMARY: bench/inventory.ts measures it.
  } else {
    const rows = (await knex.raw(`EXPLAIN QUERY PLAN ${page.sql}`, page.bindings as never[])) as { detail: string }[];
    const plan = rows.map((r) => r.detail).join('\n');
    t.match(plan, /CORRELATED SCALAR SUBQUERY/, 'the SAN table is probed per certificate');
    t.notMatch(plan, /TEMP B-TREE/, 'no sort');
  }
});
