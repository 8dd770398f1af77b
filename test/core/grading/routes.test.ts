/**
 * The grading routes on a booted kernel (SQLite, and MariaDB with TEST_DATABASE_URL): the built-in policies and
 * rulesets, explain by URL-encoded PEM, by _id, by JSON, raw and multipart bodies; a run over a seeded inventory
 * storing grades that `grade equals "F"` finds and aggregates, an event when a grade changes on a later run;
 * errors and access (404 GRADING-003, 400 GRADING-002, 401, 403, wrong host 404).
 */
import t from 'tap';
import type { GradingJobs } from '../../../core/grading/jobs.js';
import type { InventoryContext } from '../../../core/inventory/index.js';
import { seedInventory } from '../../helpers/inventory-seed.js';
import { bootKernel } from '../../helpers/kernel.js';
import { openssl } from '../../helpers/openssl.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { opensslCertificate } from './openssl-certs.js';

const POLICIES = '/api/v1/certificate/grading/policies';
const RULESETS = '/api/v1/certificate/grading/rulesets';
const POLICY = 'Certwright-Grading-Policy';
const kernel = await bootKernel(t);
const admin = caller(kernel, ADMIN_HEADERS);
const ossl = openssl(t);
const rsa1024 = opensslCertificate(ossl, 'rsa1024', 'rsa:1024');
const rsa2048 = opensslCertificate(ossl, 'rsa2048', 'rsa:2048');

t.test('policies and rulesets: the built-ins, read-only', async (t) => {
  const list = await admin('GET', `${POLICIES}/`);
  t.equal(list.statusCode, 200, list.body);
  t.equal(list.headers['content-type'], 'application/json');
  t.same(list.json().map((p: { name: string }) => p.name), [POLICY, 'Certwright-PQC-Readiness']);
  const one = await admin('GET', `${POLICIES}/${POLICY}`);
  t.match(one.json(), { _id: /^[0-9a-f]{24}$/, name: POLICY, description: [{ lang: 'en' }], rulesets: [{ ruleset: 'key-type-and-size', weight: 3 }] });
  const rulesets = await admin('GET', `${RULESETS}/`);
  t.same(rulesets.json().map((r: { name: string }) => r.name), ['key-type-and-size', 'signature-algorithm', 'cabf-validity', 'san-presence', 'extended-key-usage', 'pqc-readiness']);
  const san = await admin('GET', `${RULESETS}/san-presence`);
  t.match(san.json(), { name: 'san-presence', scope: null, rules: [{ name: 'san-present', condition: 'san exists', conditionLanguage: 'HCQL', score: 2, grade: 'D', description: [{ lang: 'en' }] }] });
  t.equal((await admin('POST', `${POLICIES}/`, { name: 'x', rulesets: [] })).statusCode, 404, 'no writes: the spec lists GET routes only');
});

