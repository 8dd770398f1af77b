import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { InventoryContext } from '../../../core/inventory/index.js';
import { prepare } from '../../../core/inventory/record.js';
import { parseCertificate } from '../../../core/pki/x509/parse.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { DAY, seedIssuers } from '../../helpers/inventory-seed.js';

/**
 * A CSV export longer than one keyset batch (1,000 rows; the next batch is read while one is written):
 * every certificate once, in the asked order, for the plain form, a label equality (read from the label
 * index) and a sort on a column with ties and NULLs. On SQLite, and on MariaDB with TEST_DATABASE_URL.
 */
const N = 2_345;

t.test('CSV exports span batches without losing or repeating a row', async (t) => {
  const kernel = await bootKernel(t);
  const inventory = kernel.container.resolve<InventoryContext>('inventory');
  await inventory.repository.labels.create('default', { name: 'env', regex: 'prod|dev' });
  const { acme } = seedIssuers();
  const spki = new Uint8Array(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'der' }));
  const now = Date.now();
  // Another tenant's certificates, prepared among ours so that their ids fall between ours.
  const theirs: ReturnType<typeof prepare>[] = [];
  const records = Array.from({ length: N }, (_, i) => {
    if (i % 60 === 30) {
      const other = acme.issueForKey(spki, { subject: `CN=x${i}`, sans: [{ sanType: 'DNSNAME', value: `x${i}.other.example` }], notBefore: now - DAY, notAfter: now + DAY });
      theirs.push(prepare(parseCertificate(other), { certificate: Buffer.from(other).toString('base64'), labels: [{ key: 'env', value: 'dev' }], metadata: [{ key: 'm', value: 'x' }] }));
    }
    const der = acme.issueForKey(spki, { subject: `CN=h${i}.example.com`, sans: [{ sanType: 'DNSNAME', value: `h${i}.example.com` }], notBefore: now - DAY, notAfter: now + (1 + (i % 7)) * DAY });
    return prepare(parseCertificate(der), {
      certificate: Buffer.from(der).toString('base64'),
      // Every third has no owner (NULL in the sort column); owners repeat (ties broken by id).
      ...(i % 3 === 0 ? {} : { owner: `o${i % 5}` }),
      labels: [{ key: 'env', value: i % 4 === 0 ? 'dev' : 'prod' }],
    });
  });
  await inventory.repository.insertMany('default', records);
  const all = records.map((r) => ({ id: r.id, owner: r.main.owner ?? null, env: r.labels[0]!.value, san: `h${records.indexOf(r)}.example.com` }));
  // An unfiltered export reads side rows by id range: it must leave the other tenant's out.
  await inventory.repository.labels.create('other', { name: 'env', regex: 'prod|dev' });
  await inventory.repository.insertMany('other', theirs);
  const ours = new Set(records.map((r) => r.id));
  const [low, high] = [[...ours].sort()[0]!, [...ours].sort()[N - 1]!];
  const interleaved = theirs.filter((r) => r.id > low && r.id < high).length;
  const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  const exported = async (payload: object): Promise<string[][]> => {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload });
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'exported' : res.body);
    t.match(res.headers['content-type'], /^text\/csv/);
    return res.body
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(','));
  };

  const plain = await exported({ fields: ['_id'] });
  t.equal(plain.length, N, 'every certificate');
  t.same(
    plain.map((r) => r[0]),
    [...all].sort(byId).map((r) => r.id),
    'once each, by id',
  );

  // The side values of every row, ascending and descending (batches read side rows by id range).
  for (const order of ['Asc', 'Desc'] as const) {
    const rows = await exported({ fields: ['_id', 'subjectAlternateNames', 'labels', 'metadata'], sortedBy: [{ element: '_id', order }] });
    const expectedRows = [...all].sort(byId).map((r) => [r.id, `DNSNAME:${r.san}`, `env=${r.env}`, '']);
    t.same(rows, order === 'Asc' ? expectedRows : expectedRows.reverse(), `${order}: every row with its own SANs, labels and metadata`);
    t.notOk(rows.some((r) => !ours.has(r[0]!)), `${order}: no certificate of the other tenant`);
  }
  t.ok(interleaved > 30, `${interleaved} of the other tenant's ids fall between ours`);

  const prod = await exported({ query: 'label.env equals "prod"', fields: ['_id'] });
  t.same(
    prod.map((r) => r[0]),
    all
      .filter((r) => r.env === 'prod')
      .sort(byId)
      .map((r) => r.id),
    'label equality (read from the label index): once each, by id',
  );

  const sorted = await exported({ query: 'label.env equals "prod"', fields: ['_id', 'owner'], sortedBy: [{ element: 'owner', order: 'Desc' }] });
  // Descending: NULLs last (as both engines order them), ties by id ascending.
  const expected = all
    .filter((r) => r.env === 'prod')
    .sort((a, b) => (a.owner === b.owner ? byId(a, b) : a.owner === null ? 1 : b.owner === null ? -1 : a.owner < b.owner ? 1 : -1));
  t.same(
    sorted.map((r) => `${r[0]} ${r[1]}`),
    expected.map((r) => `${r.id} ${r.owner ?? ''}`),
    'sorted by owner descending with ties and empty owners: once each, in order',
  );
});
