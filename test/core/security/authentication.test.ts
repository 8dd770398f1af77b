import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { SessionTokens } from '../../../core/security/auth/session.js';
import { ADMIN_HEADERS, bootKernel, LogCapture, TEST_ADMIN_SECRET, testConfig } from '../../helpers/kernel.js';
import { createPrincipal, login } from '../../helpers/security.js';

const SELF = '/api/v1/security/principals/self';
const INVALID = 'Invalid credentials or principal does not exist';

t.test('first start: the administrator exists with every permission; its generated secret is printed once and kept 0600', async (t) => {
  const capture = new LogCapture();
  const config = await testConfig(t, { security: { adminSecret: null }, log: { level: 'info' } });
  const kernel = await bootKernel(t, {}, { config, capture });
  const file = join(config.dataDir, 'initial-admin.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'initial-admin.json is mode 0600');
  const { identifier, secret } = JSON.parse(readFileSync(file, 'utf8')) as { identifier: string; secret: string };
  t.equal(identifier, 'administrator');
  t.ok(secret.length >= 24, 'a long generated secret');
  t.equal(capture.lines.filter((l) => l.includes(secret)).length, 1, 'the secret is in exactly one log line');

  const self = await kernel.app.inject({ url: SELF, headers: { 'x-api-id': 'administrator', 'x-api-key': secret } });
  t.equal(self.statusCode, 200, self.body);
  t.equal(self.headers['content-type'], 'application/json');
  t.match(self.json(), {
    identity: { identifier: 'administrator', identityProviderName: 'local', identityProviderType: 'local' },
    permissions: [{ value: '*' }],
    roles: [],
    teams: [],
  });
  await kernel.stop();

  // A second start on the same database neither recreates the account nor prints anything.
  const again = new LogCapture();
  const second = await bootKernel(t, {}, { config, capture: again });
  t.notMatch(again.text, secret, 'no secret printed on a later start');
  t.equal((await second.app.inject({ url: SELF, headers: { 'x-api-id': 'administrator', 'x-api-key': secret } })).statusCode, 200, 'same secret still valid');
});

t.test('CERTWRIGHT_ADMIN_SECRET must satisfy the Default policy', async (t) => {
  const config = await testConfig(t, { security: { adminSecret: 'weakweakweakweak' } });
  await t.rejects(bootKernel(t, {}, { config }), /CERTWRIGHT_ADMIN_SECRET .* does not satisfy the Default password policy: it needs .*upper-case/);
});

t.test('API key: header names are case-insensitive; a wrong key is 401 SEC-AUTH-002 with the exact title', async (t) => {
  const kernel = await bootKernel(t);
  const ok = await kernel.app.inject({ url: SELF, headers: { 'X-API-ID': 'administrator', 'X-Api-Key': TEST_ADMIN_SECRET } });
  t.equal(ok.statusCode, 200);

  const cases: [string, Record<string, string>, string][] = [
    ['wrong key', { ...ADMIN_HEADERS, 'x-api-key': 'Wrong-Secret-1!' }, 'SEC-AUTH-002'],
    ['unknown identifier', { 'x-api-id': 'nobody', 'x-api-key': TEST_ADMIN_SECRET }, 'SEC-AUTH-002'],
    ['id without key', { 'x-api-id': 'administrator' }, 'SEC-AUTH-002'],
    ['no credentials at all', {}, 'SEC-AUTH-001'],
    ['garbage session cookie', { cookie: 'PLAY_SESSION=not-a-token' }, 'SEC-AUTH-002'],
    ['oversized key', { 'x-api-id': 'administrator', 'x-api-key': 'x'.repeat(5000) }, 'SEC-AUTH-002'],
  ];
  for (const [name, headers, code] of cases) {
    const res = await kernel.app.inject({ url: SELF, headers });
    t.equal(res.statusCode, 401, `${name}: 401`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.match(res.json(), { error: code, status: 401 }, name);
    if (code === 'SEC-AUTH-002') t.match(res.json(), { title: INVALID, message: INVALID }, `${name}: the spec's title and message`);
  }
});

t.test('verified-key cache: repeated API-key calls verify argon2id once; a changed or disabled account stops at once', async (t) => {
  const kernel = await bootKernel(t);
  const alice = await createPrincipal(kernel, 'alice');
  const hasher = kernel.security.hasher;
  const verify = hasher.verify.bind(hasher);
  let verifications = 0;
  hasher.verify = (hash, secret) => {
    verifications++;
    return verify(hash, secret);
  };
  for (let i = 0; i < 20; i++) t.equal((await kernel.app.inject({ url: SELF, headers: alice.headers })).statusCode, 200);
  t.equal(verifications, 1, 'one argon2id verification for 20 calls');

  const wrong = { ...alice.headers, 'x-api-key': 'Not-Alice-Secret-1!' };
  t.equal((await kernel.app.inject({ url: SELF, headers: wrong })).statusCode, 401);
  t.equal(verifications, 2, 'a wrong key is never served from the cache');

  await kernel.security.identities.setSecretHash('default', 'alice', await hasher.hash('New-Alice-Secret-1!'));
  kernel.security.invalidate();
  t.equal((await kernel.app.inject({ url: SELF, headers: alice.headers })).statusCode, 401, 'the old key fails as soon as the secret changes');
  t.equal((await kernel.app.inject({ url: SELF, headers: { ...alice.headers, 'x-api-key': 'New-Alice-Secret-1!' } })).statusCode, 200, 'the new one works');

  await kernel.security.identities.update('default', 'alice', { enabled: false });
  kernel.security.invalidate();
  t.equal((await kernel.app.inject({ url: SELF, headers: { ...alice.headers, 'x-api-key': 'New-Alice-Secret-1!' } })).statusCode, 401, 'a disabled account cannot log in');
});

t.test('HTTP Basic authenticates local accounts too', async (t) => {
  const kernel = await bootKernel(t);
  const basic = `Basic ${Buffer.from(`administrator:${TEST_ADMIN_SECRET}`).toString('base64')}`;
  t.equal((await kernel.app.inject({ url: SELF, headers: { authorization: basic } })).statusCode, 200);
  const bad = `Basic ${Buffer.from('administrator:nope').toString('base64')}`;
  t.match((await kernel.app.inject({ url: SELF, headers: { authorization: bad } })).json(), { error: 'SEC-AUTH-002' });
});

t.test('login sets PLAY_SESSION (HttpOnly, SameSite=Lax, bounded) and csrf-token; the cookie alone authenticates', async (t) => {
  const kernel = await bootKernel(t, { security: { session: { lifetimeMs: 3_600_000 } } });
  const res = await kernel.app.inject({ url: '/api/v1/security/principals/authenticate', headers: ADMIN_HEADERS });
  t.equal(res.statusCode, 200);
  t.match(res.json(), { identity: { identifier: 'administrator' } }, 'answers the principal');
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const session = cookies.find((c) => c.startsWith('PLAY_SESSION='))!;
  const csrf = cookies.find((c) => c.startsWith('csrf-token='))!;
  t.match(session, /; Max-Age=3600; Path=\/; HttpOnly; SameSite=Lax$/, 'session cookie attributes (no Secure over plain HTTP)');
  t.match(csrf, /; Max-Age=3600; Path=\/; SameSite=Lax$/, 'the csrf cookie is readable by the page');
  t.notMatch(csrf, /HttpOnly/);

  const { cookie } = await login(kernel, ADMIN_HEADERS);
  const self = await kernel.app.inject({ url: SELF, headers: { cookie } });
  t.equal(self.statusCode, 200, 'PLAY_SESSION alone authenticates');

  const token = cookie.match(/PLAY_SESSION=([^;]+)/)![1]!;
  const tampered = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie: `PLAY_SESSION=${tampered}` } })).json(), { status: 401, error: 'SEC-AUTH-002' }, 'a tampered token');

  // A genuine token whose lifetime is over.
  const past = new SessionTokens(kernel.secrets.deriveKey('session-signing'), 60_000, () => Date.now() - 120_000);
  const { token: expired } = await past.issue({ identifier: 'administrator', tenant: 'default', identityProviderName: 'local', identityProviderType: 'local' });
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie: `PLAY_SESSION=${expired}` } })).json(), { status: 401, error: 'SEC-AUTH-003' }, 'an expired session');
  // A token signed with another key (another installation's master key).
  const foreign = new SessionTokens(Buffer.alloc(32, 7), 60_000, Date.now);
  const { token: other } = await foreign.issue({ identifier: 'administrator', tenant: 'default', identityProviderName: 'local', identityProviderType: 'local' });
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie: `PLAY_SESSION=${other}` } })).json(), { status: 401, error: 'SEC-AUTH-002' }, 'a token of another key');
});

