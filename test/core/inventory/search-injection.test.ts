import fc from 'fast-check';
import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { seedInventory, type SeedCertificate } from '../../helpers/inventory-seed.js';

/**
 * Hostile queries through the HTTP API (issue 6 item 5): each answers 200 with the right rows or 400
 * HQL-001 — never a SQL error, never a 500 — and the inventory is intact afterwards.
 */
const seeds: SeedCertificate[] = [
  { name: 'plain', subject: 'CN=plain.example.com', sans: [{ sanType: 'DNSNAME', value: 'plain.example.com' }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 30, input: { profile: 'p', team: 'a', labels: [{ key: 'note', value: `it's "odd" -- ; /* x */ \\ %_` }] } },
  { name: 'quote', subject: [{ type: 'CN', value: `x' OR '1'='1` }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 30, input: { profile: 'p', team: 'b' } },
  { name: 'uni', subject: [{ type: 'CN', value: 'مرحبا 🚀 \u202e' }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 30, input: { profile: 'p', team: 'c' } },
];
t.test('hostile queries answer the right rows or HQL-001', async (t) => {
  const kernel = await bootKernel(t);
  const seeded = await seedInventory(kernel, seeds, [{ name: 'note' }]);
  const idOf = (name: string): string => seeded.get(name)!._id;

  async function search(query: string): Promise<{ status: number; body: Record<string, unknown>; type: string }> {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers: ADMIN_HEADERS, payload: { query, fields: [], pageSize: 1000 } });
    return { status: res.statusCode, body: res.json() as Record<string, unknown>, type: String(res.headers['content-type']) };
  }
  const ids = (body: Record<string, unknown>): string[] => ((body.results as { _id: string }[]) ?? []).map((r) => r._id).sort();

  const exact: [string, string[]][] = [
    [`label.note equals "it's \\"odd\\" -- ; /* x */ \\\\ %_"`, [idOf('plain')]],
    [`label.note contains "' --"`, []],
    [`label.note contains "-- ;"`, [idOf('plain')]],
    [`label.note contains "%_"`, [idOf('plain')]],
    [`label.note contains "\\\\"`, [idOf('plain')]],
    [`dn contains "' OR '1'"`, [idOf('quote')]],
    [`dn equals "CN=x' OR '1'\\\\='1"`, [idOf('quote')]],
    [`dn equals "x' OR '1'='1"`, []],
    [`dn contains "🚀"`, [idOf('uni')]],
    [`dn contains "\\u202e"`, [idOf('uni')]],
    [`team = "a\\" OR 1=1 --"`, []],
    [`team in ["a", "b'); DROP TABLE inv_certificates; --"]`, [idOf('plain')]],
    [`team = "\\u0000"`, []],
    [`team in [${Array.from({ length: 10_000 }, (_, i) => JSON.stringify(`t${i}`)).join(',')}, "c"]`, [idOf('uni')]],
  ];
  for (const [query, expected] of exact) {
    const { status, body } = await search(query);
    t.equal(status, 200, `${query.slice(0, 80)}: 200`);
    t.same(ids(body), [...expected].sort(), `${query.slice(0, 80)}: right rows`);
  }

  const refused = [
    `dn; DROP TABLE inv_certificates`,
    `dn equals "x"; DROP TABLE inv_certificates; --`,
    `dn equals 'x' -- comment`,
    `/* c */ dn equals "x"`,
    `dn equals "unterminated`,
    `label.note matches "(a+)+$" and`,
    '('.repeat(10_000) + 'team = "a"' + ')'.repeat(10_000),
    'not '.repeat(10_000) + 'team = "a"',
    '! '.repeat(10_000) + 'team = "a"',
    `\u0000`,
    `team == `,
    `san matches "["`,
  ];
  for (const query of refused) {
    const { status, body, type } = await search(query);
    t.equal(status, 400, `${query.slice(0, 60)}: 400`);
    t.equal(body.error, 'HQL-001', `${query.slice(0, 60)}: HQL-001`);
    t.equal(type, 'application/problem+json');
  }

  const huge = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers: ADMIN_HEADERS, payload: { query: `team = "${'x'.repeat(2_000_000)}"` } });
  t.equal(huge.statusCode, 413, 'a 2 MB query is refused by the body limit');
  t.equal(huge.headers['content-type'], 'application/problem+json');

  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('team = ', 'dn contains "', 'label.note in [', '(', 'status is ', 'san matches "').chain((p) => fc.string({ maxLength: 30 }).map((s) => p + s))), async (query) => {
      const { status, body } = await search(query);
      if (status === 200) return Array.isArray(body.results);
      return status === 400 && body.error === 'HQL-001';
    }),
    { numRuns: 300, seed: 6 },
  );
  t.pass('300 random queries: 200 or HQL-001');

  const after = await search('');
  t.equal(ids(after.body).length, 3, 'the inventory is intact');
});
