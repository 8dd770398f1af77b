import t from 'tap';
import type { InventoryContext } from '../../../core/inventory/index.js';
import { CERTIFICATE_LANGUAGE } from '../../../core/inventory/language.js';
import { parseQuery, querySource } from '../../../core/query/index.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory, type SeedCertificate } from '../../helpers/inventory-seed.js';
import { createPrincipal } from '../../helpers/security.js';

/**
 * A query made of one equality on a label, a metadata key or a discovery facet is read by joining from
 * that side table in id order (core/query/source.ts), so a page stops after its rows instead of sorting
 * every match. What a user sees must not change: the same certificates, in id order both ways, pages
 * that neither skip nor repeat, counts, CSV batches, permission filters; and the plan reads the side
 * index without a sort. On SQLite, and on MariaDB with TEST_DATABASE_URL.
 */
const ENVS = ['prod', 'staging', 'prod', 'dev', 'prod', 'prod', 'test', 'prod'];
const seeds: SeedCertificate[] = Array.from({ length: 24 }, (_, i) => ({
  name: `c${i}`,
  subject: `CN=host${i}.example.com`,
  sans: [{ sanType: 'DNSNAME', value: `host${i}.example.com` }],
  issuer: 'acme',
  key: 'ec',
  notBefore: -1,
  notAfter: 30 + i,
  input: {
    profile: 'webserver',
    team: i % 3 === 0 ? 'net' : 'web',
    module: 'webra',
    // c5, c13, c21 have no env label; the others cycle through ENVS.
    labels: i % 8 === 5 ? [] : [{ key: 'env', value: ENVS[i % ENVS.length]! }],
    metadata: i % 4 === 0 ? [{ key: 'site', value: 'paris' }] : [],
    ...(i % 6 === 1 ? { discoveryData: [{ ip: `10.0.0.${i}`, hostnames: [`host${i}.lan`, 'shared.lan'], operatingSystems: [], paths: [], usages: [], sources: [], tlsPorts: [] }] } : {}),
  },
}));