t.test('Secure cookies under TLS (behind a trusted proxy) or when configured', async (t) => {
  const proxied = await bootKernel(t, { server: { trustProxy: true } });
  const res = await proxied.app.inject({ url: '/api/v1/security/principals/authenticate', headers: { ...ADMIN_HEADERS, 'x-forwarded-proto': 'https' } });
  t.ok(([] as string[]).concat(res.headers['set-cookie'] ?? []).every((c) => /; Secure/.test(c)), 'Secure over https');
  const always = await bootKernel(t, { security: { session: { secureCookies: 'always' } } });
  const res2 = await always.app.inject({ url: '/api/v1/security/principals/authenticate', headers: ADMIN_HEADERS });
  t.ok(([] as string[]).concat(res2.headers['set-cookie'] ?? []).every((c) => /; Secure/.test(c)), 'Secure when always');
});

t.test('CSRF (spec rules 4–8)', async (t) => {
  const kernel = await bootKernel(t);
  const { cookie, csrf } = await login(kernel, ADMIN_HEADERS);
  const post = (headers: Record<string, string>) =>
    kernel.app.inject({ method: 'POST', url: '/api/v1/security/principals/preferences', headers: { 'content-type': 'application/json', ...headers }, payload: { theme: 'dark' } });

  const missing = await post({ cookie });
  t.equal(missing.statusCode, 401, 'cookie session POST without csrf-token → 401');
  t.match(missing.json(), { error: 'SEC-AUTH-002', title: INVALID, message: INVALID });
  t.equal((await post({ cookie, 'csrf-token': 'something-else' })).statusCode, 401, 'a header that differs from the cookie → 401');
  const forged = cookie.replace(/csrf-token=[^;]+/, 'csrf-token=forged');
  t.equal((await post({ cookie: forged, 'csrf-token': 'forged' })).statusCode, 401, 'a planted csrf cookie that is not the session’s → 401');
  const ok = await post({ cookie, 'csrf-token': csrf });
  t.equal(ok.statusCode, 200, `with the token → success: ${ok.body}`);
  t.same(ok.json(), { theme: 'dark' });

  t.equal((await post({ ...ADMIN_HEADERS })).statusCode, 200, 'an API-key POST without cookies needs no token');
  t.equal((await post({ ...ADMIN_HEADERS, cookie: 'lb-affinity=node2' })).statusCode, 401, 'an API-key POST that carries a cookie is subject to CSRF (rule 4)');
  const basic = `Basic ${Buffer.from(`administrator:${TEST_ADMIN_SECRET}`).toString('base64')}`;
  t.equal((await post({ authorization: basic })).statusCode, 401, 'an Authorization header makes a POST subject to CSRF (rule 4)');
  t.equal((await kernel.app.inject({ url: SELF, headers: { authorization: basic } })).statusCode, 200, 'GET is never subject to CSRF');
  t.equal((await kernel.app.inject({ url: SELF, headers: { cookie } })).statusCode, 200);

  // A client that lost the cookie gets the token from GET /api/v1/security/csrf.
  const fetched = await kernel.app.inject({ url: '/api/v1/security/csrf', headers: { cookie } });
  t.same(fetched.json(), { token: csrf, csrfToken: csrf });
});

