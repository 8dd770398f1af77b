import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../../core/db/migrator.js';
import { CertificateRepository, parseInventoryCertificate, prepare } from '../../../core/inventory/repository.js';
import { toPem } from '../../../core/pki/input.js';
import { freshDatabaseUrl } from '../../helpers/database.js';
import { DAY, seedIssuers } from '../../helpers/inventory-seed.js';
import { generateKeyPairSync } from 'node:crypto';

/**
 * Migration 0010 on a database written before it: the PEM and the JSON lists of every certificate move
 * to inv_certificate_documents and read back as they were written; the main table loses the columns.
 * On SQLite, and on MariaDB with TEST_DATABASE_URL.
 */
t.test('0010 moves the documents of existing certificates', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-0010-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const db = openDatabase({ url: await freshDatabaseUrl(t), dataDir, pool: { min: 0, max: 2 } });
  t.teardown(() => db.knex.destroy());
  const before = CORE_MIGRATIONS.findIndex((m) => m.name === '0010_certificate_documents');
  t.ok(before > 0, '0010 is a core migration');
  await migrateLatest(db.knex, CORE_MIGRATIONS.slice(0, before), CORE_MIGRATIONS_TABLE);
  t.ok(await db.knex.schema.hasColumn('inv_certificates', 'pem'), 'before: the PEM is in the main table');

  // Certificates written as the repository wrote them before 0010: one row holding everything.
  const { acme } = seedIssuers();
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  const now = Date.now();
  const written = [];
  for (let i = 0; i < 3; i++) {
    const pem = toPem(acme.issueForKey(spki, { subject: `CN=old${i}`, sans: [{ sanType: 'DNSNAME', value: `old${i}.example` }], notBefore: now - DAY, notAfter: now + 90 * DAY }));
    const record = prepare(parseInventoryCertificate(pem), {
      certificate: pem,
      owner: 'alice',
      thirdPartyData: i === 1 ? [{ connector: 'vault', id: `v-${i}` }] : [],
      discoveryData: [{ ip: `10.0.0.${i}`, hostnames: ['h.lan'], operatingSystems: [], paths: [], usages: [], sources: [], tlsPorts: [{ port: 443, version: 'TLSv1.3' }] }],
      discoveryInfo: [{ campaign: 'lan', lastDiscoveryDate: now, identifier: `d${i}` }],
    }, now);
    await db.knex('inv_certificates').insert({ tenant: 'default', ...record.main });
    written.push({ id: record.id, pem, main: record.main });
  }
  const other = written[2]!;
  await db.knex('inv_certificates').where({ id: other.id }).update({ tenant: 'other' });

  const applied = await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  t.ok(applied.includes('0010_certificate_documents'), '0010 applied');
  t.notOk(await db.knex.schema.hasColumn('inv_certificates', 'pem'), 'after: no PEM in the main table');
  t.notOk(await db.knex.schema.hasColumn('inv_certificates', 'discovery_data'), 'nor the JSON lists');
  const documents = (await db.knex('inv_certificate_documents').orderBy('certificate_id')) as { certificate_id: string; tenant: string; pem: string }[];
  t.same(
    documents.map((d) => [d.certificate_id, d.tenant]),
    written.map((w) => [w.id, w === other ? 'other' : 'default']).sort(),
    'one document per certificate, in its tenant',
  );

  const repository = new CertificateRepository(db.knex, () => now);
  for (const w of written) {
    const tenant = w === other ? 'other' : 'default';
    const object = await repository.get(tenant, w.id);
    t.equal(object?.certificate, w.pem, `${w.id}: the PEM reads back`);
    t.same(object?.discoveryData, JSON.parse(w.main.discovery_data!), `${w.id}: discovery data`);
    t.same(object?.discoveryInfo, JSON.parse(w.main.discovery_info!), `${w.id}: discovery info`);
    t.same(object?.thirdPartyData ?? [], w.main.third_party_data ? JSON.parse(w.main.third_party_data) : [], `${w.id}: third-party data`);
    t.equal(object?.owner, 'alice');
    t.same(object?.subjectAlternateNames, [], 'the old rows had no SAN side rows written here');
  }
  t.equal(await repository.get('default', other.id), null, 'tenants stay apart');

  // And the repository writes the new layout.
  const pem = toPem(acme.issueForKey(spki, { subject: 'CN=new', sans: [], notBefore: now - DAY, notAfter: now + DAY }));
  const created = await repository.insert('default', { certificate: pem, triggerResults: [] });
  t.equal((await repository.get('default', created._id))?.certificate, pem, 'a certificate written after 0010 reads back');
});
