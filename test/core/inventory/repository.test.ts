import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { CertificateIssuer } from '../../../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import { toPem } from '../../../core/pki/input.js';
import { parseCertificate } from '../../../core/pki/x509/parse.js';
import { CertificateRepository, COLUMNS_FOR, DOCUMENT_COLUMNS_FOR, inventoryTeamMigrated, prepare, type CertificateRow } from '../../../core/inventory/repository.js';
import { cut, facetRows, recordOf, SEARCH_KEY_LENGTH, sanKeys } from '../../../core/inventory/record.js';
import { objectOf } from '../../../core/inventory/view.js';
import type { CertificateInput } from '../../../core/inventory/types.js';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel } from '../../helpers/kernel.js';
import { rowCounts } from './fixtures.js';

const DAY = 86_400_000;

/** `count` real certificates (one CA, one leaf key) with SANs, labels, metadata and discovery data. */
function certificates(count: number, now = Date.now()): { der: Uint8Array; input: Omit<CertificateInput, 'certificate'> }[] {
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caDer = selfSignedCertificate(ca.privateKey, { subject: 'CN=Repository Test CA,O=Certwright', notBefore: now - DAY, notAfter: now + 1000 * DAY });
  const issuer = new CertificateIssuer({ caCertificateDer: caDer, caKey: ca.privateKey });
  const leaf = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = new Uint8Array(leaf.publicKey.export({ type: 'spki', format: 'der' }));
  const out = [];
  for (let i = 0; i < count; i++) {
    const der = issuer.issueForKey(spki, {
      subject: `CN=host${i}.example.com,O=Certwright`,
      sans: [
        { sanType: 'DNSNAME', value: `host${i}.example.com` },
        { sanType: 'DNSNAME', value: `alt${i}.Example.org` },
      ],
      notBefore: now - DAY,
      // Every tenth certificate has expired.
      notAfter: i % 10 === 0 ? now - 1000 : now + (i + 1) * DAY,
    });
    out.push({
      der,
      input: {
        profile: `profile-${i % 3}`,
        team: `team-${i % 5}`,
        owner: `user-${i % 7}`,
        labels: [{ key: 'env', value: i % 2 ? 'prod' : 'dev' }],
        metadata: [{ key: 'seq', value: String(i) }],
        discoveryData: i % 4 === 0 ? [{ ip: '192.0.2.1', hostnames: [`host${i}`], operatingSystems: ['linux'], paths: ['/etc/ssl'], usages: ['tls'], sources: ['scan'], tlsPorts: [{ port: 443, version: 'TLSv1.3' }] }] : null,
        discoveryInfo: i % 4 === 0 ? [{ campaign: 'nightly', lastDiscoveryDate: now }] : null,
      },
    });
  }
  return out;
}

async function repositoryOf(kernel: Kernel): Promise<CertificateRepository> {
  const repository = new CertificateRepository(kernel.db.knex, Date.now);
  await repository.labels.create('default', { name: 'env', regex: 'prod|dev' });
  await repository.labels.create('default', { name: 'app' });
  return repository;
}

