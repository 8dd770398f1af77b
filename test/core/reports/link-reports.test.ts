/**
 * Link reports end to end (issue 30 item 3): a `report` task with reportType link_email, run through the task
 * routes against a real SMTP server, stores the CSV of its query in the reports storage, mails its link, and
 * the report routes list, download and delete it; expired reports answer 404 and are purged. Both built-in
 * storage types. Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { REPORT_PURGE_JOB } from '../../../core/reports/index.js';
import { ADMIN_HEADERS, login } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { LINK, LINK_TASK, PUBLIC_BASE, reportKernel, type Json } from './harness.js';

const { kernel, smtp, certs, admin, run } = await reportKernel(t);
const knex = kernel.db.knex;
const DAY = 86_400_000;
const expected = ['_id,dn,notAfter,team', `${certs.get('soon')!._id},CN=soon.example.com,${new Date(certs.get('soon')!.notAfter).toISOString()},pki`];
const csvLines = (body: string | Buffer) => body.toString().trim().split('\r\n');
const file = (uuid: string, ext: string) => join(kernel.config.dataDir, 'storages', 'default', 'reports', `${uuid}${ext}`);

t.equal((await admin('POST', '/api/v1/scheduler/tasks/', LINK_TASK)).statusCode, 201, 'a link_email report task is saved');

let first = '';

t.test('a run stores the CSV of the query in the default (filesystem) storage and mails its link', async (t) => {
  const before = Date.now();
  const result = await run('expiring');
  t.match(result, { status: 'success', summary: /^report of 1 certificate\(s\) stored \(.*\), its link sent to 1 recipient\(s\)$/ });
  const uuid = String(result.details!.report);
  first = uuid;
  t.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a random (v4) uuid');

  await until('the message', () => smtp.delivered.length === 1);
  const mail = smtp.delivered[0]!;
  t.same(mail.envelope.to, ['pki-team@example.com']);
  t.equal(mail.parsed.subject, 'Expiring certificates');
  t.same(mail.parsed.attachments, [], 'no attachment: the message carries a link');
  t.equal(LINK.exec(mail.parsed.text ?? '')?.[1], uuid, `the link is ${PUBLIC_BASE}/reports/<uuid> (pki.publicBaseUrl)`);
  t.match(mail.parsed.text, /1 certificate\(s\) match the query valid\.until before 30d/);
  t.match(mail.parsed.text, /sign-in required/);

  const row = (await knex('reports').where({ uuid }).first()) as Json;
  t.match(row, { tenant: 'default', name: 'expiring', file_name: 'expiring.csv', content_type: 'text/csv', storage: 'default', storage_key: `reports/${uuid}.csv` });
  t.equal(Number(row.row_count), 1);
  t.ok(Number(row.created_at) >= before, 'created now');
  t.equal(Number(row.expires_at) - Number(row.created_at), 7 * DAY, 'kept its retentionPeriod, 7 days');
  t.ok(existsSync(file(uuid, '.csv')), 'the file is in <dataDir>/storages/default/reports/');

  const download = await admin('GET', `/reports/${uuid}`);
  t.equal(download.statusCode, 200, download.body);
  t.equal(download.headers['content-type'], 'text/csv; charset=utf-8');
  t.equal(download.headers['content-disposition'], 'attachment; filename="expiring.csv"');
  t.equal(download.headers['cache-control'], 'no-store');
  t.same(csvLines(download.body), expected, 'the link downloads the CSV of the query: the matching certificate, the hqlFields columns');
  t.equal(Number(download.headers['content-length']), Number(row.size));

  // The mailed link, as a browser signed in with a session cookie follows it.
  const session = await login(kernel, ADMIN_HEADERS);
  const browser = await kernel.app.inject({ method: 'GET', url: new URL(LINK.exec(mail.parsed.text ?? '')![0]).pathname, headers: { host: 'localhost', cookie: session.cookie } });
  t.equal(browser.statusCode, 200, 'a signed-in browser follows the link');
  t.same(csvLines(browser.body), expected);
});

let gzipped = '';

t.test('compressCsv in the database storage: the gzip variant, read where it was written', async (t) => {
  t.equal((await admin('POST', '/api/v1/system/storages/', { name: 'db', type: 'database' })).statusCode, 201);
  t.equal((await admin('PUT', '/api/v1/system/configuration/', { type: 'storage', magicLinkReportStorage: 'db' })).statusCode, 200);
  const current = (await admin('GET', '/api/v1/scheduler/tasks/expiring')).json() as Json;
  const saved = await admin('PUT', '/api/v1/scheduler/tasks/', { ...current, compressCsv: true, fileName: 'inventory', hqlQuery: null, hqlSortedBy: [{ element: 'dn', order: 'Asc' }] });
  t.equal(saved.statusCode, 200, saved.body);

  const result = await run('expiring');
  t.equal(result.status, 'success', result.summary);
  const uuid = String(result.details!.report);
  gzipped = uuid;
  await until('the message', () => smtp.delivered.length === 2);
  t.equal(LINK.exec(smtp.delivered[1]!.parsed.text ?? '')?.[1], uuid);
  t.match(await knex('reports').where({ uuid }).first(), { storage: 'db', storage_key: `reports/${uuid}.csv.gz`, file_name: 'inventory.csv.gz', content_type: 'application/gzip' });
  t.ok((await knex('storage_blobs').where({ tenant: 'default', storage: 'db', blob_key: `reports/${uuid}.csv.gz` })).length >= 1, 'stored as rows of storage_blobs');
  t.notOk(existsSync(file(uuid, '.csv.gz')), 'not in the filesystem storage');

  // Reports go back to the default storage: this one is still read from the database.
  t.equal((await admin('PUT', '/api/v1/system/configuration/', { type: 'storage', magicLinkReportStorage: null })).statusCode, 200);
  const download = await admin('GET', `/reports/${uuid}`);
  t.equal(download.statusCode, 200, download.body);
  t.equal(download.headers['content-type'], 'application/gzip');
  t.equal(download.headers['content-disposition'], 'attachment; filename="inventory.csv.gz"');
  const lines = csvLines(gunzipSync(download.rawPayload));
  t.equal(lines.length, 3, 'a header and both certificates (no query)');
  t.match(lines[0], /^_id,dn,notAfter,team$/);
  t.same(lines.slice(1).map((l) => l.split(',')[1]), ['CN=later.example.com', 'CN=soon.example.com'], 'sorted by dn');
});

t.test('list and list by report name: metadata only, newest first', async (t) => {
  const all = await admin('GET', '/api/v1/reports/');
  t.equal(all.statusCode, 200, all.body);
  const listed = all.json() as Json[];
  t.same(listed.map((r) => r.uuid), [gzipped, first], 'newest first');
  t.match(listed[1], { _id: first, name: 'expiring', fileName: 'expiring.csv', contentType: 'text/csv', rows: 1, link: `${PUBLIC_BASE}/reports/${first}` });
  t.type(listed[1]!.size, 'number');
  t.equal(Number(listed[1]!.expiresAt) - Number(listed[1]!.createdAt), 7 * DAY);
  for (const r of listed) t.notOk('storageKey' in r || 'content' in r || 'storage' in r, 'where it is stored is not answered');

  const byName = await admin('GET', '/api/v1/reports/expiring');
  t.equal(byName.statusCode, 200);
  t.same((byName.json() as Json[]).map((r) => r.uuid), [gzipped, first]);
  t.same((await admin('GET', '/api/v1/reports/other-task')).json(), [], 'another name: none');
});

t.test('DELETE removes the row and the stored file; a deleted report answers 404', async (t) => {
  const removed = await admin('DELETE', `/api/v1/reports/${gzipped}`);
  t.equal(removed.statusCode, 204, removed.body);
  t.equal((await knex('reports').where({ uuid: gzipped })).length, 0, 'the row is gone');
  t.equal((await knex('storage_blobs').where({ storage: 'db' }).where('blob_key', 'like', 'reports/%')).length, 0, 'its blob rows are gone');
  const gone = await admin('GET', `/reports/${gzipped}`);
  t.equal(gone.statusCode, 404);
  t.match(gone.headers['content-type'], /^application\/problem\+json/);
  t.match(gone.json(), { error: 'REPORT-003', status: 404 });
  t.match((await admin('DELETE', `/api/v1/reports/${gzipped}`)).json(), { error: 'REPORT-003' }, 'twice: 404');
  t.match((await admin('GET', '/reports/not-a-uuid')).json(), { error: 'REPORT-003' }, 'not a uuid: 404');
  t.same(((await admin('GET', '/api/v1/reports/')).json() as Json[]).map((r) => r.uuid), [first]);
});

t.test('an expired report answers 404 at once, and the purge job deletes it and its file', async (t) => {
  await knex('reports').where({ uuid: first }).update({ expires_at: Date.now() - 1 });
  t.match((await admin('GET', `/reports/${first}`)).json(), { error: 'REPORT-003' }, 'the download: 404');
  t.same((await admin('GET', '/api/v1/reports/')).json(), [], 'not listed');
  t.same((await admin('GET', '/api/v1/reports/expiring')).json(), [], 'nor by name');
  t.match((await admin('DELETE', `/api/v1/reports/${first}`)).json(), { error: 'REPORT-003' }, 'nor deleted by hand');
  t.ok(existsSync(file(first, '.csv')), 'its file waits for the purge');

  await kernel.scheduler.now(REPORT_PURGE_JOB, {}, { tenant: 'default' });
  await until('the purge', async () => (await knex('reports').where({ uuid: first })).length === 0);
  t.notOk(existsSync(file(first, '.csv')), 'the purge removed the file');
});

t.test('retentionPeriod: link_email only, a duration, within bounds (SCHED-002)', async (t) => {
  const problems: [string, Json, RegExp][] = [
    ['on an attachment report', { reportType: 'attachment_email' }, /^retentionPeriod: applies to link_email reports only/],
    ['not a duration', { retentionPeriod: 'forever' }, /^retentionPeriod: "forever" is not a duration/],
    ['too short', { retentionPeriod: '30 seconds' }, /^retentionPeriod: must be between 1 minute and 3650 days/],
  ];
  for (const [what, change, message] of problems) {
    const res = await admin('POST', '/api/v1/scheduler/tasks/', { ...LINK_TASK, name: 'refused', ...change });
    t.equal(res.statusCode, 400, `${what}: 400`);
    t.match(res.json(), { error: 'SCHED-002', message }, what);
  }
  const defaulted = await admin('POST', '/api/v1/scheduler/tasks/', { ...LINK_TASK, name: 'defaulted', retentionPeriod: null });
  t.equal(defaulted.statusCode, 201, 'no retentionPeriod: the default');
  const result = await run('defaulted');
  t.equal(Number(result.details!.expiresAt) - Number((await knex('reports').where({ uuid: result.details!.report }).first()).created_at), 30 * DAY, '30 days');
});
