/**
 * Datasources as a configuration collection (/api/v1/datasources/): the standard set, validation of every kind's
 * settings (refused with DATASOURCE-002 naming the field), the refresh schedule following the stored object,
 * PATCH on the collection fetching now against a local HTTP CMDB, access (401, 403), and the credential's
 * secret absent from every answer, event and log line.
 */
import t from 'tap';
import { REFRESH_JOB } from '../../../core/datasources/jobs.js';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { created, startHttpSource, TOKEN } from './http-source.js';

const BASE = '/api/v1/datasources/';
const source = await startHttpSource(t);
const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const api = caller(kernel, ADMIN_HEADERS);

await created(api('POST', '/api/v1/security/credentials/', { name: 'cmdb-token', type: 'raw', secret: { value: TOKEN }, targets: ['datasource'] }));
await created(api('POST', '/api/v1/security/credentials/', { name: 'proxy-only', type: 'raw', secret: { value: 'x-proxy-only-secret' }, targets: ['proxy'] }));
await created(api('POST', '/api/v1/security/credentials/', { name: 'a-password', type: 'password', login: 'u', password: { value: 'p-secret-1' } }));

const cmdb = (over: Record<string, unknown> = {}) => ({
  name: 'cmdb',
  description: 'The hosts and their owners',
  kind: 'http',
  http: { url: `${source.url}/hosts`, recordsPath: 'items', authentication: 'bearer' },
  credential: 'cmdb-token',
  keyField: 'hostname',
  refresh: '*/5 * * * *',
  ...over,
});

t.test('the standard set', async (t) => {
  const created = await api('POST', BASE, cmdb());
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { _id: String, name: 'cmdb', kind: 'http', keyField: 'hostname', timeoutMs: 10000, maxRecords: 1000, http: { method: 'GET', recordsPath: 'items', authentication: 'bearer' } }, 'defaults are stored');
  t.equal((await api('POST', BASE, cmdb())).json().error, 'DATASOURCE-004', 'the name is taken');

  const list = await api('GET', BASE);
  t.equal(list.statusCode, 200);
  t.same((list.json() as { name: string }[]).map((d) => d.name), ['cmdb']);
  const one = await api('GET', `${BASE}cmdb`);
  t.equal(one.statusCode, 200);
  t.same(one.json().http.url, `${source.url}/hosts`, 'free-form settings are answered whole');
  t.match((await api('GET', `${BASE}nope`)).json(), { error: 'DATASOURCE-003', status: 404 });

  const updated = await api('PUT', BASE, cmdb({ description: 'Updated', http: { url: `${source.url}/hosts`, recordsPath: 'items', authentication: 'bearer', headers: { 'x-team': 'pki' } } }));
  t.equal(updated.statusCode, 200, updated.body);
  t.same(updated.json().http.headers, { 'x-team': 'pki' }, 'headers (a free-form object) kept in the answer');
  t.equal((await api('PUT', BASE, cmdb({ name: 'absent' }))).json().error, 'DATASOURCE-003');

  const referenced = await api('DELETE', '/api/v1/security/credentials/cmdb-token');
  t.match(referenced.json(), { error: 'CREDENTIALS-005', referrers: ['datasource/cmdb'] }, 'the credential is in use');
});