t.test('insertMany seeds 2,000 prepared certificates; objectsOf reads them back', async (t) => {
  const kernel = await bootKernel(t);
  const repository = await repositoryOf(kernel);
  const made = certificates(2000);
  const records = made.map((m) => prepare(parseCertificate(m.der), { certificate: '', ...m.input }));
  t.equal(await repository.insertMany('default', records, { batchSize: 700 }), 2000);
  t.same(await rowCounts(kernel), {
    inv_certificates: 2000,
    inv_certificate_sans: 4000,
    inv_certificate_labels: 2000,
    inv_certificate_metadata: 2000,
    // discovery.ip/hostname/os/path/usage/source/tlsport + discovery.campaign for every fourth certificate
    inv_certificate_facets: 500 * 8,
  });

  const ids = [records[0]!.id, records[1]!.id, records[1999]!.id];
  const rows = (await kernel.db.knex('inv_certificates').whereIn('id', ids).select('*')) as CertificateRow[];
  const objects = await repository.objectsOf('default', rows, null);
  for (const [i, object] of objects.entries()) {
    t.same(object, await repository.get('default', rows[i]!.id), 'objectsOf = get');
  }
  const first = (await repository.get('default', records[0]!.id))!;
  t.match(first, {
    module: 'webra',
    profile: 'profile-0',
    team: 'team-0',
    dn: 'CN=host0.example.com,O=Certwright',
    issuer: 'CN=Repository Test CA,O=Certwright',
    selfSigned: false,
    status: 'expired',
    labels: [{ key: 'env', value: 'dev' }],
    metadata: [{ key: 'seq', value: '0' }],
    subjectAlternateNames: [{ sanType: 'DNSNAME', value: 'host0.example.com' }, { sanType: 'DNSNAME', value: 'alt0.Example.org' }],
    discoveryInfo: [{ campaign: 'nightly' }],
    discoveryData: [{ ip: '192.0.2.1', tlsPorts: [{ port: 443 }] }],
    discoveredTrusted: null,
  });
  t.equal((await repository.get('default', records[1]!.id))!.status, 'valid');
  t.equal(await repository.get('another-tenant', records[0]!.id), null, 'tenant-scoped');
  t.equal((await repository.getByThumbprint('default', records[5]!.main.thumbprint.toUpperCase()))!._id, records[5]!.id);

  const facets = (await kernel.db.knex('inv_certificate_facets').where({ certificate_id: records[0]!.id }).orderBy('facet').select('facet', 'value')) as { facet: string; value: string }[];
  t.same(facets, [
    { facet: 'discovery.campaign', value: 'nightly' },
    { facet: 'discovery.hostname', value: 'host0' },
    { facet: 'discovery.ip', value: '192.0.2.1' },
    { facet: 'discovery.os', value: 'linux' },
    { facet: 'discovery.path', value: '/etc/ssl' },
    { facet: 'discovery.source', value: 'scan' },
    { facet: 'discovery.tlsport', value: '443' },
    { facet: 'discovery.usage', value: 'tls' },
  ]);
  t.equal(Number((await kernel.db.knex('inv_certificates').where({ discovered: true }).count({ n: '*' }).first())!.n), 500);

  // A batch holding a certificate already there fails whole, earlier batches stay.
  const again = certificates(3).map((m) => prepare(parseCertificate(m.der), { certificate: '' }));
  const duplicate = prepare(parseCertificate(made[7]!.der), { certificate: '' });
  await t.rejects(repository.insertMany('default', [...again, duplicate], { batchSize: 2 }), { code: 'CRT-004', detail: new RegExp(records[7]!.id) });
  t.equal((await rowCounts(kernel)).inv_certificates, 2002, 'the first batch of two went in, the failing one not');
  const unlabelled = certificates(1).map((m) => prepare(parseCertificate(m.der), { certificate: '', labels: [{ key: 'nope', value: 'x' }] }));
  await t.rejects(repository.insertMany('default', unlabelled), { code: 'LBL-006', message: /Label element nope is not authorized/ });
});

