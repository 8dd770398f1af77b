/**
 * Database datasources on the test database itself (SQLite file, or the MariaDB database of TEST_DATABASE_URL): a
 * parameterised SELECT as a datasource, a computation rule reading from it, parameters bound and never spliced,
 * and the ways a query fails (a write, a missing table, too many rows, no server) refused or answered with their
 * reason, the table untouched.
 */
import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { onMysql } from '../../helpers/database.js';
import { caller } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { created } from './http-source.js';

const FLOWS = '/api/v1/datasource/flows/';
const kernel = await bootKernel(t);
const api = caller(kernel, ADMIN_HEADERS);

// The CMDB table, in the platform's own database.
await kernel.db.knex.schema.createTable('cmdb_hosts', (table) => {
  table.string('hostname', 191).primary();
  table.string('owner', 191).notNullable();
  table.integer('active').notNullable();
});
await kernel.db.knex('cmdb_hosts').insert([
  { hostname: 'web1.example.com', owner: 'alice@example.com', active: 1 },
  { hostname: 'db1.example.com', owner: 'bob@example.com', active: 1 },
  { hostname: 'old.example.com', owner: 'nobody@example.com', active: 0 },
]);

// The database's URL as a datasource names it: a password, if the test server has one, goes to a credential.
let url: string;
let credential: string | undefined;
if (onMysql()) {
  const parsed = new URL(kernel.config.database.url!.replace(/^mariadb:/, 'mysql:'));
  if (parsed.password) {
    await created(api('POST', '/api/v1/security/credentials/', { name: 'db-login', type: 'password', login: decodeURIComponent(parsed.username), password: { value: decodeURIComponent(parsed.password) } }));
    credential = 'db-login';
    parsed.password = '';
  }
  url = parsed.toString();
} else {
  url = `sqlite:${kernel.db.filename!}`;
}

const inventory = (query: string, parameters: unknown[] = [], over: Record<string, unknown> = {}) => ({
  name: 'inventory-db',
  kind: 'database',
  keyField: 'hostname',
  database: { url, query, parameters },
  ...(credential ? { credential } : {}),
  ...over,
});
const flow = (query: string, parameters: unknown[] = [], over: Record<string, unknown> = {}) => api('POST', FLOWS, { definition: { ...inventory(query, parameters, over), name: undefined } });

t.test('a parameterised SELECT as a datasource, read by a rule', async (t) => {
  const res = await api('POST', '/api/v1/datasources/', inventory('SELECT hostname, owner FROM cmdb_hosts WHERE active = ? ORDER BY hostname', [1]));
  t.equal(res.statusCode, 201, res.body);
  const run = await api('POST', FLOWS, { datasource: 'inventory-db' });
  t.equal(run.statusCode, 200, run.body);
  t.same(run.json().records, [
    { hostname: 'db1.example.com', owner: 'bob@example.com' },
    { hostname: 'web1.example.com', owner: 'alice@example.com' },
  ]);
  t.match((await api('PATCH', '/api/v1/datasources/', { names: ['inventory-db'] })).json(), [{ name: 'inventory-db', status: 'ok', records: 2 }]);
  const rule = await api('POST', '/api/v1/templatestring/playground', { computationRule: 'Lookup("inventory-db", {{csr.subject.cn}}, "owner")', dictionary: { 'csr.subject.cn': 'db1.example.com' } });
  t.equal(rule.json().value, 'bob@example.com');
  t.equal((await api('POST', '/api/v1/templatestring/playground', { computationRule: 'Lookup("inventory-db", "old.example.com", "owner")' })).json().value, null, 'the parameter filtered the inactive host out');
});

t.test('parameters are bound, never spliced into the query', async (t) => {
  const injected = await flow('SELECT hostname FROM cmdb_hosts WHERE hostname = ?', ["nothing' OR '1'='1"]);
  t.equal(injected.statusCode, 200, injected.body);
  t.equal(injected.json().count, 0, 'the quote is data');
  const booleans = await flow('SELECT hostname FROM cmdb_hosts WHERE active = ? ORDER BY hostname', [false]);
  t.same(booleans.json().records, [{ hostname: 'old.example.com' }], 'a boolean parameter binds as 0/1');
});

t.test('writes are refused and the ways a query fails', async (t) => {
  for (const query of ['DELETE FROM cmdb_hosts', "UPDATE cmdb_hosts SET owner = 'x'", 'SELECT 1; DELETE FROM cmdb_hosts', 'DROP TABLE cmdb_hosts', "INSERT INTO cmdb_hosts VALUES ('a', 'b', 1)"]) {
    const res = await flow(query);
    t.equal(res.statusCode, 400, `${query}: refused`);
    t.match(res.json(), { error: 'DATASOURCE-002', message: /definition\.database\.query: must be/ });
  }
  const closed = await freePort();
  const cases: [string, Promise<{ statusCode: number; json(): unknown }>, RegExp][] = [
    ['a missing table', flow('SELECT * FROM no_such_table'), /no such table|doesn't exist/],
    ['more rows than maxRecords', flow('SELECT hostname FROM cmdb_hosts', [], { maxRecords: 2 }), /more than 2 records \(maxRecords\)/],
    ['no MySQL server there', api('POST', FLOWS, { definition: { kind: 'database', database: { url: `mysql://root@127.0.0.1:${closed}/x`, query: 'SELECT 1 AS one' } } }), /ECONNREFUSED/],
    ['no SQLite file there', api('POST', FLOWS, { definition: { kind: 'database', database: { url: 'sqlite:/nonexistent/cmdb.db', query: 'SELECT 1 AS one' } } }), /cannot open the database/],
  ];
  for (const [label, pending, message] of cases) {
    const res = await pending;
    t.equal(res.statusCode, 422, `${label}: 422`);
    t.match(res.json(), { error: 'DATASOURCE-006', message }, label);
  }
  if (onMysql()) {
    await created(api('POST', '/api/v1/security/credentials/', { name: 'db-wrong', type: 'password', login: 'root', password: { value: 'Not-The-Db-Password-91' } }));
    const denied = await flow('SELECT 1 AS one', [], { credential: 'db-wrong' });
    t.match(denied.json(), { error: 'DATASOURCE-006', message: /Access denied/ }, 'a refused login');
    t.notOk(JSON.stringify(denied.json()).includes('Not-The-Db-Password-91'));
  }
  t.equal(Number((await kernel.db.knex('cmdb_hosts').count({ n: '*' }).first())!.n), 3, 'the table is untouched');
});
