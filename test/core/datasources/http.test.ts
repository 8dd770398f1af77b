/**
 * HTTP JSON datasources against a local CMDB (node:http): flows by name (the result recorded) and inline (nothing
 * recorded), bearer, Basic and header credentials, a POST body, the egress proxy (Debian's tinyproxy) when one's
 * destinations name the host, every way a fetch fails answered DATASOURCE-006 (422) with its reason, the flow
 * template, and a computation rule reading a host's owner through Lookup() in the playground.
 */
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { startTinyproxy } from '../egress/tinyproxy.js';
import { BASIC, created, HOSTS, startHttpSource, TOKEN } from './http-source.js';

const FLOWS = '/api/v1/datasource/flows/';
const PLAYGROUND = '/api/v1/templatestring/playground';
const PROXY = { user: 'ds-proxy', password: 'Ds-Proxy-Password-0b7e' };

const source = await startHttpSource(t);
const proxy = await startTinyproxy(t, PROXY);
const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const api = caller(kernel, ADMIN_HEADERS);

for (const credential of [
  { name: 'cmdb-token', type: 'raw', secret: { value: TOKEN }, targets: ['datasource'] },
  { name: 'cmdb-basic', type: 'password', login: BASIC.login, password: { value: BASIC.password } },
  { name: 'proxy-login', type: 'password', login: PROXY.user, password: { value: PROXY.password }, targets: ['proxy'] },
]) {
  await created(api('POST', '/api/v1/security/credentials/', credential));
}
await created(api('POST', '/api/v1/datasources/', {
  name: 'cmdb',
  kind: 'http',
  http: { url: `${source.url}/hosts`, recordsPath: 'items', authentication: 'bearer' },
  credential: 'cmdb-token',
  keyField: 'hostname',
}));

const inline = (http: Record<string, unknown>, over: Record<string, unknown> = {}) => ({ definition: { kind: 'http', keyField: 'hostname', http, ...over } });

t.test('a rule cannot read a datasource that was never fetched', async (t) => {
  const res = await api('POST', PLAYGROUND, { computationRule: 'Lookup("cmdb", {{host}}, "owner")', dictionary: { host: 'web1.example.com' } });
  t.match(res.json(), { error: 'TPL-002', message: /has no records yet/, position: { offset: 7 } });
});

t.test('a flow by name fetches, answers the records and records them', async (t) => {
  const res = await api('POST', FLOWS, { datasource: 'cmdb' });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers['content-type'], 'application/json');
  t.match(res.json(), { datasource: 'cmdb', kind: 'http', status: 'ok', count: 3, truncated: false, durationMs: Number });
  t.same(res.json().records, HOSTS, 'records answered whole (nested objects included)');
  const limited = await api('POST', FLOWS, { datasource: 'cmdb', limit: 1 });
  t.match(limited.json(), { count: 3, truncated: true });
  t.equal(limited.json().records.length, 1);
  t.match((await api('PATCH', '/api/v1/datasources/', { names: ['cmdb'] })).json(), [{ status: 'ok', records: 3 }]);
});

t.test('a computation rule reads a host\'s owner from the CMDB (playground)', async (t) => {
  const rule = async (body: Record<string, unknown>) => api('POST', PLAYGROUND, body);
  const owner = await rule({ computationRule: 'Lookup("cmdb", {{csr.subject.cn}}, "owner")', dictionary: { 'csr.subject.cn': 'web1.example.com' } });
  t.equal(owner.statusCode, 200, owner.body);
  t.match(owner.json(), { value: 'alice@example.com', computedValueSingle: 'alice@example.com' });
  t.equal((await rule({ computationRule: 'Lookup("cmdb", {{h}}, "owner")', dictionary: { h: 'mail.example.com' } })).json().value, 'carol@example.com', 'keys compare ignoring case');
  t.same((await rule({ computationRule: 'Lookup("cmdb", [[hosts]], "owner")', dictionary: { hosts: ['web1.example.com', 'db1.example.com', 'unknown.example.com'] } })).json().value, ['alice@example.com', 'bob@example.com'], 'a list of keys');
  t.same((await rule({ computationRule: 'Lookup("cmdb", {{h}}, "team.contacts")', dictionary: { h: 'web1.example.com' } })).json().value, ['alice@example.com', 'dave@example.com'], 'a dotted path, a list value');
  t.equal((await rule({ computationRule: 'OrElse(Lookup("cmdb", {{h}}, "owner"), "pki@example.com")', dictionary: { h: 'unknown.example.com' } })).json().value, 'pki@example.com', 'no record: NULL');
  t.equal((await rule({ templateString: 'owner={{Upper(Lookup("cmdb", {{h}}, "owner"))}}', dictionary: { h: 'db1.example.com' } })).json().value, 'owner=BOB@EXAMPLE.COM', 'in a template string');

  t.match((await rule({ computationRule: 'Lookup("nope", {{h}}, "owner")', dictionary: { h: 'x' } })).json(), { error: 'TPL-002', message: /no datasource is named "nope"/ });
  t.match((await rule({ computationRule: 'Lookup({{ds}}, {{h}}, "owner")', dictionary: { ds: 'cmdb', h: 'x' } })).json(), { error: 'TPL-002', message: /must be a quoted name/ });
  t.match((await rule({ computationRule: 'Lookup("cmdb", {{h}})', dictionary: { h: 'x' } })).json(), { error: 'TPL-002', message: /Lookup takes 3 arguments/ });
  t.match((await rule({ computationRule: 'Lookup("cmdb", {{h}}, "team")', dictionary: { h: 'web1.example.com' } })).json(), { error: 'TPL-002', message: /not a value/ });

  // The playground's own permission (profiles) is not enough to read stored datasource records.
  const profiles = await createPrincipal(kernel, 'rules-writer', { permissions: [{ value: 'configuration:profiles:read' }] });
  const asWriter = caller(kernel, profiles.headers);
  t.equal((await asWriter('POST', PLAYGROUND, { computationRule: 'Upper({{h}})', dictionary: { h: 'x' } })).statusCode, 200, 'rules without Lookup as before');
  t.match((await asWriter('POST', PLAYGROUND, { computationRule: 'Lookup("cmdb", {{h}}, "owner")', dictionary: { h: 'web1.example.com' } })).json(), { error: 'SEC-PERM-001', message: /configuration:datasources:read/ });
});

