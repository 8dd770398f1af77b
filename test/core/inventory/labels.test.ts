import t from 'tap';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal, type Method } from '../../helpers/security.js';
import { eventCodes } from './fixtures.js';

const LABELS = '/api/v1/certificate/labels/';

t.test('label CRUD: the standard set, PUT names the label in the body', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);

  const created = await admin('POST', LABELS, {
    name: 'env',
    regex: 'prod|staging|dev',
    displayName: [{ lang: 'en', value: 'Environment' }],
    description: [{ lang: 'en', value: 'Where the certificate is used' }],
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  t.match(created.json(), { _id: /^[0-9a-f]{24}$/, name: 'env', regex: 'prod|staging|dev', displayName: [{ lang: 'en', value: 'Environment' }] });

  const bare = await admin('POST', LABELS, { name: 'app.name_v-2', regex: null, displayName: null, colour: 'ignored', _id: 'ignored' });
  t.equal(bare.statusCode, 201, bare.body);
  t.same(Object.keys(bare.json()).sort(), ['_id', 'description', 'displayName', 'name', 'regex']);
  t.match(bare.json(), { name: 'app.name_v-2', regex: null, displayName: [], description: [] });
  t.not(bare.json()._id, 'ignored');
  t.equal((await admin('POST', LABELS, { name: 'empty-regex', regex: '' })).json().regex, null, 'an empty regex is none');

  t.same((await admin('GET', LABELS)).json().map((l: { name: string }) => l.name), ['app.name_v-2', 'empty-regex', 'env'], 'listed by name');
  t.equal((await admin('GET', LABELS.slice(0, -1))).statusCode, 200, 'the collection also answers without the trailing slash');
  t.same((await admin('GET', `${LABELS}env`)).json(), created.json());

  // A GET answer echoed back with changes.
  const label = created.json() as Record<string, unknown>;
  const updated = await admin('PUT', LABELS, { ...label, regex: 'prod|dev', description: null });
  t.equal(updated.statusCode, 200, updated.body);
  t.same(updated.json(), { ...label, regex: 'prod|dev', description: [] });
  t.same((await admin('GET', `${LABELS}env`)).json(), updated.json());

  t.equal((await admin('DELETE', `${LABELS}empty-regex`)).statusCode, 204);
  t.equal((await admin('GET', `${LABELS}empty-regex`)).json().error, 'LBL-003');

  t.same(await eventCodes(kernel), ['LABEL-CREATED', 'LABEL-CREATED', 'LABEL-CREATED', 'LABEL-UPDATED', 'LABEL-DELETED']);
  const event = await kernel.db.knex('events').where({ code: 'LABEL-UPDATED' }).first();
  t.match(event, { principal: 'administrator', object_type: 'label', object_id: 'env', module: 'inventory' });
  t.same(JSON.parse(event.payload), { regex: 'prod|dev' });

  const plain = await admin('POST', LABELS, { name: 'site', displayName: 'Site', description: 'Where it runs' });
  t.equal(plain.statusCode, 201, plain.body);
  t.match(plain.json(), { displayName: [{ lang: 'en', value: 'Site' }], description: [{ lang: 'en', value: 'Where it runs' }] }, "plain strings (Horizon's MCP server) are taken as English");
  t.equal((await admin('DELETE', `${LABELS}site`)).statusCode, 204);
});