t.test('logout ends the session on every node and clears the cookies', async (t) => {
  const kernel = await bootKernel(t);
  const { cookie } = await login(kernel, ADMIN_HEADERS);
  const out = await kernel.app.inject({ url: '/api/v1/security/principals/logout', headers: { cookie } });
  t.equal(out.statusCode, 204);
  const cleared = ([] as string[]).concat(out.headers['set-cookie'] ?? []);
  t.ok(cleared.some((c) => /^PLAY_SESSION=; Max-Age=0/.test(c)) && cleared.some((c) => /^csrf-token=; Max-Age=0/.test(c)), 'both cookies cleared');
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie } })).json(), { status: 401, error: 'SEC-AUTH-003' }, 'the old cookie is refused');
  const rows = await kernel.db.knex('security_revoked_sessions').count({ n: '*' }).first();
  t.equal(Number(rows!.n), 1, 'revocation is in the database, shared by every node');
  t.equal((await kernel.app.inject({ url: '/api/v1/security/principals/logout' })).statusCode, 204, 'logout without a session is harmless');
});

t.test('a removed account loses its sessions', async (t) => {
  const kernel = await bootKernel(t);
  const bob = await createPrincipal(kernel, 'bob');
  const { cookie } = await login(kernel, bob.headers);
  t.equal((await kernel.app.inject({ url: SELF, headers: { cookie } })).statusCode, 200);
  await kernel.security.identities.remove('default', 'bob');
  kernel.security.invalidate();
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie } })).json(), { status: 401, error: 'SEC-AUTH-005' });
});