t.test('explain: URL-encoded PEM, JSON, raw and multipart bodies', async (t) => {
  const byPath = await admin('GET', `${POLICIES}/${POLICY}/explain/${encodeURIComponent(rsa1024)}`);
  t.equal(byPath.statusCode, 200, byPath.body);
  const e = byPath.json();
  t.match(e, { name: POLICY, grade: 'F', certificate: /^-----BEGIN CERTIFICATE-----/ });
  const rule = e.explained[0].explained[0];
  t.match(rule, { name: 'key-strength', apply: true, eval: false, result: 'fail', grade: 'F', obtained: 0, message: /^rsa-1024: a 1024-bit RSA key is below the 2048-bit minimum/ });
  const unencodedSlashes = await admin('GET', `${POLICIES}/${POLICY}/explain/${encodeURIComponent(rsa1024).replace(/%2F/g, '/')}`);
  t.equal(unencodedSlashes.json().grade, 'F', 'a PEM whose slashes were not encoded');

  const json = await admin('POST', `${POLICIES}/${POLICY}/explain`, { certificate: rsa2048 });
  t.equal(json.statusCode, 200, json.body);
  t.match(json.json(), { grade: 'A', score: 100 });
  const text = await kernel.app.inject({ method: 'POST', url: `${POLICIES}/${POLICY}/explain`, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': 'text/plain' }, payload: rsa1024 });
  t.equal(text.json().grade, 'F');
  const boundary = 'grading-boundary';
  const multipart = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="x509"; filename="c.pem"\r\nContent-Type: application/x-pem-file\r\n\r\n${rsa1024}\r\n--${boundary}--\r\n`);
  const upload = await kernel.app.inject({ method: 'POST', url: `${POLICIES}/${POLICY}/explain`, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: multipart });
  t.equal(upload.statusCode, 200, upload.body);
  t.equal(upload.json().grade, 'F', 'horizon-go GradingPolicyExplainFile: multipart part x509');

  const ruleset = await admin('GET', `${RULESETS}/key-type-and-size/explain/${encodeURIComponent(rsa1024)}`);
  t.match(ruleset.json(), { name: 'key-type-and-size', grade: 'F', max: 4, obtained: 1, score: 25, certificate: /BEGIN CERTIFICATE/ });
  const rulesetPost = await admin('POST', `${RULESETS}/pqc-readiness/explain`, { pem: rsa2048 });
  t.match(rulesetPost.json(), { grade: 'C', explained: [{ name: 'pq-public-key', result: 'fail', message: /^rsa-2048: quantum-vulnerable/ }] });
});

t.test('errors: unknown policy 404, bad PEM 400, problem+json with stable codes', async (t) => {
  const unknown = await admin('GET', `${POLICIES}/nope/explain/${encodeURIComponent(rsa2048)}`);
  t.equal(unknown.statusCode, 404);
  t.match(unknown.headers['content-type'], /^application\/problem\+json/);
  t.match(unknown.json(), { error: 'GRADING-003', status: 404 });
  t.match((await admin('GET', `${POLICIES}/nope`)).json(), { error: 'GRADING-003' });
  t.match((await admin('GET', `${RULESETS}/nope`)).json(), { error: 'GRADING-003' });
  t.match((await admin('GET', `${POLICIES}/nope/run`)).json(), { error: 'GRADING-003' });
  const bad = await admin('GET', `${POLICIES}/${POLICY}/explain/${encodeURIComponent('-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----')}`);
  t.equal(bad.statusCode, 400);
  t.match(bad.headers['content-type'], /^application\/problem\+json/);
  t.match(bad.json(), { error: 'GRADING-002', status: 400, detail: /./ });
  t.match((await admin('POST', `${POLICIES}/${POLICY}/explain`, { certificate: 'garbage' })).json(), { error: 'GRADING-002' });
  t.match((await admin('POST', `${POLICIES}/${POLICY}/explain`, {})).json(), { error: 'GRADING-002' });
  t.match((await admin('GET', `${POLICIES}/${POLICY}/explain/0123456789abcdef01234567`)).json(), { error: 'GRADING-004', status: 404 });
});

t.test('access: 401, 403, read vs write, wrong host 404', async (t) => {
  const url = `${POLICIES}/${POLICY}/explain/${encodeURIComponent(rsa2048)}`;
  const anonymous = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { error: 'SEC-AUTH-001' });
  const nobody = await createPrincipal(kernel, 'grading-nobody');
  const refused = await caller(kernel, nobody.headers)('GET', url);
  t.equal(refused.statusCode, 403);
  t.match(refused.json(), { error: 'SEC-PERM-001' });
  const reader = await createPrincipal(kernel, 'grading-reader', { permissions: [{ value: 'configuration:grading:read' }] });
  const asReader = caller(kernel, reader.headers);
  t.equal((await asReader('GET', url)).statusCode, 200);
  t.equal((await asReader('GET', `${RULESETS}/`)).statusCode, 200);
  const run = await asReader('GET', `${POLICIES}/${POLICY}/run`);
  t.equal(run.statusCode, 403, 'run needs configuration:grading:write');
  t.match(run.json(), { error: 'SEC-PERM-001' });
  const wrongHost = await kernel.app.inject({ method: 'GET', url, headers: { host: 'evil.example', ...ADMIN_HEADERS } });
  t.equal(wrongHost.statusCode, 404);
  t.match(wrongHost.json(), { error: 'HTTP-001' });
});

t.test('run: grades stored on the inventory, searchable and aggregatable; a changed grade raises an event', async (t) => {
  const seeded = await seedInventory(kernel, [
    { name: 'good', subject: 'CN=good.example', sans: [{ sanType: 'DNSNAME', value: 'good.example' }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 89 },
    { name: 'nosan', subject: 'CN=nosan.example', issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 89 },
    { name: 'long', subject: 'CN=long.example', sans: [{ sanType: 'DNSNAME', value: 'long.example' }], issuer: 'corp', key: 'rsa', notBefore: -1, notAfter: 399 },
  ]);
  const inventory = kernel.container.resolve<InventoryContext>('inventory');
  const weak = await inventory.repository.insert('default', { certificate: rsa1024 });
  // Events answer their payload as Horizon's details, [{key, value}] with string values.
  const events = async (code: string) =>
    ((await admin('POST', '/api/v1/events/search', { query: `code equals "${code}"`, pageIndex: 1, pageSize: 100 })).json().results as { objectId: string; status: string; principal: string; details: { key: string; value: string }[] }[]).map((e) => ({
      ...e,
      payload: Object.fromEntries(e.details.map((d) => [d.key, d.value])),
    }));
  const completed = async () => (await events('GRADING-RUN-COMPLETED')).length;

  const run = await admin('GET', `${POLICIES}/${POLICY}/run`);
  t.equal(run.statusCode, 204, run.body);
  t.equal(run.body, '');
  await until('the first grading run', async () => (await completed()) === 1, 30_000, 200);
  const [summary] = await events('GRADING-RUN-COMPLETED');
  t.match(summary, { principal: 'administrator', payload: { policy: POLICY, graded: '4', changed: '0', unreadable: '0' } });
  t.equal((await events('CERTIFICATE-GRADE-CHANGED')).length, 0, 'a first grade is no change');

  const search = async (query: string) => (await admin('POST', '/api/v1/certificates/search', { query, fields: ['grade', 'grades'], pageIndex: 1, pageSize: 100 })).json().results as { _id: string; grade: string; grades: { policy: string; grade: string; failed: { rule: string; message: string }[] }[] }[];
  const failing = await search('grade equals "F"');
  t.same(failing.map((c) => c._id), [weak._id], 'grade equals "F" finds the RSA-1024 certificate');
  t.match(failing[0]!.grades, [{ policy: POLICY, grade: 'F', failed: [{ rule: 'key-strength', message: /1024-bit RSA key/ }] }]);
  t.same((await search('grade equals "D"')).map((c) => c._id).sort(), [seeded.get('nosan')!._id, seeded.get('long')!._id].sort());
  // The seed helper's certificates carry no extendedKeyUsage: C (server-auth), the worst thing about "good".
  const good = await search('grade = "C"');
  t.same(good.map((c) => c._id), [seeded.get('good')!._id]);
  t.match(good[0]!.grades, [{ policy: POLICY, grade: 'C', failed: [{ rule: 'server-auth', message: /^no extendedKeyUsage extension/ }] }]);
  const aggregate = await admin('POST', '/api/v1/certificates/aggregate', { query: '', groupBy: ['grade'] });
  t.equal(aggregate.statusCode, 200, aggregate.body);
  const counts = Object.fromEntries((aggregate.json().items as { _id: { grade: string }; count: number }[]).map((i) => [i._id.grade, i.count]));
  t.same(counts, { C: 1, D: 2, F: 1 }, 'aggregated by grade');

  // The record of a previous run said A (say, before the rules tightened): the next run gives F and says so.
  const stored = (await inventory.repository.get('default', weak._id))!;
  await inventory.repository.update('default', weak._id, { grade: 'A', grades: (stored.grades as { grade: string }[]).map((g) => ({ ...g, grade: 'A' })) });
  t.same((await search('grade equals "F"')).length, 0);
  const jobs = kernel.container.resolve<GradingJobs>('grading');
  const again = await admin('GET', `${POLICIES}/${POLICY}/run`);
  t.equal(again.statusCode, 204);
  await until('the second grading run', async () => (await completed()) === 2, 30_000, 200);
  const changed = await events('CERTIFICATE-GRADE-CHANGED');
  t.equal(changed.length, 1, 'one certificate changed grade');
  t.match(changed[0], { objectId: weak._id, status: 'warning', principal: 'administrator', payload: { policy: POLICY, previous: 'A', grade: 'F', failed: '["key-type-and-size/key-strength"]' } });
  t.same((await search('grade equals "F"')).map((c) => c._id), [weak._id]);

  // A third run (in process, the job's body) changes nothing: no write, no event.
  t.match(await jobs.run('default', POLICY, null), { graded: 4, changed: 0 });
  t.equal((await events('CERTIFICATE-GRADE-CHANGED')).length, 1);

  // The PQC policy's grades sit beside: the worst over both policies is stored.
  await jobs.run('default', 'Certwright-PQC-Readiness', null);
  const long = (await search(`id equals "${seeded.get('long')!._id}"`))[0]!;
  t.equal(long.grade, 'D', 'D under the TLS policy, C (quantum-vulnerable) under PQC readiness: the worst is kept');
  t.same(long.grades.map((g) => [g.policy, g.grade]), [[POLICY, 'D'], ['Certwright-PQC-Readiness', 'C']]);
  t.same((await search('grade equals "A"')).length, 0, 'every seeded key is classical');
});

t.test('explain by _id: the inventory certificate, within the caller\'s search permission', async (t) => {
  const id = (await admin('POST', '/api/v1/certificates/search', { query: 'keytype equals "rsa-1024"', pageIndex: 1, pageSize: 1 })).json().results[0]._id as string;
  const byId = await admin('GET', `${POLICIES}/${POLICY}/explain/${id}`);
  t.equal(byId.statusCode, 200, byId.body);
  t.match(byId.json(), { grade: 'F', certificate: /BEGIN CERTIFICATE/ });
  t.match((await admin('POST', `${POLICIES}/${POLICY}/explain`, { id })).json(), { grade: 'F' });
  const reader = await createPrincipal(kernel, 'grading-reader-2', { permissions: [{ value: 'configuration:grading:read' }] });
  const refused = await caller(kernel, reader.headers)('GET', `${POLICIES}/${POLICY}/explain/${id}`);
  t.equal(refused.statusCode, 403, 'an inventory certificate needs search:certificates too');
  const filtered = await createPrincipal(kernel, 'grading-reader-3', { permissions: [{ value: 'configuration:grading:read' }, { value: 'search:certificates', filter: 'team equals "nobody"' }] });
  const hidden = await caller(kernel, filtered.headers)('GET', `${POLICIES}/${POLICY}/explain/${id}`);
  t.equal(hidden.statusCode, 404, 'outside the filter: as if unknown');
  t.match(hidden.json(), { error: 'GRADING-004' });
});
