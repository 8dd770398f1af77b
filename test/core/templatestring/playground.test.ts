/**
 * POST /api/v1/templatestring/playground: the vendor's request and answer shapes (horizon-go
 * TemplateStringPlaygroundRequest/ResponseResponse, horizon-mcp's playground calls), errors with their
 * position, access (401, 403 without configuration:profiles:read, 404 on a host without the configuration
 * capability), on SQLite and (TEST_DATABASE_URL) MariaDB.
 */
import t from 'tap';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';

const URL = '/api/v1/templatestring/playground';
const kernel = await bootKernel(t);
const admin = caller(kernel, ADMIN_HEADERS);

t.test('a computation rule with the vendor dictionary → computedValueSingle', async (t) => {
  const res = await admin('POST', URL, { computationRule: 'Concat(OrElse({{prefix}}, "default"), "-", {{name}})', dictionary: { name: 'server01' } });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers['content-type'], 'application/json');
  t.same(res.json(), { value: 'default-server01', computedValueSingle: 'default-server01', dictionary: { name: 'server01' } });
});

t.test('a multi-valued result → computedValueMulti', async (t) => {
  const res = await admin('POST', URL, { computationRule: 'Sort(Unique([[csr.san.dnsname]]))', dictionary: { 'csr.san.dnsname': ['b.example', 'a.example', 'b.example'] } });
  t.equal(res.statusCode, 200, res.body);
  t.same(res.json().computedValueMulti, ['a.example', 'b.example']);
  t.same(res.json().value, ['a.example', 'b.example']);
});

t.test('a template string; and {template, data} with nested data', async (t) => {
  const one = await admin('POST', URL, { templateString: 'Hello {{name}}, {{Upper({{name}})}}', dictionary: { name: 'jdoe' } });
  t.same(one.json().computedValueSingle, 'Hello jdoe, JDOE');
  const two = await admin('POST', URL, { template: 'owner={{Lower({{metadata.owner}})}} dns={{sans.dns[0]}}', data: { metadata: { owner: 'Bob' }, sans: { dns: ['a.example'] } } });
  t.equal(two.statusCode, 200, two.body);
  t.equal(two.json().value, 'owner=bob dns=a.example');
  t.same(two.json().dictionary, {}, 'the dictionary echoed (none was given)');
});

t.test('errors: 400 with the code, the message and the position', async (t) => {
  const syntax = await admin('POST', URL, { computationRule: 'Concat(\n  {{a}}\n  {{b}})', dictionary: {} });
  t.equal(syntax.statusCode, 400);
  t.match(syntax.headers['content-type'], /^application\/problem\+json/);
  t.match(syntax.json(), { error: 'TPL-001', status: 400, kind: 'syntax', position: { offset: 18, line: 3, column: 3 }, detail: 'in computationRule' });
  const evaluation = await admin('POST', URL, { computationRule: 'Upper(Shout({{a}}))', dictionary: { a: 'x' } });
  t.match(evaluation.json(), { error: 'TPL-002', status: 400, kind: 'evaluation', position: { offset: 6, line: 1, column: 7 } });
  t.match(evaluation.json().message, 'unknown function Shout');
  const regex = await admin('POST', URL, { computationRule: 'Match({{s}}, "(a+)+$")', dictionary: { s: `${'a'.repeat(5000)}!` } });
  t.match(regex.json(), { error: 'TPL-002', kind: 'evaluation', position: { offset: 13 } });
  t.match(regex.json().message, 'catastrophic');
  const huge = await admin('POST', URL, { templateString: 'x'.repeat(100_000), dictionary: {} });
  t.match(huge.json(), { error: 'TPL-003', kind: 'limit', status: 400 });
  const deep = await admin('POST', URL, { computationRule: `${'Lower('.repeat(200)}"x"${')'.repeat(200)}` });
  t.match(deep.json(), { error: 'TPL-003', kind: 'limit', position: { offset: 6 * 32 } });
});

t.test('bad input: 400', async (t) => {
  const none = await admin('POST', URL, { dictionary: { a: 'b' } });
  t.match(none.json(), { error: 'TPL-004', status: 400 });
  const two = await admin('POST', URL, { computationRule: '{{a}}', templateString: '{{a}}' });
  t.match(two.json(), { error: 'TPL-004', status: 400 });
  const csr = await admin('POST', URL, { computationRule: '{{a}}', csr: '-----BEGIN CERTIFICATE REQUEST-----' });
  t.match(csr.json(), { error: 'TPL-004', detail: /csr/ });
  const notObject = await admin('POST', URL, { computationRule: '{{a}}', dictionary: 'a=b' });
  t.match(notObject.json(), { error: 'TPL-004', status: 400 });
  const malformed = await admin('POST', URL, '{"computationRule": ');
  t.equal(malformed.statusCode, 400);
  t.match(malformed.json(), { error: 'HTTP-002' });
  const objectValue = await admin('POST', URL, { computationRule: 'Upper({{a}})', dictionary: { a: { b: 1 } } });
  t.match(objectValue.json(), { error: 'TPL-002', position: { offset: 6 } });
});

t.test('access: 401, 403, wrong host 404; profiles:read is enough', async (t) => {
  const body = { computationRule: '"x"' };
  const anonymous = await kernel.app.inject({ method: 'POST', url: URL, headers: { host: 'localhost', 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { error: 'SEC-AUTH-001' });
  const nobody = await createPrincipal(kernel, 'tpl-nobody');
  const refused = await caller(kernel, nobody.headers)('POST', URL, body);
  t.equal(refused.statusCode, 403);
  t.match(refused.json(), { error: 'SEC-PERM-001' });
  const reader = await createPrincipal(kernel, 'tpl-reader', { permissions: [{ value: 'configuration:profiles:read' }] });
  t.equal((await caller(kernel, reader.headers)('POST', URL, body)).statusCode, 200);
  const wrongHost = await kernel.app.inject({ method: 'POST', url: URL, headers: { host: 'evil.example', 'content-type': 'application/json', ...ADMIN_HEADERS }, payload: JSON.stringify(body) });
  t.equal(wrongHost.statusCode, 404);
  t.match(wrongHost.json(), { error: 'HTTP-001' });
});