t.test('bad label input is refused with a stable code and nothing is written', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  t.equal((await admin('POST', LABELS, { name: 'env' })).statusCode, 201);
  const count = async () => Number(((await kernel.db.knex('inv_labels').count({ n: '*' }).first()) as { n: number | string }).n);
  const before = { labels: await count(), events: (await eventCodes(kernel)).length };

  const cases: [string, Method, string, unknown, number, string, RegExp?][] = [
    ['duplicate', 'POST', LABELS, { name: 'env' }, 400, 'LBL-004', /"env" already exists/],
    ['name with a slash', 'POST', LABELS, { name: 'a/b' }, 400, 'LBL-002'],
    ['name with a space', 'POST', LABELS, { name: 'a b' }, 400, 'LBL-002'],
    ['empty name', 'POST', LABELS, { name: '' }, 400, 'LBL-002'],
    ['name too long', 'POST', LABELS, { name: 'x'.repeat(192) }, 400, 'LBL-002'],
    ['no name', 'POST', LABELS, { regex: 'a' }, 400, 'HTTP-003'],
    ['regex that does not compile', 'POST', LABELS, { name: 'x', regex: '(unclosed' }, 400, 'LBL-002', /does not compile/],
    ['regex too long', 'POST', LABELS, { name: 'x', regex: 'a'.repeat(1025) }, 400, 'LBL-002', /1024/],
    ['displayName neither a list nor a string', 'POST', LABELS, { name: 'x', displayName: { en: 'Env' } }, 400, 'HTTP-003'],
    ['displayName entry without lang', 'POST', LABELS, { name: 'x', displayName: [{ value: 'Env' }] }, 400, 'HTTP-003'],
    ['malformed JSON', 'POST', LABELS, '{"name": ', 400, 'HTTP-002'],
    ['update of an unknown label', 'PUT', LABELS, { name: 'ghost' }, 404, 'LBL-003'],
    ['bad regex on update', 'PUT', LABELS, { name: 'env', regex: '[' }, 400, 'LBL-002'],
    ['get of an unknown label', 'GET', `${LABELS}ghost`, undefined, 404, 'LBL-003'],
    ['delete of an unknown label', 'DELETE', `${LABELS}ghost`, undefined, 404, 'LBL-003'],
  ];
  for (const [name, method, url, payload, status, code, message] of cases) {
    const res = await admin(method, url, payload);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json', name);
    t.equal(res.json().error, code, name);
    if (message) t.match(res.json().message, message, name);
  }
  const wrongType = await kernel.app.inject({ method: 'POST', url: LABELS, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': 'application/xml' }, payload: '<label/>' });
  t.equal(wrongType.statusCode, 415);
  t.equal(wrongType.json().error, 'HTTP-004');
  const oversized = await admin('POST', LABELS, { name: 'big', description: [{ lang: 'en', value: 'x'.repeat(2 * 1024 * 1024) }] });
  t.equal(oversized.statusCode, 413);
  t.equal(oversized.json().error, 'HTTP-005');

  t.equal(await count(), before.labels, 'no label written');
  t.equal((await eventCodes(kernel)).length, before.events, 'no event written');
  t.equal((await admin('GET', `${LABELS}env`)).json().regex, null, 'the refused update left the label as it was');
});

t.test('label routes need credentials and the labels permission', async (t) => {
  const kernel = await bootKernel(t);
  const anonymous = caller(kernel, {});
  const reader = caller(kernel, (await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:labels:read' }] })).headers);
  const nobody = caller(kernel, (await createPrincipal(kernel, 'nobody', { permissions: [{ value: 'search:certificates' }] })).headers);
  await caller(kernel, ADMIN_HEADERS)('POST', LABELS, { name: 'env' });

  const unauthenticated = await anonymous('GET', LABELS);
  t.equal(unauthenticated.statusCode, 401);
  t.equal(unauthenticated.json().error, 'SEC-AUTH-001');
  t.equal((await anonymous('POST', LABELS, { name: 'x' })).statusCode, 401);
  t.equal((await nobody('GET', LABELS)).statusCode, 403);
  t.equal((await nobody('GET', `${LABELS}env`)).statusCode, 403);
  t.equal((await reader('GET', LABELS)).statusCode, 200);
  t.equal((await reader('GET', `${LABELS}env`)).statusCode, 200);
  for (const [method, url, body] of [
    ['POST', LABELS, { name: 'x' }],
    ['PUT', LABELS, { name: 'env', regex: 'a' }],
    ['DELETE', `${LABELS}env`, undefined],
  ] as const) {
    const res = await reader(method, url, body);
    t.equal(res.statusCode, 403, `${method}: read is not write`);
    t.equal(res.json().error, 'SEC-PERM-001');
  }
  t.match((await caller(kernel, ADMIN_HEADERS)('GET', `${LABELS}env`)).json(), { name: 'env', regex: null }, 'the refused writes changed nothing');
});
