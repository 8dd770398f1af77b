import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { DEFAULT_POLICY, passwordProblems, type PasswordPolicy } from '../../../core/security/password-policies/policy.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

const BASE = '/api/v1/security/passwordpolicies/';
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

function client(kernel: Kernel, auth: Record<string, string> = ADMIN_HEADERS) {
  return (method: Method, url: string, payload?: unknown) =>
    kernel.app.inject({
      method,
      url: `${BASE}${url}`,
      headers: { host: 'localhost', ...auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });
}

const shape = (p: PasswordPolicy) => ({ _id: /^[0-9a-f]{24}$/, ...p });

t.test('password policies: the Default policy, create, update, validate, delete', async (t) => {
  const kernel = await bootKernel(t);
  const api = client(kernel);

  const listed = await api('GET', '');
  t.equal(listed.statusCode, 200);
  t.equal(listed.headers['content-type'], 'application/json');
  t.match(listed.json(), [shape(DEFAULT_POLICY)], 'a fresh tenant has exactly the Default policy');
  t.equal(listed.json().length, 1);
  t.same(Object.keys(listed.json()[0]).sort(), ['_id', 'maxChar', 'minChar', 'minDiChar', 'minLoChar', 'minSpChar', 'minUpChar', 'name', 'spChar']);

  const custom = { name: 'pkcs12', minChar: 20, maxChar: 40, minLoChar: 2, minUpChar: 2, minDiChar: 3, minSpChar: 0, spChar: '' };
  const created = await api('POST', '', custom);
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), shape(custom));
  t.match((await api('GET', 'pkcs12')).json(), shape(custom), 'read back');

  const partial = await api('POST', '', { name: 'short', minChar: 8 });
  t.equal(partial.statusCode, 201);
  t.match(partial.json(), shape({ ...DEFAULT_POLICY, name: 'short', minChar: 8 }), 'rules left out take the Default values');

  const dup = await api('POST', '', { name: 'pkcs12' });
  t.equal(dup.statusCode, 400);
  t.match(dup.json(), { error: 'SEC-PWD-004', message: /"pkcs12" already exists/ });

  // PUT: the body names the policy; `_id` echoed back from a GET is accepted; left-out rules keep their value.
  const echoed = { ...(await api('GET', 'pkcs12')).json(), minChar: 24 };
  const updated = await api('PUT', '', echoed);
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), shape({ ...custom, minChar: 24 }));
  const narrowed = await api('PUT', '', { name: 'pkcs12', minSpChar: 1, spChar: '!?' });
  t.match(narrowed.json(), shape({ ...custom, minChar: 24, minSpChar: 1, spChar: '!?' }));

  const missing = await api('PUT', '', { name: 'nope', minChar: 10 });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { error: 'SEC-PWD-003', message: /"nope"/ });
  t.match((await api('GET', 'nope')).json(), { error: 'SEC-PWD-003', status: 404 });

  // Incoherent rules: 400 SEC-PWD-002 naming the problem, and nothing written.
  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['min over max', { minChar: 50, maxChar: 40 }, /minChar is greater than maxChar/],
    ['counts over max', { minChar: 4, maxChar: 8, minLoChar: 3, minUpChar: 3, minDiChar: 3 }, /add up to 10, more than maxChar \(8\)/],
    ['negative', { minDiChar: -1 }, /non-negative integers/],
    ['max too large', { maxChar: 5000 }, /maxChar must be between 1 and 1024/],
    ['specials required, none listed', { minSpChar: 1, spChar: '' }, /minSpChar needs at least one character in spChar/],
    ['white space', { spChar: '! ?' }, /white space/],
    ['not ASCII', { spChar: '!€' }, /printable ASCII/],
  ];
  for (const [name, rules, message] of invalid) {
    const post = await api('POST', '', { name: `bad-${name}`, ...rules });
    t.equal(post.statusCode, 400, `POST ${name}`);
    t.equal(post.headers['content-type'], 'application/problem+json');
    t.match(post.json(), { error: 'SEC-PWD-002', message }, `POST ${name}`);
    const put = await api('PUT', '', { name: 'pkcs12', ...rules });
    t.match(put.json(), { error: 'SEC-PWD-002', message }, `PUT ${name}`);
  }

  // Malformed input: 400 with a stable code, nothing written.
  const malformed: [string, unknown, string][] = [
    ['malformed JSON', '{"name": "x",', 'HTTP-002'],
    // Invalid input is the collection's own -002 naming the field (every configuration type alike).
    ['wrong type', { name: 'x', minChar: 'twelve' }, 'SEC-PWD-002'],
    ['wrong type (object)', { name: { value: 'x' } }, 'SEC-PWD-002'],
    ['unknown field', { name: 'x', minSymbols: 2 }, 'SEC-PWD-002'],
    ['no name', { minChar: 10 }, 'SEC-PWD-002'],
    ['oversize name', { name: 'n'.repeat(192) }, 'SEC-PWD-002'],
    ['slash in name', { name: 'a/b' }, 'SEC-PWD-002'],
  ];
  for (const [name, body, code] of malformed) {
    for (const method of ['POST', 'PUT'] as const) {
      const res = await api(method, '', body);
      t.equal(res.statusCode, 400, `${method} ${name}`);
      t.equal(res.headers['content-type'], 'application/problem+json');
      t.match(res.json(), { error: code }, `${method} ${name}`);
    }
  }
  const after = (await api('GET', '')).json() as PasswordPolicy[];
  t.same(after.map((p) => p.name), ['Default', 'pkcs12', 'short'], 'nothing written by the refused requests');
  t.match(after[1], { ...custom, minChar: 24, minSpChar: 1, spChar: '!?' }, 'pkcs12 unchanged by the refused updates');

  const keepDefault = await api('DELETE', 'Default');
  t.equal(keepDefault.statusCode, 400);
  t.match(keepDefault.json(), { error: 'SEC-PWD-005' });
  const removed = await api('DELETE', 'short');
  t.equal(removed.statusCode, 204);
  t.equal(removed.body, '');
  t.match((await api('DELETE', 'short')).json(), { error: 'SEC-PWD-003', status: 404 });
  t.equal((await api('GET', 'short')).statusCode, 404);
  t.same(((await api('GET', '')).json() as PasswordPolicy[]).map((p) => p.name), ['Default', 'pkcs12']);
});

