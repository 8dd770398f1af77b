import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { DEFAULT_POLICY } from '../../../core/security/password-policies/policy.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { writePlugin } from '../../helpers/plugins.js';
import { createPrincipal, login } from '../../helpers/security.js';

const BASE = '/api/v1/security/identity/locals/';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Res = Awaited<ReturnType<Kernel['app']['inject']>>;

/**
 * Calls the API and keeps every answer, so a test can check at the end that none of them ever carried
 * a password or a hash.
 */
function harness(kernel: Kernel) {
  const answers: string[] = [];
  const call = async (auth: Record<string, string>, method: Method, url: string, payload?: unknown): Promise<Res> => {
    const res = await kernel.app.inject({
      method,
      url: `${BASE}${url}`,
      headers: { host: 'localhost', ...auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });
    answers.push(res.body);
    return res;
  };
  /** GET /self with an API key: the status tells whether the pair authenticates. */
  const self = async (identifier: string, secret: string): Promise<Res> => {
    const res = await kernel.app.inject({ url: '/api/v1/security/principals/self', headers: { host: 'localhost', 'x-api-id': identifier, 'x-api-key': secret } });
    answers.push(res.body);
    return res;
  };
  const admin = (method: Method, url: string, payload?: unknown) => call(ADMIN_HEADERS, method, url, payload);
  const noLeak = (tt: Test, secrets: string[]) => {
    for (const body of answers) {
      if (body.includes('$argon2')) tt.fail(`an answer carries a hash: ${body}`);
      for (const s of secrets) if (body.includes(s)) tt.fail(`an answer carries a password: ${body}`);
    }
    tt.pass(`none of ${answers.length} answers carries a password or a hash`);
  };
  return { call, self, admin, noLeak };
}

// Failed logins are part of these tests: room enough that the address throttle never kicks in.
const config = { security: { throttle: { identifierFreeAttempts: 100, addressFreeAttempts: 1000 } } };
const A1 = 'Alice-Password-1!';
const A2 = 'Alice-Password-2?';
const A3 = 'Alice-Password-3#';
const A4 = 'Alice-Password-4$';
const identityShape = {
  _id: /^[0-9a-f]{24}$/,
  identifier: String,
  enabled: Boolean,
  hasPassword: Boolean,
  createdAt: Number,
  updatedAt: Number,
};

t.test('local identities: create, read, update, delete; accounts work and stop working at once', async (t) => {
  const kernel = await bootKernel(t, config);
  const { admin, self, noLeak } = harness(kernel);

  const created = await admin('POST', '', { identifier: 'alice', name: 'Alice', email: 'alice@example.com', password: A1 });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  const alice = created.json();
  t.match(alice, { ...identityShape, identifier: 'alice', name: 'Alice', email: 'alice@example.com', enabled: true, hasPassword: true });
  t.same(Object.keys(alice).sort(), ['_id', 'createdAt', 'email', 'enabled', 'hasPassword', 'identifier', 'name', 'passwordChangedAt', 'updatedAt']);
  t.type(alice.passwordChangedAt, 'number', 'epoch ms');

  const me = await self('alice', A1);
  t.equal(me.statusCode, 200, 'the new account authenticates with X-API-ID / X-API-KEY');
  t.match(me.json(), { identity: { identifier: 'alice', identityProviderType: 'local' } });

  const bare = await admin('POST', '', { identifier: 'bob', name: null, email: null, password: null });
  t.equal(bare.statusCode, 201);
  t.match(bare.json(), { identifier: 'bob', name: null, email: null, enabled: true, hasPassword: false, passwordChangedAt: null });
  t.equal((await self('bob', 'anything-at-all')).statusCode, 401, 'no password: cannot log in');

  const list = await admin('GET', '');
  t.equal(list.statusCode, 200);
  t.same(list.json().map((i: { identifier: string }) => i.identifier), ['administrator', 'alice', 'bob']);
  t.same((await admin('GET', 'alice')).json(), alice, 'GET :identifier answers what POST did');
  t.match((await admin('GET', 'carol')).json(), { error: 'SEC-LOCAL-003', status: 404 });

  // PUT: left-out fields keep their value, null clears, server-owned fields echoed back are ignored.
  const renamed = await admin('PUT', '', { ...alice, name: 'Alice Liddell', email: null, _id: 'ignored', hasPassword: false, passwordChangedAt: 1 });
  t.equal(renamed.statusCode, 200, renamed.body);
  t.match(renamed.json(), { identifier: 'alice', name: 'Alice Liddell', email: null, enabled: true, hasPassword: true, passwordChangedAt: alice.passwordChangedAt });
  t.match((await admin('PUT', '', { identifier: 'alice' })).json(), { name: 'Alice Liddell', enabled: true });

  const disabled = await admin('PUT', '', { identifier: 'alice', enabled: false });
  t.match(disabled.json(), { enabled: false });
  const refused = await self('alice', A1);
  t.equal(refused.statusCode, 401, 'a disabled account stops working at once (its verified key was cached)');
  t.match(refused.json(), { error: 'SEC-AUTH-002' });
  await admin('PUT', '', { identifier: 'alice', enabled: true });
  t.equal((await self('alice', A1)).statusCode, 200, 'enabled again');

  // A password in a PUT sets it: the old one fails at once, the new one works.
  const withPassword = await admin('PUT', '', { identifier: 'alice', password: A2 });
  t.equal(withPassword.statusCode, 200);
  t.ok(withPassword.json().passwordChangedAt >= alice.passwordChangedAt);
  t.match((await self('alice', A1)).json(), { error: 'SEC-AUTH-002', status: 401 });
  t.equal((await self('alice', A2)).statusCode, 200);

  t.match((await admin('PUT', '', { identifier: 'carol', name: 'x' })).json(), { error: 'SEC-LOCAL-003', status: 404 });
  const dup = await admin('POST', '', { identifier: 'alice', password: A3 });
  t.equal(dup.statusCode, 400);
  t.match(dup.json(), { error: 'SEC-LOCAL-004', message: /"alice" already exists/ });
  t.equal((await self('alice', A2)).statusCode, 200, 'the duplicate did not touch the account');

  // Delete: the account stops working at once.
  const removed = await admin('DELETE', 'alice');
  t.equal(removed.statusCode, 204);
  t.equal(removed.body, '');
  t.match((await self('alice', A2)).json(), { error: 'SEC-AUTH-002' });
  t.equal((await admin('GET', 'alice')).statusCode, 404);
  t.match((await admin('DELETE', 'alice')).json(), { error: 'SEC-LOCAL-003', status: 404 });

  // An administrator cannot lock themselves out.
  const selfDelete = await admin('DELETE', 'administrator');
  t.equal(selfDelete.statusCode, 400);
  t.match(selfDelete.json(), { error: 'SEC-LOCAL-002', message: /your own account/ });
  t.match((await admin('PUT', '', { identifier: 'administrator', enabled: false })).json(), { error: 'SEC-LOCAL-002' });
  t.match((await admin('GET', 'administrator')).json(), { enabled: true });

  // Events: one per write, by whom, about which account, without secrets.
  const events = (await kernel.db.knex('events').where({ object_type: 'local-identity' }).orderBy('seq')) as { code: string; principal: string; object_id: string; status: string; payload: string }[];
  t.same(
    events.map((e) => [e.code, e.object_id]),
    [
      ['SEC-LOCAL-CREATED', 'alice'],
      ['SEC-LOCAL-CREATED', 'bob'],
      ['SEC-LOCAL-UPDATED', 'alice'],
      ['SEC-LOCAL-UPDATED', 'alice'],
      ['SEC-LOCAL-UPDATED', 'alice'],
      ['SEC-LOCAL-UPDATED', 'alice'],
      ['SEC-LOCAL-UPDATED', 'alice'],
      ['SEC-LOCAL-PASSWORD-CHANGED', 'alice'],
      ['SEC-LOCAL-DELETED', 'alice'],
    ],
  );
  t.ok(events.every((e) => e.principal === 'administrator' && e.status === 'success'));
  t.match(JSON.parse(events[0]!.payload), { name: 'Alice', enabled: true, hasPassword: true });
  t.notOk(events.some((e) => e.payload.includes('Alice-Password') || e.payload.includes('$argon2')), 'no secret in any event');
  noLeak(t, [A1, A2, A3]);
});

t.test('every password goes through the Default policy', async (t) => {
  const kernel = await bootKernel(t, config);
  const { admin, call, self, noLeak } = harness(kernel);
  const weak = 'weakpassword';
  const refused = await admin('POST', '', { identifier: 'dave', password: weak });
  t.equal(refused.statusCode, 400);
  t.equal(refused.headers['content-type'], 'application/problem+json');
  t.match(refused.json(), { error: 'SEC-LOCAL-005', message: /at least 1 upper-case letter\(s\), at least 1 digit\(s\), at least 1 of / });
  t.equal((await admin('GET', 'dave')).statusCode, 404, 'nothing written');

  t.equal((await admin('POST', '', { identifier: 'dave', name: 'Dave', password: 'Dave-Password-1!' })).statusCode, 201);
  const erin = await createPrincipal(kernel, 'erin');
  for (const [label, res] of [
    ['PUT', await admin('PUT', '', { identifier: 'dave', name: 'Changed', password: weak })],
    ['PATCH', await admin('PATCH', '', { identifier: 'dave', password: weak })],
    ['empty', await admin('PATCH', '', { identifier: 'dave', password: '' })],
    ['self-service', await call(erin.headers, 'POST', 'password', { currentPassword: erin.secret, password: weak })],
  ] as const) {
    t.equal(res.statusCode, 400, label);
    t.match(res.json(), { error: 'SEC-LOCAL-005' }, label);
  }
  t.match((await admin('GET', 'dave')).json(), { name: 'Dave' }, 'a refused PUT changes nothing, not even the name');
  t.equal((await self('dave', 'Dave-Password-1!')).statusCode, 200, 'the password is unchanged');
  t.equal((await self('erin', erin.secret)).statusCode, 200);

  // Tightening Default applies to the next password set.
  const tightened = await kernel.app.inject({
    method: 'PUT',
    url: '/api/v1/security/passwordpolicies/',
    headers: { host: 'localhost', ...ADMIN_HEADERS },
    payload: { name: 'Default', minChar: 20 },
  });
  t.equal(tightened.statusCode, 200);
  t.match((await admin('PATCH', '', { identifier: 'dave', password: 'Dave-Password-2!' })).json(), { error: 'SEC-LOCAL-005', message: /at least 20 characters/ });
  t.equal((await admin('PATCH', '', { identifier: 'dave', password: 'Dave-Password-2!-long-enough' })).statusCode, 200);

  // GET password/:identifier: the rules that apply, for the account itself or a reader.
  const rules = await call(erin.headers, 'GET', 'password/erin');
  t.equal(rules.statusCode, 200, rules.body);
  t.match(rules.json(), { _id: /^[0-9a-f]{24}$/, ...DEFAULT_POLICY, minChar: 20 });
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:identities:read' }] });
  t.match((await call(reader.headers, 'GET', 'password/dave')).json(), { name: 'Default', minChar: 20 });
  t.match((await call(erin.headers, 'GET', 'password/dave')).json(), { error: 'SEC-PERM-001', status: 403 }, "another account's rules need the permission");
  t.match((await admin('GET', 'password/nobody')).json(), { error: 'SEC-LOCAL-003', status: 404 });
  t.match((await call({}, 'GET', 'password/erin')).json(), { error: 'SEC-AUTH-001', status: 401 });
  noLeak(t, [weak, 'Dave-Password-1!', 'Dave-Password-2!']);
});

t.test('PATCH sets a password: administrators, or the account itself', async (t) => {
  const kernel = await bootKernel(t, config);
  const { admin, call, self, noLeak } = harness(kernel);
  const alice = await createPrincipal(kernel, 'alice', { secret: A1 });
  const mallory = await createPrincipal(kernel, 'mallory');

  t.equal((await self('alice', A1)).statusCode, 200, 'logged in once: its verified key is cached');
  const set = await admin('PATCH', '', { identifier: 'alice', password: A2 });
  t.equal(set.statusCode, 200, set.body);
  t.match(set.json(), { ...identityShape, identifier: 'alice', hasPassword: true });
  t.match((await self('alice', A1)).json(), { error: 'SEC-AUTH-002', status: 401 }, 'the old password fails at once');
  t.equal((await self('alice', A2)).statusCode, 200, 'the new one works');

  const own = await call({ 'x-api-id': 'alice', 'x-api-key': A2 }, 'PATCH', '', { identifier: 'alice', password: A3 });
  t.equal(own.statusCode, 200, 'the account itself may, without the permission');
  t.equal((await self('alice', A3)).statusCode, 200);

  const other = await call(mallory.headers, 'PATCH', '', { identifier: 'alice', password: A4 });
  t.equal(other.statusCode, 403);
  t.match(other.json(), { error: 'SEC-PERM-001' });
  t.equal((await self('alice', A3)).statusCode, 200, 'unchanged');
  t.match((await call({}, 'PATCH', '', { identifier: 'alice', password: A4 })).json(), { error: 'SEC-AUTH-001', status: 401 });
  t.match((await admin('PATCH', '', { identifier: 'carol', password: A4 })).json(), { error: 'SEC-LOCAL-003', status: 404 });

  for (const [label, body] of [
    ['no password', { identifier: 'alice' }],
    ['password not a string', { identifier: 'alice', password: { value: A4 } }],
    ['unknown field', { identifier: 'alice', password: A4, name: 'x' }],
  ] as const) {
    const res = await admin('PATCH', '', body);
    t.equal(res.statusCode, 400, label);
    t.match(res.json(), { error: 'HTTP-003' }, label);
  }
  t.equal((await self('alice', A3)).statusCode, 200, 'nothing written by the refused requests');

  const events = (await kernel.db.knex('events').where({ code: 'SEC-LOCAL-PASSWORD-CHANGED' }).orderBy('seq')) as { principal: string; payload: string }[];
  t.same(
    events.map((e) => [e.principal, JSON.parse(e.payload)]),
    [
      ['administrator', { selfService: false }],
      ['alice', { selfService: true }],
    ],
  );
  noLeak(t, [A1, A2, A3, A4]);
});

t.test('PATCH by self: only the local account itself, not a namesake from another provider', async (t) => {
  // A provider type that trusts a header naming the user (a stand-in for a directory).
  const plugins = tempDir(t);
  writePlugin(
    plugins,
    'header-idp',
    { id: 'header-idp', kind: 'identity-provider', sdk: '^1.1.0' },
    `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.identityProviders.register('header', (instance) => {
      const principal = (identifier, tenant) => ({ identifier, identityProviderName: instance.name, identityProviderType: 'header', tenant });
      return {
        async authenticate(input) {
          const user = input.headers['x-directory-user'];
          return typeof user === 'string' ? principal(user, input.tenant) : null;
        },
        async lookup(identifier, tenant) { return principal(identifier, tenant); },
      };
    });
  },
});
`,
  );
  const kernel = await bootKernel(t, { ...config, plugins: { paths: [plugins] } });
  await kernel.security.providers.create('default', { name: 'directory', type: 'header', enabled: true, config: {} });
  const { call, self, noLeak } = harness(kernel);
  await createPrincipal(kernel, 'alice', { secret: A1 });
  const directoryAlice = { 'x-directory-user': 'alice' };
  t.match((await call(directoryAlice, 'GET', 'password/alice')).json(), { name: 'Default' }, 'the directory user is "alice" for orSelf');

  const takeover = await call(directoryAlice, 'PATCH', '', { identifier: 'alice', password: A2 });
  t.equal(takeover.statusCode, 403);
  t.match(takeover.json(), { error: 'SEC-PERM-001' });
  t.equal((await self('alice', A1)).statusCode, 200, 'the local account keeps its password');

  const noAccount = await call({ 'x-directory-user': 'zed' }, 'POST', 'password', { currentPassword: A1, password: A2 });
  t.equal(noAccount.statusCode, 404, 'a directory user without a local account has no password here');
  t.match(noAccount.json(), { error: 'SEC-LOCAL-003' });

  // With the permission, the provider does not matter.
  await kernel.db.knex('security_principal_infos').where({ identifier: 'alice' }).update({ permissions: JSON.stringify([{ value: 'configuration:identities:write' }]) });
  kernel.security.invalidate();
  t.equal((await call(directoryAlice, 'PATCH', '', { identifier: 'alice', password: A2 })).statusCode, 200);
  t.equal((await self('alice', A2)).statusCode, 200);
  noLeak(t, [A1, A2]);
});

t.test('self-service password change needs the current password', async (t) => {
  const kernel = await bootKernel(t, config);
  const { call, self, noLeak } = harness(kernel);
  await createPrincipal(kernel, 'alice', { secret: A1 });
  await createPrincipal(kernel, 'bob');
  const asAlice = (secret: string) => ({ 'x-api-id': 'alice', 'x-api-key': secret });

  const wrong = await call(asAlice(A1), 'POST', 'password', { currentPassword: 'Not-The-Password-1!', password: A2 });
  t.equal(wrong.statusCode, 400);
  t.match(wrong.json(), { error: 'SEC-LOCAL-006' });
  t.equal((await self('alice', A1)).statusCode, 200, 'unchanged');

  const changed = await call(asAlice(A1), 'POST', 'password', { identifier: 'alice', currentPassword: A1, password: A2 });
  t.equal(changed.statusCode, 200, changed.body);
  t.match(changed.json(), { identifier: 'alice', hasPassword: true });
  t.match((await self('alice', A1)).json(), { error: 'SEC-AUTH-002' }, 'old password fails at once');
  t.equal((await self('alice', A2)).statusCode, 200);

  const aliases = await call(asAlice(A2), 'POST', 'password', { oldPassword: A2, newPassword: A3 });
  t.equal(aliases.statusCode, 200, 'oldPassword / newPassword are accepted');
  t.equal((await self('alice', A3)).statusCode, 200);

  const someoneElse = await call(asAlice(A3), 'POST', 'password', { identifier: 'bob', currentPassword: A3, password: A4 });
  t.equal(someoneElse.statusCode, 403);
  t.match(someoneElse.json(), { error: 'SEC-PERM-001' });
  t.match((await call({}, 'POST', 'password', { currentPassword: A3, password: A4 })).json(), { error: 'SEC-AUTH-001', status: 401 });
  for (const [label, body] of [
    ['no current password', { password: A4 }],
    ['no new password', { currentPassword: A3 }],
    ['unknown field', { currentPassword: A3, password: A4, confirm: A4 }],
    ['malformed JSON', '{"currentPassword": '],
  ] as const) {
    const res = await call(asAlice(A3), 'POST', 'password', body);
    t.equal(res.statusCode, 400, label);
    t.match(res.json(), { error: label === 'malformed JSON' ? 'HTTP-002' : 'HTTP-003' }, label);
  }
  t.equal((await self('alice', A3)).statusCode, 200, 'nothing written by the refused requests');

  // From a browser session: the CSRF token is required, then the same rules.
  const session = await login(kernel, asAlice(A3));
  const viaSession = (headers: Record<string, string>) =>
    call({ cookie: session.cookie, ...headers }, 'POST', 'password', { currentPassword: A3, password: A4 });
  t.match((await viaSession({})).json(), { error: 'SEC-AUTH-002', status: 401 }, 'no csrf-token header');
  const ok = await viaSession({ 'csrf-token': session.csrf });
  t.equal(ok.statusCode, 200, ok.body);
  t.equal((await self('alice', A4)).statusCode, 200);

  const failures = (await kernel.db.knex('events').where({ code: 'SEC-LOCAL-PASSWORD-CHANGED', status: 'failure' })) as { principal: string }[];
  t.same(failures.map((f) => f.principal), ['alice'], 'the wrong current password is recorded');
  noLeak(t, [A1, A2, A3, A4, 'Not-The-Password-1!']);
});

t.test('access and malformed input on the configuration routes', async (t) => {
  const kernel = await bootKernel(t, config);
  const { admin, call, noLeak } = harness(kernel);
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:identities:read' }] });
  const nobody = await createPrincipal(kernel, 'nobody');

  t.equal((await call(reader.headers, 'GET', '')).statusCode, 200);
  t.equal((await call(reader.headers, 'GET', 'nobody')).statusCode, 200);
  for (const [method, url, body] of [
    ['POST', '', { identifier: 'x' }],
    ['PUT', '', { identifier: 'nobody', name: 'x' }],
    ['DELETE', 'nobody', undefined],
  ] as const) {
    t.match((await call(reader.headers, method, url, body)).json(), { error: 'SEC-PERM-001', status: 403 }, `${method} needs write`);
    t.match((await call({}, method, url, body)).json(), { error: 'SEC-AUTH-001', status: 401 }, `${method} needs credentials`);
  }
  t.match((await call(nobody.headers, 'GET', '')).json(), { error: 'SEC-PERM-001' });
  t.match((await call(nobody.headers, 'GET', 'nobody')).json(), { error: 'SEC-PERM-001' }, 'reading your own account needs the permission too');
  t.match((await call({}, 'GET', '')).json(), { error: 'SEC-AUTH-001' });

  const malformed: [string, unknown, string][] = [
    ['malformed JSON', '{"identifier": "x"', 'HTTP-002'],
    ['no identifier', { name: 'x' }, 'HTTP-003'],
    ['identifier not a string', { identifier: { id: 'x' } }, 'HTTP-003'],
    ['enabled not a boolean', { identifier: 'x', enabled: 'maybe' }, 'HTTP-003'],
    ['unknown field', { identifier: 'x', roles: ['admin'] }, 'HTTP-003'],
    ['oversize identifier', { identifier: 'x'.repeat(192) }, 'HTTP-003'],
    ['empty identifier', { identifier: '' }, 'HTTP-003'],
    ['slash in identifier', { identifier: 'a/b' }, 'HTTP-003'],
    ['oversize email', { identifier: 'x', email: `${'e'.repeat(320)}@x` }, 'HTTP-003'],
  ];
  for (const [label, body, code] of malformed) {
    for (const method of ['POST', 'PUT'] as const) {
      const res = await admin(method, '', body);
      t.equal(res.statusCode, 400, `${method} ${label}`);
      t.equal(res.headers['content-type'], 'application/problem+json');
      t.match(res.json(), { error: code }, `${method} ${label}`);
    }
  }
  t.equal((await admin('GET', 'x'.repeat(192))).statusCode, 400, 'oversize identifier in the path');
  t.same(
    (await admin('GET', '')).json().map((i: { identifier: string }) => i.identifier),
    ['administrator', 'nobody', 'reader'],
    'nothing written by the refused requests',
  );
  t.equal(await kernel.db.knex('events').where({ object_type: 'local-identity' }).count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'no event either');

  // 191 characters is the limit, not beyond.
  const longest = await admin('POST', '', { identifier: 'y'.repeat(191), enabled: false });
  t.equal(longest.statusCode, 201);
  t.match(longest.json(), { identifier: 'y'.repeat(191), enabled: false, hasPassword: false });
  noLeak(t, [reader.secret, nobody.secret]);
});