t.test('invalid definitions name the field', async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['unknown field', cmdb({ name: 'x1', colour: 'red' }), /colour: is not a known field/],
    ['no settings for the kind', cmdb({ name: 'x2', http: undefined }), /http: the http settings are required/],
    ['settings of another kind', cmdb({ name: 'x3', ldap: { url: 'ldap://127.0.0.1', baseDn: 'dc=x' } }), /ldap: is not a field of a http datasource/],
    ['a scheme that is not http', cmdb({ name: 'x4', http: { url: 'ftp://127.0.0.1/x', authentication: 'bearer' } }), /http\.url: the scheme must be http:\/\/ or https:\/\//],
    ['not a URL', cmdb({ name: 'x5', http: { url: 'not a url', authentication: 'bearer' } }), /http\.url: not a URL/],
    ['a password in the URL', cmdb({ name: 'x6', http: { url: 'http://u:p@127.0.0.1/x', authentication: 'bearer' } }), /carries a password/],
    ['an Authorization header', cmdb({ name: 'x7', http: { url: 'http://127.0.0.1/x', authentication: 'bearer', headers: { Authorization: 'Bearer abc' } } }), /no Authorization/],
    ['authentication without a credential', cmdb({ name: 'x8', credential: undefined }), /credential: required with http.authentication bearer/],
    ['a body on a GET', cmdb({ name: 'x9', http: { url: 'http://127.0.0.1/x', authentication: 'bearer', body: '{}' } }), /only a POST sends a body/],
    ['a CRON that is not one', cmdb({ name: 'x10', refresh: 'every minute' }), /refresh: not a CRON expression/],
    ['an unknown credential', cmdb({ name: 'x11', credential: 'missing' }), /credential: no credential is named "missing"/],
    ['a credential for proxies only', cmdb({ name: 'x12', credential: 'proxy-only' }), /not usable by a datasource/],
    ['a credential of the wrong kind', cmdb({ name: 'x13', credential: 'a-password' }), /a raw credential is needed/],
    ['no keyField', cmdb({ name: 'x14', keyField: undefined }), /keyField: is required/],
    ['an unknown kind', cmdb({ name: 'x15', kind: 'ftp' }), /kind: must be equal to one of the allowed values/],
    ['timeoutMs out of bounds', cmdb({ name: 'x16', timeoutMs: 10 }), /timeoutMs: must be >= 100/],
    ['an LDAP filter that does not parse', { name: 'x17', kind: 'ldap', keyField: 'cn', ldap: { url: 'ldap://127.0.0.1:1', baseDn: 'dc=x', filter: '(cn=' } }, /ldap\.filter: not an LDAP filter/],
    ['an LDAP URL of another scheme', { name: 'x18', kind: 'ldap', keyField: 'cn', ldap: { url: 'http://127.0.0.1:1', baseDn: 'dc=x' } }, /ldap\.url: the scheme must be ldap:\/\/ or ldaps:\/\//],
    ['a bind DN without a credential', { name: 'x19', kind: 'ldap', keyField: 'cn', ldap: { url: 'ldap://127.0.0.1:1', baseDn: 'dc=x', bindDn: 'cn=r,dc=x' } }, /credential: required with ldap.bindDn/],
    ['a DELETE', { name: 'x20', kind: 'database', keyField: 'id', database: { url: 'sqlite:x.db', query: 'DELETE FROM hosts' } }, /database\.query: must be a SELECT/],
    ['two statements', { name: 'x21', kind: 'database', keyField: 'id', database: { url: 'sqlite:x.db', query: 'SELECT 1; DROP TABLE hosts' } }, /database\.query: must be a single statement/],
    ['SELECT INTO', { name: 'x22', kind: 'database', keyField: 'id', database: { url: 'mysql://r@127.0.0.1/db', query: "SELECT * FROM hosts INTO OUTFILE '/tmp/x'" } }, /SELECT … INTO is refused/],
    ['placeholders and parameters that disagree', { name: 'x23', kind: 'database', keyField: 'id', database: { url: 'sqlite:x.db', query: 'SELECT * FROM hosts WHERE a = ? AND b = ?', parameters: [1] } }, /has 2 "\?" placeholders for 1 parameter/],
    ['a database URL of another scheme', { name: 'x24', kind: 'database', keyField: 'id', database: { url: 'postgres://127.0.0.1/db', query: 'SELECT 1' } }, /database\.url: must be mysql:\/\/, mariadb:\/\/ or sqlite:/],
    ['a password in the database URL', { name: 'x25', kind: 'database', keyField: 'id', database: { url: 'mysql://root:secret@127.0.0.1/db', query: 'SELECT 1' } }, /carries a password/],
    ['an executable comment', { name: 'x26', kind: 'database', keyField: 'id', database: { url: 'mysql://r@127.0.0.1/db', query: 'SELECT 1 /*! ; DROP TABLE x */' } }, /executable comments/],
  ];
  for (const [label, body, message] of cases) {
    const res = await api('POST', BASE, body);
    t.equal(res.statusCode, 400, `${label}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.match(res.json(), { error: 'DATASOURCE-002', message }, label);
  }
  t.same(((await api('GET', BASE)).json() as { name: string }[]).map((d) => d.name), ['cmdb'], 'nothing was created');
});

t.test('the refresh schedule follows the stored datasource', async (t) => {
  // The schedule follows the commit (afterChange): wait for it rather than race it.
  const next = () => kernel.scheduler.nextRunAt(REFRESH_JOB, { tenant: 'default', datasource: 'cmdb' });
  await until('a repeating job for the CRON', async () => (await next()) !== null);
  t.equal((await api('PUT', BASE, cmdb({ refresh: null }))).statusCode, 200);
  await until('no job without a CRON', async () => (await next()) === null);
  t.equal((await api('PUT', BASE, cmdb({ refresh: '0 6 * * *' }))).statusCode, 200);
  await until('the job at 06:00 UTC', async () => {
    const at = await next();
    return at !== null && new Date(at).getUTCHours() === 6 && new Date(at).getUTCMinutes() === 0;
  });
  t.equal(((await kernel.db.knex('scheduler_jobs').where({ name: REFRESH_JOB }).select('id')) as unknown[]).length, 1, 'one job, the previous one cancelled');
});

t.test('PATCH on the collection fetches now and answers each status', async (t) => {
  const one = await api('PATCH', BASE, { names: ['cmdb'] });
  t.equal(one.statusCode, 200, one.body);
  t.match(one.json(), [{ name: 'cmdb', status: 'ok', records: 3, error: null, fetchedAt: Number, succeededAt: Number, durationMs: Number }]);
  t.ok(source.authorizations.includes(`Bearer ${TOKEN}`), 'the credential reached the source');

  // A source that answers something else than JSON: recorded as failed, the good records kept.
  t.equal((await api('POST', BASE, { name: 'broken', kind: 'http', keyField: 'hostname', http: { url: `${source.url}/text` } })).statusCode, 201);
  const all = await api('PATCH', BASE, {});
  t.equal(all.statusCode, 200);
  t.match(all.json(), [{ name: 'broken', status: 'failed', records: 0, error: /did not answer JSON/, succeededAt: null }, { name: 'cmdb', status: 'ok', records: 3 }], 'all of them, one failure does not hide the others');
  t.match((await api('PATCH', BASE, { name: 'broken' })).json(), [{ name: 'broken', status: 'failed' }], '`name` alone');

  const before = (await kernel.db.knex('datasource_results').where({ name: 'cmdb' }).first()) as { succeeded_at: number };
  t.equal((await api('PUT', BASE, cmdb({ http: { url: `${source.url}/text`, authentication: 'bearer' } }))).statusCode, 200);
  t.match((await api('PATCH', BASE, { names: ['cmdb'] })).json(), [{ name: 'cmdb', status: 'failed', error: /did not answer JSON/, records: 3, succeededAt: Number(before.succeeded_at) }], 'a failure keeps the last good records');
  t.equal((await api('PUT', BASE, cmdb())).statusCode, 200);

  t.match((await api('PATCH', BASE, { names: ['cmdb', 'nope'] })).json(), { error: 'DATASOURCE-003', message: /nope/ }, 'an unknown name: nothing fetched');
  t.match((await api('PATCH', BASE, { names: 'cmdb' })).json(), { error: 'DATASOURCE-002', message: /names: must be array/ });
  t.match((await api('PATCH', BASE, { other: 1 })).json(), { error: 'DATASOURCE-002', message: /other: is not a known field/ });
});

t.test('access: 401 without credentials, 403 without the section\'s permission', async (t) => {
  const reader = await createPrincipal(kernel, 'ds-reader', { permissions: [{ value: 'configuration:datasources:read' }] });
  const nobody = await createPrincipal(kernel, 'ds-nobody');
  const asReader = caller(kernel, reader.headers);
  const asNobody = caller(kernel, nobody.headers);
  const anonymous = caller(kernel, {});
  for (const [method, url, body] of [
    ['GET', BASE],
    ['GET', `${BASE}cmdb`],
    ['POST', BASE, cmdb({ name: 'other' })],
    ['PUT', BASE, cmdb()],
    ['DELETE', `${BASE}cmdb`],
    ['PATCH', BASE, {}],
    ['POST', '/api/v1/datasource/flows/', { datasource: 'cmdb' }],
    ['POST', '/api/v1/datasource/flows/template', { kind: 'http' }],
  ] as const) {
    const res = await anonymous(method, url, body);
    t.equal(res.statusCode, 401, `${method} ${url} anonymous`);
    t.equal((await asNobody(method, url, body)).statusCode, 403, `${method} ${url} without permission`);
  }
  t.equal((await asReader('GET', `${BASE}cmdb`)).statusCode, 200, 'read: GET');
  t.equal((await asReader('POST', '/api/v1/datasource/flows/template', { kind: 'ldap' })).statusCode, 200, 'read: the template');
  for (const [method, url, body] of [
    ['POST', BASE, cmdb({ name: 'other' })],
    ['PATCH', BASE, {}],
    ['POST', '/api/v1/datasource/flows/', { datasource: 'cmdb' }],
    ['DELETE', `${BASE}cmdb`],
  ] as const) {
    t.match((await asReader(method, url, body)).json(), { error: 'SEC-PERM-001' }, `read only: ${method} ${url} refused`);
  }
});

t.test('delete: the job and the records go with it', async (t) => {
  t.equal((await api('DELETE', `${BASE}broken`)).statusCode, 204);
  t.equal((await api('DELETE', `${BASE}cmdb`)).statusCode, 204);
  t.equal((await api('GET', `${BASE}cmdb`)).statusCode, 404);
  await until('the job and the records gone', async () => (await kernel.scheduler.nextRunAt(REFRESH_JOB, { tenant: 'default', datasource: 'cmdb' })) === null && Number((await kernel.db.knex('datasource_results').count({ n: '*' }).first())!.n) === 0);
  t.pass('no job, no records left');
});

t.test('the credential\'s secret is in no answer, event or log line', async (t) => {
  const events = JSON.stringify(await kernel.db.knex('events').select('*'));
  t.notOk(events.includes(TOKEN), 'events');
  t.notOk(capture.text.includes(TOKEN), 'logs');
  t.ok(capture.text.includes('datasource fetch failed'), 'the failures were logged (with their reason)');
});
