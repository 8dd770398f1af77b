import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal, type Method } from '../../helpers/security.js';

const ROLES = '/api/v1/security/roles/';
const TASKS = '/api/v1/scheduler/tasks/';

const eventCodes = async (kernel: Kernel): Promise<string[]> =>
  ((await kernel.db.knex('events').where({ module: 'security' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);

t.test('a role grants its permissions to its members from the next request', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const alice = caller(kernel, (await createPrincipal(kernel, 'alice', { email: 'alice@example.com' })).headers);

  t.equal((await alice('GET', TASKS)).statusCode, 403, 'alice holds no permission');

  const created = await admin('POST', ROLES, {
    name: 'schedulers',
    displayName: [{ lang: 'en', value: 'Schedulers' }],
    permissions: [{ value: 'configuration:scheduler:read' }, { value: 'search:certificates', filter: 'team equals "pki"' }],
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  t.match(created.json(), {
    _id: /^[0-9a-f]{24}$/,
    name: 'schedulers',
    displayName: [{ lang: 'en', value: 'Schedulers' }],
    description: [],
    permissions: [{ value: 'configuration:scheduler:read' }, { value: 'search:certificates', filter: 'team equals "pki"' }],
  });

  const added = await admin('POST', `${ROLES}schedulers/members`, { identifier: 'alice' });
  t.equal(added.statusCode, 200, added.body);
  t.same(added.json(), [{ identifier: 'alice', name: 'alice', email: 'alice@example.com' }], 'answers the members, with name and email');
  t.equal((await alice('GET', TASKS)).statusCode, 200, 'the membership applies at once');

  const self = (await alice('GET', '/api/v1/security/principals/self')).json() as { roles: string[]; permissions: { value: string }[] };
  t.same(self.roles, ['schedulers']);
  t.ok(self.permissions.some((p) => p.value === 'configuration:scheduler:read'), 'self lists the role permissions');

  t.same((await admin('GET', `${ROLES}schedulers/members`)).json(), [{ identifier: 'alice', name: 'alice', email: 'alice@example.com' }]);

  const removed = await admin('DELETE', `${ROLES}schedulers/members?identifier=alice`);
  t.equal(removed.statusCode, 204);
  t.equal((await alice('GET', TASKS)).statusCode, 403, 'removing the membership withdraws the permission at once');

  // Several at once, removal named in the body; identifiers need not have principal information yet.
  t.same((await admin('POST', `${ROLES}schedulers/members`, { identifiers: ['alice', 'ldap-bob', 'alice'] })).json(), [
    { identifier: 'alice', name: 'alice', email: 'alice@example.com' },
    { identifier: 'ldap-bob' },
  ]);
  t.equal((await admin('POST', `${ROLES}schedulers/members`, { identifier: 'alice' })).statusCode, 200, 'adding a member again is harmless');
  t.equal((await admin('DELETE', `${ROLES}schedulers/members`, { identifiers: ['ldap-bob'] })).statusCode, 204);
  t.same((await admin('GET', `${ROLES}schedulers/members`)).json(), [{ identifier: 'alice', name: 'alice', email: 'alice@example.com' }]);
  t.equal((await alice('GET', TASKS)).statusCode, 200);

  // PUT replaces the role named in the body (a GET's answer echoed back, _id included).
  const current = (await admin('GET', `${ROLES}schedulers`)).json() as Record<string, unknown>;
  const updated = await admin('PUT', ROLES, { ...current, permissions: [{ value: 'configuration:scheduler:write' }], description: null });
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), { _id: current._id, name: 'schedulers', description: [], permissions: [{ value: 'configuration:scheduler:write' }] });
  t.equal((await alice('GET', TASKS)).statusCode, 200, 'write implies read');
  await admin('PUT', ROLES, { name: 'schedulers', permissions: [] });
  t.equal((await alice('GET', TASKS)).statusCode, 403, 'a role change applies at once');

  const list = await admin('GET', ROLES);
  t.same((list.json() as { name: string }[]).map((r) => r.name), ['schedulers']);
  t.equal((await admin('GET', ROLES.slice(0, -1))).statusCode, 200, 'the collection also answers without the trailing slash');

  await admin('PUT', ROLES, { name: 'schedulers', permissions: [{ value: 'configuration:scheduler:read' }] });
  t.equal((await alice('GET', TASKS)).statusCode, 200);
  t.equal((await admin('DELETE', `${ROLES}schedulers`)).statusCode, 204);
  t.equal((await alice('GET', TASKS)).statusCode, 403, 'deleting the role withdraws its permissions');
  t.same(await kernel.db.knex('security_memberships').where({ kind: 'role', group_name: 'schedulers' }), [], 'its memberships are gone');
  const gone = await admin('GET', `${ROLES}schedulers`);
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().error, 'SEC-ROLE-003');

  // A role of the same name created later does not inherit the old members.
  await admin('POST', ROLES, { name: 'schedulers', permissions: [{ value: 'configuration:scheduler:read' }] });
  t.equal((await alice('GET', TASKS)).statusCode, 403);
  t.same((await admin('GET', `${ROLES}schedulers/members`)).json(), []);

  t.same(await eventCodes(kernel), [
    'SEC-ROLE-CREATED',
    'SEC-ROLE-MEMBERS-ADDED',
    'SEC-ROLE-MEMBERS-REMOVED',
    'SEC-ROLE-MEMBERS-ADDED',
    'SEC-ROLE-MEMBERS-ADDED',
    'SEC-ROLE-MEMBERS-REMOVED',
    'SEC-ROLE-UPDATED',
    'SEC-ROLE-UPDATED',
    'SEC-ROLE-UPDATED',
    'SEC-ROLE-DELETED',
    'SEC-ROLE-CREATED',
  ]);
  const event = await kernel.db.knex('events').where({ code: 'SEC-ROLE-MEMBERS-REMOVED' }).orderBy('seq').first();
  t.match(event, { principal: 'administrator', object_type: 'role', object_id: 'schedulers', status: 'success' });
  t.same(JSON.parse(event.payload), { identifiers: ['alice'], via: 'configuration' });
});

t.test('bad role input is refused with a stable code and nothing is written', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  t.equal((await admin('POST', ROLES, { name: 'operators', permissions: [] })).statusCode, 201);
  const before = { roles: await kernel.db.knex('security_roles').count({ n: '*' }).first(), events: (await eventCodes(kernel)).length };

  const cases: [string, Method, string, unknown, number, string, RegExp?][] = [
    ['malformed JSON', 'POST', ROLES, '{"name": "x",', 400, 'HTTP-002'],
    // Invalid input is the collection's own -002 naming the field (every configuration type alike).
    ['unknown field', 'POST', ROLES, { name: 'x', colour: 'red' }, 400, 'SEC-ROLE-002', /colour/],
    ['name with a slash', 'POST', ROLES, { name: 'a/b' }, 400, 'SEC-ROLE-002', /name/],
    ['empty name', 'POST', ROLES, { name: '' }, 400, 'SEC-ROLE-002', /name/],
    ['name too long', 'POST', ROLES, { name: 'x'.repeat(192) }, 400, 'SEC-ROLE-002', /name/],
    ['unknown permission group', 'POST', ROLES, { name: 'x', permissions: [{ value: 'admin' }] }, 400, 'SEC-ROLE-002', /permissions\[0\]: "admin" has an unknown group/],
    ['unknown section', 'POST', ROLES, { name: 'x', permissions: [{ value: 'configuration:scheduler:read' }, { value: 'configuration:nope:read' }] }, 400, 'SEC-ROLE-002', /permissions\[1\]: .*unknown segment "nope"/],
    ['permission field unknown', 'POST', ROLES, { name: 'x', permissions: [{ value: '*', scope: 'all' }] }, 400, 'SEC-ROLE-002', /scope/],
    ['duplicate', 'POST', ROLES, { name: 'operators' }, 400, 'SEC-ROLE-004', /"operators" already exists/],
    ['update of an unknown role', 'PUT', ROLES, { name: 'ghosts' }, 404, 'SEC-ROLE-003'],
    ['bad permission on update', 'PUT', ROLES, { name: 'operators', permissions: [{ value: 'lifecycle:*:*:teleport:direct' }] }, 400, 'SEC-ROLE-002'],
    ['delete of an unknown role', 'DELETE', `${ROLES}ghosts`, undefined, 404, 'SEC-ROLE-003'],
    ['members of an unknown role', 'GET', `${ROLES}ghosts/members`, undefined, 404, 'SEC-ROLE-003'],
    ['adding to an unknown role', 'POST', `${ROLES}ghosts/members`, { identifier: 'alice' }, 404, 'SEC-ROLE-003'],
    ['adding nobody', 'POST', `${ROLES}operators/members`, {}, 400, 'SEC-ROLE-002', /identifier or identifiers/],
    ['removing nobody', 'DELETE', `${ROLES}operators/members`, undefined, 400, 'SEC-ROLE-002'],
    ['a manager flag on a role', 'POST', `${ROLES}operators/members`, { identifier: 'alice', manager: true }, 400, 'HTTP-003'],
  ];
  for (const [name, method, url, payload, status, code, message] of cases) {
    const res = await admin(method, url, payload);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json', name);
    t.equal(res.json().error, code, name);
    if (message) t.match(res.json().message, message, name);
  }
  t.same(await kernel.db.knex('security_roles').count({ n: '*' }).first(), before.roles, 'no role written');
  t.same((await admin('GET', `${ROLES}operators`)).json().permissions, [], 'the refused update left the role as it was');
  t.same(await kernel.db.knex('security_memberships').where({ kind: 'role' }), [], 'no membership written');
  t.equal((await eventCodes(kernel)).length, before.events, 'no event written');

  // Nulls for optional fields and echoed server-owned fields are accepted.
  const tolerant = await admin('POST', ROLES, { _id: 'ignored', createdAt: 1, updatedAt: 2, name: 'auditors', displayName: null, description: null, permissions: [{ value: 'search:*', filter: null }] });
  t.equal(tolerant.statusCode, 201, tolerant.body);
  t.match(tolerant.json(), { name: 'auditors', displayName: [], description: [], permissions: [{ value: 'search:*' }] });
  t.not(tolerant.json()._id, 'ignored');
});