t.test('the Default policy governs local accounts and can be tightened', async (t) => {
  const kernel = await bootKernel(t);
  const api = client(kernel);
  const policies = kernel.security.passwordPolicies;
  t.same(await policies.forLocalAccounts('default'), DEFAULT_POLICY);
  const res = await api('PUT', '', { name: 'Default', minChar: 30 });
  t.equal(res.statusCode, 200);
  t.same(await policies.forLocalAccounts('default'), { ...DEFAULT_POLICY, minChar: 30 }, 'the stored Default, not the built-in one');
  const generated = (await api('GET', 'Horizon-Default/generate')).json() as string;
  t.ok(generated.length >= 30, 'Horizon-Default follows the changed Default');
});

t.test('ensureDefault seeds Default once, even when nodes race', async (t) => {
  const kernel = await bootKernel(t);
  const policies = kernel.security.passwordPolicies;
  await Promise.all([1, 2, 3, 4, 5].map(() => policies.ensureDefault('tenant-b')));
  await policies.ensureDefault('tenant-b');
  const rows = await kernel.db.knex('security_password_policies').where({ tenant: 'tenant-b' });
  t.equal(rows.length, 1);
  t.match(await policies.list('tenant-b'), [{ ...DEFAULT_POLICY }]);
  t.same(await policies.forLocalAccounts('tenant-c'), DEFAULT_POLICY, 'a tenant without one gets it seeded on first use');
  t.equal((await kernel.db.knex('security_password_policies').where({ tenant: 'tenant-c' })).length, 1);
});