t.test('inline flows: credentials of each kind, a POST body, nothing recorded', async (t) => {
  const basic = await api('POST', FLOWS, inline({ url: `${source.url}/basic`, authentication: 'basic' }, { credential: 'cmdb-basic' }));
  t.equal(basic.statusCode, 200, basic.body);
  t.equal(basic.json().count, 3, 'HTTP Basic');
  const header = await api('POST', FLOWS, inline({ url: `${source.url}/keyed`, recordsPath: 'data.hosts', authentication: 'header', authenticationHeader: 'X-API-Key' }, { credential: 'cmdb-token' }));
  t.equal(header.json().count, 3, 'a raw credential in its own header, records deep in the answer');
  const post = await api('POST', FLOWS, inline({ url: `${source.url}/search`, method: 'POST', body: '{"owner":"bob@example.com"}' }));
  t.same(post.json().records, [HOSTS[1]], 'a POST with its body');
  t.equal(source.bodies.at(-1), '{"owner":"bob@example.com"}');
  t.equal(((await kernel.db.knex('datasource_results').select('name')) as { name: string }[]).map((r) => r.name).join(), 'cmdb', 'inline runs are not recorded');
});

t.test('every failure of a fetch is a 422 with its reason', async (t) => {
  const closed = await freePort();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a server that never answers', inline({ url: `${source.url}/slow` }, { timeoutMs: 300 }), /no answer within 300 ms/],
    ['an answer over the size limit', inline({ url: `${source.url}/huge` }), /the answer exceeds 8388608 bytes/],
    ['an answer that is not JSON', inline({ url: `${source.url}/text` }), /did not answer JSON/],
    ['a refused credential', inline({ url: `${source.url}/hosts`, recordsPath: 'items' }), /answered HTTP 401/],
    ['a closed port', inline({ url: `http://127.0.0.1:${closed}/x` }), /ECONNREFUSED/],
    ['more records than maxRecords', inline({ url: `${source.url}/many` }, { maxRecords: 10 }), /more than 10 records \(maxRecords\)/],
    ['records that are not objects', inline({ url: `${source.url}/scalars` }), /record 0 is not an object/],
    ['a recordsPath that is not there', inline({ url: `${source.url}/hosts`, recordsPath: 'nothing', authentication: 'bearer' }, { credential: 'cmdb-token' }), /recordsPath "nothing" is not an array/],
    ['a cloud metadata address', inline({ url: 'http://169.254.169.254/latest/meta-data' }), /169\.254\.169\.254/],
  ];
  for (const [label, body, message] of cases) {
    const res = await api('POST', FLOWS, body);
    t.equal(res.statusCode, 422, `${label}: 422`);
    t.match(res.json(), { error: 'DATASOURCE-006', title: 'Datasource fetch failed', message }, label);
  }
  // A stored datasource's failure is recorded too.
  t.equal((await api('POST', '/api/v1/datasources/', { name: 'slow', kind: 'http', keyField: 'id', timeoutMs: 200, http: { url: `${source.url}/slow` } })).statusCode, 201);
  t.match((await api('POST', FLOWS, { datasource: 'slow' })).json(), { error: 'DATASOURCE-006', message: /Datasource "slow": .*no answer within 200 ms/ });
  t.match((await api('PATCH', '/api/v1/datasources/', { name: 'slow' })).json(), [{ name: 'slow', status: 'failed', error: /no answer within 200 ms/ }]);
});

