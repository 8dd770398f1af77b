/**
 * LDAP datasources against a real slapd started by this file: a bound search as a datasource (the bind password a
 * credential), a PATCH refresh, a computation rule reading a host's owner, and the ways a directory fails (wrong
 * password, missing base DN, more entries than maxRecords, nothing listening) answered DATASOURCE-006 with their
 * reason, the password in no answer or log line.
 */
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { created } from './http-source.js';
import { LDAP_HOSTS, READER, startSlapd, SUFFIX } from './slapd.js';

const FLOWS = '/api/v1/datasource/flows/';
const slapd = await startSlapd(t);
const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const api = caller(kernel, ADMIN_HEADERS);

const WRONG = 'Not-The-Reader-Password-42';
await created(api('POST', '/api/v1/security/credentials/', { name: 'ldap-reader', type: 'password', login: READER.dn, password: { value: READER.password }, targets: ['datasource'] }));
await created(api('POST', '/api/v1/security/credentials/', { name: 'ldap-wrong', type: 'password', login: READER.dn, password: { value: WRONG } }));

const directory = (over: Record<string, unknown> = {}, ldap: Record<string, unknown> = {}) => ({
  name: 'directory',
  kind: 'ldap',
  keyField: 'cn',
  credential: 'ldap-reader',
  ldap: { url: slapd.url, baseDn: `ou=hosts,${SUFFIX}`, filter: '(objectClass=device)', attributes: ['cn', 'description', 'l'], bindDn: READER.dn, ...ldap },
  ...over,
});

t.test('a directory search as a datasource', async (t) => {
  const res = await api('POST', '/api/v1/datasources/', directory());
  t.equal(res.statusCode, 201, res.body);
  t.match(res.json(), { ldap: { scope: 'sub' }, maxRecords: 1000 });

  const flow = await api('POST', FLOWS, { datasource: 'directory' });
  t.equal(flow.statusCode, 200, flow.body);
  t.equal(flow.json().count, 3);
  const web1 = (flow.json().records as { dn: string; cn: string; description: string; l: string }[]).find((r) => r.cn === 'web1.example.com');
  t.same(web1, { dn: `cn=web1.example.com,ou=hosts,${SUFFIX}`, cn: 'web1.example.com', description: 'alice@example.com', l: 'Paris' }, 'an entry as a record: its DN and the attributes asked for');

  t.match((await api('PATCH', '/api/v1/datasources/', { names: ['directory'] })).json(), [{ name: 'directory', status: 'ok', records: 3 }]);
  for (const [host, owner] of Object.entries(LDAP_HOSTS)) {
    const rule = await api('POST', '/api/v1/templatestring/playground', { computationRule: 'Lookup("directory", {{csr.subject.cn}}, "description")', data: { csr: { subject: { cn: host } } } });
    t.equal(rule.json().value, owner, `the owner of ${host}`);
  }
});

t.test('the bind DN may come from the credential\'s login; one entry with scope base', async (t) => {
  const res = await api('POST', FLOWS, { definition: directory({ name: undefined }, { bindDn: undefined, scope: 'base', baseDn: `cn=db1.example.com,ou=hosts,${SUFFIX}` }) });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json().records, [{ cn: 'db1.example.com', description: 'bob@example.com' }]);
  // Without a bind the ACL hides the branch from anonymous readers: slapd answers noSuchObject.
  const anonymous = await api('POST', FLOWS, { definition: directory({ name: undefined, credential: undefined }, { bindDn: undefined }) });
  t.match(anonymous.json(), { error: 'DATASOURCE-006', message: /the base DN "ou=hosts,dc=example,dc=com" does not exist/ });
});

t.test('the ways a directory fails', async (t) => {
  const closed = await freePort();
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a wrong password', directory({ credential: 'ldap-wrong' }), /refused the bind as "cn=reader,dc=example,dc=com" \(invalid credentials\)/],
    ['a base DN that does not exist', directory({}, { baseDn: `ou=nowhere,${SUFFIX}` }), /the base DN "ou=nowhere,dc=example,dc=com" does not exist/],
    ['more entries than maxRecords', directory({ maxRecords: 2 }), /more than 2 records \(maxRecords\)/],
    ['nothing listening', directory({ timeoutMs: 2000 }, { url: `ldap://127.0.0.1:${closed}` }), /ECONNREFUSED/],
  ];
  for (const [label, definition, message] of cases) {
    const res = await api('POST', FLOWS, { definition: { ...definition, name: undefined } });
    t.equal(res.statusCode, 422, `${label}: 422`);
    t.match(res.json(), { error: 'DATASOURCE-006', message }, label);
  }
  // Stored with the wrong password: the refresh records the failure, the previous records stay readable.
  t.equal((await api('PUT', '/api/v1/datasources/', directory({ credential: 'ldap-wrong' }))).statusCode, 200);
  t.match((await api('PATCH', '/api/v1/datasources/', {})).json(), [{ name: 'directory', status: 'failed', error: /invalid credentials/, records: 3 }]);
  const rule = await api('POST', '/api/v1/templatestring/playground', { computationRule: 'Lookup("directory", "web1.example.com", "description")' });
  t.equal(rule.json().value, 'alice@example.com', 'rules read the last good fetch');
});

t.test('the bind password is in no answer, event or log line', async (t) => {
  const bodies = [(await api('GET', '/api/v1/datasources/directory')).body, (await api('GET', '/api/v1/security/credentials/ldap-reader')).body, (await api('GET', '/api/v1/system/configurations/export')).body];
  const events = JSON.stringify(await kernel.db.knex('events').select('*'));
  for (const secret of [READER.password, WRONG]) {
    for (const body of bodies) t.notOk(body.includes(secret), 'not in an answer');
    t.notOk(events.includes(secret), 'not in events');
    t.notOk(capture.text.includes(secret), 'not in logs');
  }
});