t.test('generate: a bare JSON string satisfying the policy, for any logged-in user', async (t) => {
  const kernel = await bootKernel(t);
  const api = client(kernel);
  const user = await createPrincipal(kernel, 'enroller');
  const asUser = client(kernel, user.headers);

  const policies: Omit<PasswordPolicy, 'name'>[] = [
    { minChar: 12, maxChar: 128, minLoChar: 1, minUpChar: 1, minDiChar: 1, minSpChar: 0, spChar: '' },
    { minChar: 64, maxChar: 64, minLoChar: 5, minUpChar: 5, minDiChar: 5, minSpChar: 0, spChar: '#' },
    { minChar: 4, maxChar: 8, minLoChar: 0, minUpChar: 0, minDiChar: 8, minSpChar: 0, spChar: '' },
    { minChar: 200, maxChar: 1024, minLoChar: 10, minUpChar: 10, minDiChar: 10, minSpChar: 10, spChar: '-_' },
    { minChar: 1, maxChar: 10, minLoChar: 2, minUpChar: 2, minDiChar: 2, minSpChar: 4, spChar: '!' },
  ];
  for (const [i, rules] of policies.entries()) {
    const policy = { name: `p${i}`, ...rules };
    t.equal((await api('POST', '', policy)).statusCode, 201);
    for (let n = 0; n < 20; n++) {
      const res = await asUser('GET', `p${i}/generate`);
      t.equal(res.statusCode, 200);
      const password = res.json() as string;
      if (passwordProblems(policy, password).length > 0) t.fail(`p${i}: ${JSON.stringify(password)} breaks ${passwordProblems(policy, password).join(', ')}`);
      if (password.length > policy.maxChar) t.fail(`p${i}: too long`);
    }
    t.pass(`p${i}: 20 generated passwords satisfy it`);
  }

  // Ansible (client-compat §10): Horizon-Default resolves to Default, answered as a bare JSON string.
  const horizon = await asUser('GET', 'Horizon-Default/generate');
  t.equal(horizon.statusCode, 200);
  t.equal(horizon.headers['content-type'], 'application/json', 'exactly, no charset');
  t.match(horizon.body, /^"[^"]+"$/, 'a JSON string, quotes included');
  t.same(passwordProblems(DEFAULT_POLICY, horizon.json() as string), []);
  const defaultOne = await asUser('GET', 'Default/generate');
  t.same(passwordProblems(DEFAULT_POLICY, defaultOne.json() as string), []);

  // A policy really named Horizon-Default wins over the alias.
  t.equal((await api('POST', '', { name: 'Horizon-Default', minChar: 40, maxChar: 40, minSpChar: 0 })).statusCode, 201);
  t.equal(((await asUser('GET', 'Horizon-Default/generate')).json() as string).length, 40);

  t.match((await asUser('GET', 'unknown/generate')).json(), { error: 'SEC-PWD-003', status: 404 });
  const anonymous = await kernel.app.inject({ url: `${BASE}Default/generate`, headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.json(), { error: 'SEC-AUTH-001' });
});

t.test('access: read and write permissions, credentials required', async (t) => {
  const kernel = await bootKernel(t);
  const reader = client(kernel, (await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:password-policies:read' }] })).headers);
  const writer = client(kernel, (await createPrincipal(kernel, 'writer', { permissions: [{ value: 'configuration:password-policies:write' }] })).headers);
  const nobody = client(kernel, (await createPrincipal(kernel, 'nobody')).headers);
  const anonymous = (method: Method, url: string, payload?: unknown) =>
    kernel.app.inject({ method, url: `${BASE}${url}`, headers: { host: 'localhost' }, ...(payload === undefined ? {} : { payload: payload as object }) });

  t.equal((await reader('GET', '')).statusCode, 200);
  t.equal((await reader('GET', 'Default')).statusCode, 200);
  const denied = await reader('POST', '', { name: 'x' });
  t.equal(denied.statusCode, 403);
  t.match(denied.json(), { error: 'SEC-PERM-001' });
  t.match((await reader('DELETE', 'Default')).json(), { error: 'SEC-PERM-001' });
  t.match((await nobody('GET', '')).json(), { error: 'SEC-PERM-001', status: 403 });
  t.match((await nobody('PUT', '', { name: 'Default', minChar: 13 })).json(), { error: 'SEC-PERM-001' });

  t.equal((await writer('POST', '', { name: 'x' })).statusCode, 201, 'write implies read and write');
  t.equal((await writer('GET', 'x')).statusCode, 200);
  t.equal((await writer('DELETE', 'x')).statusCode, 204);

  for (const [method, url] of [['GET', ''], ['GET', 'Default'], ['POST', ''], ['PUT', ''], ['DELETE', 'Default']] as const) {
    const res = await anonymous(method, url, method === 'POST' || method === 'PUT' ? { name: 'y' } : undefined);
    t.equal(res.statusCode, 401, `${method} ${url} without credentials`);
    t.match(res.json(), { error: 'SEC-AUTH-001' });
  }
  t.same(((await reader('GET', '')).json() as PasswordPolicy[]).map((p) => p.name), ['Default'], 'nothing written by refused requests');
  t.match((await reader('GET', 'Default')).json(), DEFAULT_POLICY);
});

t.test('every policy change is an event naming who made it', async (t) => {
  const kernel = await bootKernel(t);
  const json = { ...ADMIN_HEADERS, 'content-type': 'application/json' };
  const policy = { name: 'Vault', minChar: 20, maxChar: 64, minLoChar: 2, minUpChar: 2, minDiChar: 2, minSpChar: 0, spChar: '' };
  t.equal((await kernel.app.inject({ method: 'POST', url: BASE, headers: json, payload: policy })).statusCode, 201);
  t.equal((await kernel.app.inject({ method: 'PUT', url: BASE, headers: json, payload: { ...policy, minChar: 24 } })).statusCode, 200);
  t.equal((await kernel.app.inject({ method: 'DELETE', url: `${BASE}Vault`, headers: ADMIN_HEADERS })).statusCode, 204);
  const events = await kernel.db.knex('events').where({ module: 'security', object_type: 'password-policy' }).orderBy('seq');
  t.same(events.map((e: { code: string }) => e.code), ['SEC-PWD-CREATED', 'SEC-PWD-UPDATED', 'SEC-PWD-DELETED']);
  t.ok(events.every((e: { principal: string; object_id: string }) => e.principal === 'administrator' && e.object_id === 'Vault'));
  // The changed field names, as for every configuration type (core/config-objects).
  t.match(JSON.parse(events[1].payload), { type: 'password-policy', name: 'Vault', changed: ['minChar'] });
});

t.test("maxChar null (Horizon's MCP server clears it so) means the longest allowed, 1,024", async (t) => {
  const kernel = await bootKernel(t);
  const api = client(kernel);
  const created = await api('POST', '', { name: 'long-ok', minChar: 20, maxChar: 40 });
  t.equal(created.statusCode, 201, created.body);
  const cleared = await api('PUT', '', { name: 'long-ok', maxChar: null });
  t.equal(cleared.statusCode, 200, cleared.body);
  t.match(cleared.json(), { name: 'long-ok', minChar: 20, maxChar: 1024 });
  const generated = (await api('GET', 'long-ok/generate')).json() as string;
  t.ok(generated.length >= 20, 'generation still follows the policy');
  t.equal((await api('PUT', '', { name: 'long-ok', maxChar: 'none' })).statusCode, 400, 'any other non-integer is refused');
});