t.test('objectsOf with a projection reads only the columns and side tables it needs', async (t) => {
  const kernel = await bootKernel(t);
  const repository = await repositoryOf(kernel);
  const records = certificates(20).map((m) => prepare(parseCertificate(m.der), { certificate: '', ...m.input }));
  await repository.insertMany('default', records);

  t.same(COLUMNS_FOR(new Set(['dn', 'notAfter'])).sort(), ['dn', 'id', 'not_after']);
  t.same(COLUMNS_FOR(new Set(['labels', 'subjectAlternateNames'])), ['id'], 'side properties need only the id');
  t.same(COLUMNS_FOR(new Set(['status'])).sort(), ['id', 'not_after', 'revoked']);
  t.same(COLUMNS_FOR(new Set(['certificate'])), ['id'], 'the PEM is not in the main table');
  t.same(DOCUMENT_COLUMNS_FOR(new Set(['certificate'])), ['pem'], 'but in the documents');
  t.same(DOCUMENT_COLUMNS_FOR(new Set(['dn', 'status', 'labels', 'module'])), [], 'no document unless a document property is asked for');
  t.ok(COLUMNS_FOR(null).includes('not_after') && !COLUMNS_FOR(null).includes('pem'), 'null: every main column');
  t.ok(DOCUMENT_COLUMNS_FOR(null).includes('pem') && DOCUMENT_COLUMNS_FOR(null).includes('discovery_info'), 'null: every document column');

  const queries: string[] = [];
  const listen = (q: { sql: string }) => {
    if (q.sql.includes('inv_')) queries.push(q.sql);
  };
  kernel.db.knex.on('query', listen);
  t.teardown(() => void kernel.db.knex.removeListener('query', listen));

  const select = async (fields: Set<string>) => {
    const rows = (await kernel.db.knex('inv_certificates').where({ tenant: 'default' }).orderBy('id').limit(10).select(COLUMNS_FOR(fields))) as CertificateRow[];
    queries.length = 0;
    return repository.objectsOf('default', rows, fields);
  };

  const scalars = await select(new Set(['dn', 'notAfter', 'status']));
  t.equal(scalars.length, 10);
  t.same(Object.keys(scalars[0]!), ['_id', 'dn', 'notAfter', 'status'], 'only the fields asked for, plus _id');
  t.type(scalars[0]!.notAfter, 'number');
  t.same(queries, [], 'no side table read');

  const labelled = await select(new Set(['labels']));
  t.same(Object.keys(labelled[0]!), ['_id', 'labels']);
  t.equal(queries.length, 1, 'one query for the labels of the whole page');
  t.match(queries[0], /inv_certificate_labels/);
  t.match(queries[0], /in \(/i);

  const all = await select(new Set(['subjectAlternateNames', 'labels', 'metadata', 'certificate']));
  t.equal(queries.length, 4, 'one query per side table, and one for the documents (the PEM)');
  t.equal(queries.filter((q) => q.includes('inv_certificate_documents')).length, 1);
  t.match(all[0]!.certificate, /^-----BEGIN CERTIFICATE-----/);
  t.equal(all[0]!.subjectAlternateNames.length, 2);
  t.equal(all[0]!.metadata.length, 1);
  t.same(await repository.objectsOf('default', [], null), []);
});

t.test('update rewrites the side rows it concerns, in one transaction', async (t) => {
  const kernel = await bootKernel(t);
  const repository = await repositoryOf(kernel);
  const [made] = certificates(1);
  const cert = await repository.insert('default', { certificate: toPem(made!.der), ...made!.input });
  t.match(cert, { _id: /^[0-9a-f]{24}$/, labels: [{ key: 'env', value: 'dev' }], discoveryInfo: [{ campaign: 'nightly' }] });
  const facetsOf = async () =>
    ((await kernel.db.knex('inv_certificate_facets').where({ certificate_id: cert._id }).orderBy(['facet', 'value']).select('facet', 'value')) as { facet: string; value: string }[]).map(
      (f) => `${f.facet}=${f.value}`,
    );

  const now = Date.now();
  const updated = await repository.update('default', cert._id, {
    owner: 'bob',
    team: null,
    labels: [{ key: 'app', value: 'shop' }, { key: 'env', value: 'prod' }],
    metadata: [],
    revoked: true,
    revocationDate: now,
    revocationReason: 'superseded',
    triggerResults: [{ name: 'notify', event: 'revoke', triggerType: 'email', lastExecutionDate: now, status: 'failure', retryable: true }],
    thirdPartyData: [{ connector: 'aws', id: 'arn:1' }],
    discoveryInfo: null,
  });
  t.match(updated, { owner: 'bob', revoked: true, revocationDate: now, revocationReason: 'superseded', status: 'revoked', metadata: [], labels: [{ key: 'app', value: 'shop' }, { key: 'env', value: 'prod' }] });
  t.notOk('team' in updated, 'null clears');
  t.notOk('discoveryInfo' in updated);
  t.same(await facetsOf(), [
    'discovery.hostname=host0',
    'discovery.ip=192.0.2.1',
    'discovery.os=linux',
    'discovery.path=/etc/ssl',
    'discovery.source=scan',
    'discovery.tlsport=443',
    'discovery.usage=tls',
    'thirdparty.connector=aws',
    'thirdparty.id=arn:1',
    'trigger.name=notify',
    'trigger.status=failure',
  ], 'discovery data untouched, campaign gone, third party and trigger facets added');
  t.same(await repository.get('default', cert._id), updated);
  t.equal((await kernel.db.knex('inv_certificates').where({ id: cert._id }).first()).discovered ? 1 : 0, 0, 'no discovery info: not discovered');

  const before = await rowCounts(kernel);
  await t.rejects(repository.update('default', cert._id, { labels: [{ key: 'ghost', value: 'x' }], owner: 'mallory' }), { code: 'LBL-006' });
  await t.rejects(repository.update('default', cert._id, { owner: 'x'.repeat(192) }), { code: 'CRT-002' });
  await t.rejects(repository.update('default', '0123456789abcdef01234567', { owner: 'x' }), { code: 'CRT-003' });
  await t.rejects(repository.update('other-tenant', cert._id, { owner: 'x' }), { code: 'CRT-003' });
  t.same(await rowCounts(kernel), before);
  t.equal((await repository.get('default', cert._id))!.owner, 'bob', 'refused updates changed nothing');

  // Team migration: the repository method, and the security core's listener form.
  t.equal(await repository.onTeamMigrated('default', 'bob-team', 'x'), 0);
  await repository.update('default', cert._id, { team: 'blue' });
  t.equal(await repository.onTeamMigrated('default', 'blue', 'green'), 1);
  t.equal((await repository.get('default', cert._id))!.team, 'green');
  await kernel.db.knex.transaction((trx) => inventoryTeamMigrated(trx, { tenant: 'default', previousTeam: 'green', newTeam: 'red', mode: 'renamed', members: [] }));
  t.equal((await repository.get('default', cert._id))!.team, 'red');
});

t.test('record and view: search keys, facets, coercion of driver values', async (t) => {
  const long = `${'a'.repeat(600)}.example.com`;
  const keys = sanKeys(long.toUpperCase());
  t.equal(keys.lc.length, SEARCH_KEY_LENGTH);
  t.ok(keys.lc.startsWith('aaa'));
  t.equal(keys.rev.length, SEARCH_KEY_LENGTH);
  t.ok(keys.rev.startsWith('moc.elpmaxe.aaa'), 'the reversed key keeps the suffix');
  t.equal(cut('ab\u{1F600}', 3), 'ab', 'never splits a surrogate pair');
  t.same(sanKeys('Ünïcode.Example'), { lc: 'ünïcode.example', rev: 'elpmaxe.edocïnü' });

  t.same(facetRows('triggerResults', [
    { name: 'a', status: 'success' },
    { name: 'b', status: 'success' },
    { name: 'a', status: 'failure' },
  ]), [
    { facet: 'trigger.name', value: 'a' },
    { facet: 'trigger.status', value: 'success' },
    { facet: 'trigger.name', value: 'b' },
    { facet: 'trigger.status', value: 'failure' },
  ], 'each (facet, value) once');
  t.same(facetRows('discoveryData', null), []);

  const [made] = certificates(1);
  const info = parseCertificate(made!.der);
  const record = recordOf(info, { certificate: '', contactEmail: '', owner: null, discoveredTrusted: true }, { id: 'a'.repeat(24), now: 5 });
  t.equal(record.main.contact_email, null, '"" is none');
  t.equal(record.main.module, 'discovery', 'no profile: discovery');
  t.equal(record.main.discovered_trusted, true);
  t.match(record.main.dn_key, /^[0-9a-f]{64}$/);
  t.throws(() => recordOf(info, { certificate: '', labels: [{ key: 'env', value: 'a' }, { key: 'env', value: 'b' }] }, { id: 'a'.repeat(24), now: 5 }), { code: 'LBL-006' });
  t.throws(() => recordOf(info, { certificate: '', team: 't'.repeat(192) }, { id: 'a'.repeat(24), now: 5 }), { code: 'CRT-002' });

  // What MySQL / SQLite drivers hand back: BIGINT as string, booleans as 0/1, JSON as text.
  const object = objectOf(
    {
      id: 'b'.repeat(24),
      module: 'webra',
      profile: null,
      not_before: '1700000000000',
      not_after: 1800000000000,
      revoked: 0,
      self_signed: 1,
      escrowed: '0',
      discovered_trusted: null,
      revocation_date: null,
      trigger_results: '[{"name":"t"}]',
      grades: null,
    },
    {},
    null,
    1750000000000,
  );
  t.same(object, {
    _id: 'b'.repeat(24),
    module: 'webra',
    selfSigned: true,
    notBefore: 1700000000000,
    notAfter: 1800000000000,
    revoked: false,
    subjectAlternateNames: [],
    labels: [],
    metadata: [],
    escrowed: false,
    triggerResults: [{ name: 't' }],
    discoveredTrusted: null,
    status: 'valid',
  });
});

t.test('insert in a failing transaction leaves nothing behind', async (t) => {
  const kernel = await bootKernel(t);
  const repository = await repositoryOf(kernel);
  const [made] = certificates(1);
  const before = await rowCounts(kernel);
  await t.rejects(
    kernel.db.knex.transaction(async (trx) => {
      await repository.insert('default', { certificate: toPem(made!.der), ...made!.input }, { trx });
      throw new Error('the enrollment failed after the insert');
    }),
    /enrollment failed/,
  );
  t.same(await rowCounts(kernel), before);
  const cert = await repository.insert('default', { certificate: toPem(made!.der) });
  await t.rejects(repository.insert('default', { certificate: toPem(made!.der) }), { code: 'CRT-004', detail: new RegExp(cert._id) });
});