t.test('brute force is throttled per (identifier, address) and per address, never per identifier alone; failures are events', async (t) => {
  const kernel = await bootKernel(t, { security: { throttle: { identifierFreeAttempts: 2, addressFreeAttempts: 6, identifierAlertAttempts: 3 } } });
  const carol = await createPrincipal(kernel, 'carol');
  const wrong = { ...carol.headers, 'x-api-key': 'Wrong-Carol-Key-1!' };
  for (let i = 1; i <= 3; i++) t.equal((await kernel.app.inject({ url: SELF, headers: wrong })).statusCode, 401, `failure ${i}: 401`);
  const locked = await kernel.app.inject({ url: SELF, headers: carol.headers });
  t.equal(locked.statusCode, 429, 'after the free attempts even the right key waits, from the failing address');
  t.equal(locked.headers['content-type'], 'application/problem+json');
  t.match(locked.json(), { status: 429, error: 'SEC-RATE-001' });
  t.equal(locked.headers['retry-after'], '1', 'Retry-After in seconds');
  // The real carol, from an address that was not failing, is not locked out by someone guessing her key.
  const elsewhere = await kernel.app.inject({ url: SELF, headers: carol.headers, remoteAddress: '10.20.30.40' });
  t.equal(elsewhere.statusCode, 200, 'the same identifier from another address logs in');
  const alert = await kernel.db.knex('events').where({ code: 'SEC-LOGIN-TARGETED' });
  t.equal(alert.length, 1, 'the third failure for carol raised one alert event');
  t.equal(alert[0].principal, 'carol');
  t.match(JSON.parse(alert[0].payload), { failures: 3, address: '127.0.0.1' });
  await new Promise((r) => setTimeout(r, 1100));
  // A key answered from the verified-key cache skips the counters; a verified login resets its pair's.
  kernel.security.invalidate();
  t.equal((await kernel.app.inject({ url: SELF, headers: carol.headers })).statusCode, 200, 'after the lock the right key works');
  const row = await kernel.db.knex('security_login_failures').where({ key: 'pair:default:127.0.0.1:carol' }).first();
  t.equal(row, undefined, 'a success resets the (identifier, address) counter');

  // Other identifiers from the same address: the address counter (6 free) locks them all.
  for (let i = 0; i < 4; i++) await kernel.app.inject({ url: SELF, headers: { 'x-api-id': `guess-${i}`, 'x-api-key': 'Guess-Key-1!' } });
  const byAddress = await kernel.app.inject({ url: SELF, headers: { 'x-api-id': 'administrator', 'x-api-key': 'Guess-Key-1!' } });
  t.equal(byAddress.statusCode, 429, 'the address is locked after its free attempts');
  t.equal((await kernel.app.inject({ url: SELF, headers: carol.headers, remoteAddress: '10.20.30.40' })).statusCode, 200, 'another address is not');

  const events = await kernel.db.knex('events').where({ code: 'SEC-LOGIN-FAILURE' }).orderBy('seq');
  t.equal(events.length, 7, 'one event per failed login');
  t.match(JSON.parse(events[0].payload), { method: 'api-key', address: '127.0.0.1' });
  t.equal(events[0].principal, 'carol');
  t.equal((await kernel.events.verify()).ok, true, 'the event chain stays valid');
});