t.test('role routes need credentials and the roles permission', async (t) => {
  const kernel = await bootKernel(t);
  const anonymous = caller(kernel, {});
  const reader = caller(kernel, (await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:roles:read' }] })).headers);
  const nobody = caller(kernel, (await createPrincipal(kernel, 'nobody')).headers);
  await caller(kernel, ADMIN_HEADERS)('POST', ROLES, { name: 'operators' });

  const unauthenticated = await anonymous('GET', ROLES);
  t.equal(unauthenticated.statusCode, 401);
  t.equal(unauthenticated.json().error, 'SEC-AUTH-001');
  t.equal((await anonymous('POST', ROLES, { name: 'x' })).statusCode, 401);
  t.equal((await nobody('GET', ROLES)).statusCode, 403);
  t.equal((await nobody('GET', `${ROLES}operators/members`)).statusCode, 403);
  t.equal((await reader('GET', ROLES)).statusCode, 200);
  t.equal((await reader('GET', `${ROLES}operators/members`)).statusCode, 200);
  const refused = await reader('POST', ROLES, { name: 'x' });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().error, 'SEC-PERM-001');
  t.equal((await reader('POST', `${ROLES}operators/members`, { identifier: 'reader' })).statusCode, 403, 'no self-promotion');
  t.equal((await reader('DELETE', `${ROLES}operators`)).statusCode, 403);
  t.equal((await caller(kernel, ADMIN_HEADERS)('GET', `${ROLES}operators`)).statusCode, 200, 'the refused delete deleted nothing');
});

t.test("plain-string displayName and description (Horizon's MCP server sends them so) are stored as English", async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const created = await admin('POST', ROLES, { name: 'auditors', displayName: 'Auditors', description: 'Read the audit log', permissions: [{ value: 'search:events' }] });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { displayName: [{ lang: 'en', value: 'Auditors' }], description: [{ lang: 'en', value: 'Read the audit log' }] });
  const updated = await admin('PUT', ROLES, { name: 'auditors', description: '', permissions: [{ value: 'search:events' }] });
  t.equal(updated.statusCode, 200, updated.body);
  t.same((await admin('GET', `${ROLES}auditors`)).json().description, [], 'an empty string clears it');
  const bad = await admin('POST', ROLES, { name: 'long', description: 'x'.repeat(5000) });
  t.equal(bad.statusCode, 400, 'a description over 4,096 characters is refused');
});