t.test('flow requests that are not valid', async (t) => {
  const cases: [string, unknown, number, string, RegExp][] = [
    ['neither datasource nor definition', {}, 400, 'DATASOURCE-002', /give one of datasource/],
    ['both', { datasource: 'cmdb', definition: { kind: 'http' } }, 400, 'DATASOURCE-002', /give one of datasource/],
    ['an unknown datasource', { datasource: 'nope' }, 404, 'DATASOURCE-003', /nope/],
    ['an unknown field', { datasource: 'cmdb', extra: 1 }, 400, 'DATASOURCE-002', /extra: is not a known field/],
    ['a limit out of bounds', { datasource: 'cmdb', limit: 5000 }, 400, 'DATASOURCE-002', /limit: must be <= 1000/],
    ['an inline definition of another scheme', inline({ url: 'file:///etc/passwd' }), 400, 'DATASOURCE-002', /definition\.http\.url: the scheme must be/],
    ['an inline definition with a stray field', { definition: { kind: 'http', http: { url: 'http://127.0.0.1/' }, bogus: true } }, 400, 'DATASOURCE-002', /definition\.bogus: is not a known field/],
    ['an inline definition with an unknown credential', inline({ url: 'http://127.0.0.1/', authentication: 'bearer' }, { credential: 'missing' }), 400, 'DATASOURCE-002', /no credential is named "missing"/],
    ['an inline database query that writes', { definition: { kind: 'database', database: { url: 'sqlite:x.db', query: 'UPDATE x SET a = 1' } } }, 400, 'DATASOURCE-002', /must be a SELECT/],
  ];
  for (const [label, body, status, code, message] of cases) {
    const res = await api('POST', FLOWS, body);
    t.equal(res.statusCode, status, `${label}: ${status}`);
    t.match(res.json(), { error: code, message }, label);
  }
});

t.test('the flow template of each kind', async (t) => {
  for (const kind of ['http', 'ldap', 'database']) {
    const res = await api('POST', `${FLOWS}template`, { kind });
    t.equal(res.statusCode, 200, res.body);
    const { datasource, settingsSchema } = res.json();
    t.match(datasource, { kind, keyField: String, timeoutMs: 10000, maxRecords: 1000, refresh: null });
    t.type(datasource[kind], 'object', `${kind}: its settings are prefilled`);
    t.match(settingsSchema, { type: 'object', properties: { url: { type: 'string' } } });
    // The skeleton is a datasource the collection accepts as it is (bar its example credential-less URLs).
    const accepted = await api('POST', '/api/v1/datasources/', { ...datasource, name: `from-template-${kind}` });
    t.equal(accepted.statusCode, 201, `${kind}: the skeleton is accepted (${accepted.body})`);
  }
  t.match((await api('POST', `${FLOWS}template`, {})).json(), { error: 'DATASOURCE-002', message: /kind: is required/ });
  t.match((await api('POST', `${FLOWS}template`, { kind: 'ftp' })).json(), { error: 'DATASOURCE-002' });
});

t.test('outbound calls go through the HTTP proxy whose destinations match', async (t) => {
  t.equal((await api('POST', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['127.0.0.1'] })).statusCode, 201);
  const through = await api('POST', FLOWS, { datasource: 'cmdb' });
  t.equal(through.statusCode, 200, through.body);
  t.equal(through.json().count, 3);
  const port = new URL(source.url).port;
  t.ok(proxy.requests().some((line) => line === `CONNECT 127.0.0.1:${port}`), `tinyproxy carried the call (${proxy.requests().join(', ')})`);
  t.equal((await api('DELETE', '/api/v1/proxy/httpproxies/corp')).statusCode, 204);
});

t.test('secrets are in no answer, event or log line', async (t) => {
  const answers: [string, string][] = [];
  for (const url of ['/api/v1/datasources/', '/api/v1/datasources/cmdb', '/api/v1/security/credentials/', '/api/v1/system/configurations/export']) answers.push([url, (await api('GET', url)).body]);
  const events = JSON.stringify(await kernel.db.knex('events').select('*'));
  for (const secret of [TOKEN, BASIC.password, PROXY.password, Buffer.from(`${BASIC.login}:${BASIC.password}`).toString('base64')]) {
    for (const [url, body] of answers) t.notOk(body.includes(secret), `not in ${url}`);
    t.notOk(events.includes(secret), 'not in events');
    t.notOk(capture.text.includes(secret), 'not in logs');
  }
});