t.test('no answer and no log line contains a secret, a hash or a session token', async (t) => {
  const capture = new LogCapture();
  const kernel = await bootKernel(t, { log: { level: 'trace', requests: true } }, { capture });
  const dave = await createPrincipal(kernel, 'dave', { secret: 'Dave-Very-Secret-9!' });
  const bodies: string[] = [];
  const call = async (url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET') => {
    const res = await kernel.app.inject({ method, url, headers, ...(method === 'POST' ? { payload: {} } : {}) });
    bodies.push(res.body, JSON.stringify(res.headers['set-cookie'] ?? ''));
    return res;
  };
  await call(SELF, dave.headers);
  await call(SELF, { ...dave.headers, 'x-api-key': 'Dave-Wrong-Secret-9!' });
  await call(SELF, { authorization: `Basic ${Buffer.from('dave:Dave-Very-Secret-9!').toString('base64')}` });
  const { cookie, csrf } = await login(kernel, dave.headers);
  await call(SELF, { cookie });
  await call('/api/v1/security/principals/preferences', { cookie }, 'POST');
  await call('/api/v1/security/principals/logout', { cookie });
  const token = cookie.match(/PLAY_SESSION=([^;]+)/)![1]!;
  const hash = (await kernel.db.knex('security_local_identities').where({ identifier: 'dave' }).first()).secret_hash as string;
  for (const [what, value] of [
    ['secret', 'Dave-Very-Secret-9!'],
    ['wrong secret', 'Dave-Wrong-Secret-9!'],
    ['admin secret', TEST_ADMIN_SECRET],
    ['hash', hash],
    ['argon2 prefix', '$argon2'],
    ['session token', token],
    ['csrf token', csrf],
  ] as const) {
    t.notOk(capture.text.includes(value), `no log line contains the ${what}`);
  }
  for (const value of ['Dave-Very-Secret-9!', 'Dave-Wrong-Secret-9!', hash, '$argon2']) t.notOk(bodies.join('\n').includes(value), 'no answer contains a secret or hash');
  t.ok(capture.lines.length > 10, 'the log was written (requests at trace level)');
});

t.test('a password change ends the sessions opened before it; a new login works', async (t) => {
  const kernel = await bootKernel(t);
  const erin = await createPrincipal(kernel, 'erin');
  const before = await login(kernel, erin.headers);
  t.equal((await kernel.app.inject({ url: SELF, headers: { cookie: before.cookie } })).statusCode, 200);
  const changed = await kernel.app.inject({
    method: 'PATCH',
    url: '/api/v1/security/identity/locals/',
    headers: { ...ADMIN_HEADERS, 'content-type': 'application/json' },
    payload: { identifier: 'erin', password: 'Erin-New-Secret-2!' },
  });
  t.equal(changed.statusCode, 200, changed.body);
  t.match((await kernel.app.inject({ url: SELF, headers: { cookie: before.cookie } })).json(), { status: 401, error: 'SEC-AUTH-003' }, 'the old session is refused');
  const after = await login(kernel, { 'x-api-id': 'erin', 'x-api-key': 'Erin-New-Secret-2!' });
  t.equal((await kernel.app.inject({ url: SELF, headers: { cookie: after.cookie } })).statusCode, 200, 'a session opened after the change works');
});