t.test('searches driven from a side index answer what the plain form answers', async (t) => {
  const kernel = await bootKernel(t);
  const seeded = await seedInventory(kernel, seeds, [{ name: 'env', regex: 'prod|staging|dev|test' }]);
  const inventory = kernel.container.resolve<InventoryContext>('inventory');
  const idOf = (name: string): string => seeded.get(name)!._id;
  const byId = (names: string[]): string[] => names.map(idOf).sort();
  const where = (test: (s: SeedCertificate, i: number) => boolean): string[] => byId(seeds.filter(test).map((s) => s.name));

  const expected: Record<string, string[]> = {
    'label.env equals "prod"': where((s) => s.input!.labels!.some((l) => l.key === 'env' && l.value === 'prod')),
    'label.env in ["staging"]': where((s) => s.input!.labels!.some((l) => l.value === 'staging')),
    'label.env = "nope"': [],
    'metadata.site = "paris"': where((_s, i) => i % 4 === 0),
    'discoverydata.hostname equals "shared.lan"': where((_s, i) => i % 6 === 1),
  };
  t.ok(expected['label.env equals "prod"']!.length >= 10, 'a label shared by many certificates');

  const search = async (headers: Record<string, string>, body: object) => {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers, payload: body });
    t.equal(res.statusCode, 200, res.body);
    return res.json() as { results: { _id: string }[]; hasMore: boolean; count?: number };
  };

  for (const [query, ids] of Object.entries(expected)) {
    const source = querySource(parseQuery(query, CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex: inventory.knex, now: Date.now(), table: 'inv_certificates', tenant: 'default' }, true);
    t.ok(source.driven, `${query}: read from the side index`);

    const all = await search(ADMIN_HEADERS, { query, pageSize: 1000, withCount: true, fields: [] });
    t.same(
      all.results.map((r) => r._id),
      ids,
      `${query}: every match, in id order`,
    );
    t.equal(all.count, ids.length, `${query}: withCount`);

    const desc = await search(ADMIN_HEADERS, { query, pageSize: 1000, fields: [], sortedBy: [{ element: '_id', order: 'Desc' }] });
    t.same(
      desc.results.map((r) => r._id),
      [...ids].reverse(),
      `${query}: descending by id`,
    );

    // Pages of 3: together, once each, in order; hasMore false only on the last.
    const paged: string[] = [];
    for (let pageIndex = 1; pageIndex <= 20; pageIndex++) {
      const page = await search(ADMIN_HEADERS, { query, pageIndex, pageSize: 3, fields: [] });
      paged.push(...page.results.map((r) => r._id));
      if (!page.hasMore) break;
    }
    t.same(paged, ids, `${query}: pages neither skip nor repeat`);

    // CSV reads keyset batches after the last id: the driven form must continue from the side key.
    const csv = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload: { query, fields: ['_id'] } });
    t.equal(csv.statusCode, 200);
    t.same(csv.body.trimEnd().split('\r\n').slice(1).filter(Boolean), ids, `${query}: CSV`);
  }

  // The same queries sorted by another field are not driven, and answer the same set.
  const sorted = await search(ADMIN_HEADERS, { query: 'label.env equals "prod"', pageSize: 1000, fields: [], sortedBy: [{ element: 'notAfter', order: 'Desc' }] });
  t.same(sorted.results.map((r) => r._id).sort(), expected['label.env equals "prod"'], 'sorted by notAfter: the same certificates');

  // A permission filter is AND-ed into the driven form too.
  const web = await createPrincipal(kernel, 'web-reader', { permissions: [{ value: 'search:certificates', filter: 'team equals "web" and label.env exists' }] });
  const filtered = await search({ host: 'localhost', ...web.headers }, { query: 'label.env equals "prod"', pageSize: 1000, fields: [], withCount: true });
  const webProd = where((s) => s.input!.team === 'web' && s.input!.labels!.some((l) => l.value === 'prod'));
  t.same(
    filtered.results.map((r) => r._id),
    webProd,
    'filtered principal: only its certificates',
  );
  t.equal(filtered.count, webProd.length);

  // Queries that are not one side equality keep the plain form, and still answer right.
  for (const query of ['label.env equals "prod" and team = "net"', 'not label.env equals "prod"', 'label.env matches "^pr"', 'san equals "host3.example.com"', 'discoverydata.tlsport = 443']) {
    const source = querySource(parseQuery(query, CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex: inventory.knex, now: Date.now(), table: 'inv_certificates', tenant: 'default' }, true);
    t.notOk(source.driven, `${query}: plain form`);
  }
  const mixed = await search(ADMIN_HEADERS, { query: 'label.env equals "prod" and team = "net"', pageSize: 1000, fields: [] });
  t.same(
    mixed.results.map((r) => r._id),
    where((s) => s.input!.team === 'net' && s.input!.labels!.some((l) => l.value === 'prod')),
    'label and team',
  );
  const notProd = await search(ADMIN_HEADERS, { query: 'not label.env equals "prod"', pageSize: 1000, fields: [] });
  t.same(
    notProd.results.map((r) => r._id),
    where((s) => !s.input!.labels!.some((l) => l.value === 'prod')),
    'negated: the complement (certificates without the label included)',
  );
});

t.test('the driven page is read from the side index in id order, without a sort', async (t) => {
  const kernel = await bootKernel(t);
  const inventory = kernel.container.resolve<InventoryContext>('inventory');
  const knex = inventory.knex;
  const mysql = (knex.client as { dialect?: string }).dialect === 'mysql';
  const source = querySource(parseQuery('label.env equals "prod"', CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex, now: Date.now(), table: 'inv_certificates', tenant: 'default' }, true);
  const page = source.qb.clone().select('inv_certificates.id').orderBy(source.idRef).limit(51).toSQL();
  if (mysql) {
    const [rows] = (await knex.raw(`EXPLAIN ${page.sql}`, page.bindings as never[])) as [Record<string, unknown>[]];
    t.equal(rows[0]!.table, 'cwd', 'the label table is read first');
    t.equal(rows[0]!.key, 'inv_label_key_value', 'through its (tenant, key, value, certificate_id) index');
    t.notMatch(String(rows.map((r) => r.Extra).join(' ')), /filesort|temporary/i, 'no sort, no temporary table');
  } else {
    const rows = (await knex.raw(`EXPLAIN QUERY PLAN ${page.sql}`, page.bindings as never[])) as { detail: string }[];
    const plan = rows.map((r) => r.detail).join('\n');
    t.match(plan, /inv_label_key_value/, 'through the (tenant, key, value, certificate_id) index');
    t.notMatch(plan, /TEMP B-TREE/, 'no sort');
  }
});
