/**
 * OpenID Connect login end to end (issue 28, item 2): the identity-oidc plugin against a real `oidc-provider` on
 * 127.0.0.1, the browser's part played by hand (the platform through inject, the provider's login and consent forms
 * over HTTP). The provider and the platform's providers are configured through the API, the client secret through
 * a credential.
 */
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { startIdp, type TestIdp } from './oidc-fixture.js';

const HOST = 'localhost';
const BASE = '/api/v1/security/identity/providers';
const STATE_COOKIE = 'certwright-login-state';
const WRONG_SECRET = 'not-the-client-secret-Zr81!';
const callbackOf = (name: string): string => `http://${HOST}${BASE}/${name}/callback`;

const capture = new LogCapture();
const kernel: Kernel = await bootKernel(t, {}, { capture });
const idp: TestIdp = await startIdp([callbackOf('corp-sso'), callbackOf('corp-wrong'), callbackOf('corp-other')]);
t.teardown(() => idp.close());

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse> =>
  kernel.app.inject({ method, url, headers: { host: HOST, ...ADMIN_HEADERS }, ...(payload !== undefined ? { payload: payload as object } : {}) });
const get = (url: string, cookie?: string): Promise<LightMyRequestResponse> =>
  kernel.app.inject({ method: 'GET', url, headers: { host: HOST, ...(cookie ? { cookie } : {}) } });

const setCookies = (res: LightMyRequestResponse): string[] => {
  const h = res.headers['set-cookie'];
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
};
const cookieLine = (res: LightMyRequestResponse, name: string): string | undefined => setCookies(res).find((c) => c.startsWith(`${name}=`));
const cookieValue = (res: LightMyRequestResponse, name: string): string | undefined => {
  const line = cookieLine(res, name);
  return line === undefined ? undefined : decodeURIComponent(line.slice(name.length + 1).split(';')[0]!);
};

async function failureEvents(): Promise<{ principal: string | null; payload: Record<string, unknown> }[]> {
  const rows = (await kernel.db.knex('events').where({ code: 'SEC-LOGIN-FAILURE' }).orderBy('seq').select('principal', 'payload')) as { principal: string | null; payload: string }[];
  return rows.map((r) => ({ principal: r.principal, payload: JSON.parse(r.payload) as Record<string, unknown> }));
}

/** A problem answer of `status` and `code`: problem+json, no stack, never a 500. */
function isProblem(t: Test, res: LightMyRequestResponse, status: number, code: string, what: string): void {
  t.equal(res.statusCode, status, `${what}: ${status}`);
  t.match(res.headers['content-type'], /^application\/problem\+json/, `${what}: problem+json`);
  const body = res.json() as Record<string, unknown>;
  t.equal(body.error, code, `${what}: ${code}`);
  t.equal(body.status, status);
  t.notOk(/\bat .+\.(ts|js):\d+/.test(res.body) || 'stack' in body, `${what}: no stack`);
  t.notOk(cookieLine(res, 'PLAY_SESSION'), `${what}: no session`);
}

/** /login → the provider's forms as `account` → the callback URL (not yet called). */
async function throughProvider(provider: string, account: string, returnTo?: string): Promise<{ login: LightMyRequestResponse; state: string; callback: URL }> {
  const login = await get(`${BASE}/${provider}/login${returnTo !== undefined ? `?returnTo=${encodeURIComponent(returnTo)}` : ''}`);
  if (login.statusCode !== 302) throw new Error(`login answered ${login.statusCode}: ${login.body}`);
  const state = cookieValue(login, STATE_COOKIE);
  if (!state) throw new Error('no state cookie');
  const callback = await idp.authorize(login.headers.location as string, account, callbackOf(provider));
  return { login, state, callback };
}

const callbackPath = (u: URL): string => `${u.pathname}${u.search}`;

async function fullLogin(provider: string, account: string, returnTo?: string): Promise<{ res: LightMyRequestResponse; session: string; state: string; callback: URL }> {
  const { state, callback } = await throughProvider(provider, account, returnTo);
  const res = await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`);
  return { res, session: cookieValue(res, 'PLAY_SESSION') ?? '', state, callback };
}

// --- configuration through the API ---

for (const [name, secret] of [
  ['oidc-client', idp.clientSecret],
  ['oidc-wrong', WRONG_SECRET],
] as const) {
  const res = await api('POST', '/api/v1/security/credentials/', { name, type: 'raw', secret: { value: secret }, targets: ['identity-provider'] });
  if (res.statusCode !== 201) throw new Error(res.body);
}
for (const role of ['auditor', 'operator']) await api('POST', '/api/v1/security/roles/', { name: role, permissions: [] });
for (const team of ['ops', 'dev', 'hand-team']) await api('POST', '/api/v1/security/teams/', { name: team });

const oidcConfig = (clientSecret: string): Record<string, unknown> => ({
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret,
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: { identifier: 'preferred_username', roles: 'roles', teams: 'groups' },
  teamMap: { 'grp-ops': 'ops', 'grp-dev': 'dev', 'grp-ghost': 'ghost-team' },
  userinfo: true,
  allowedAlgorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
  // The provider is on http://127.0.0.1: the instance's egress policy must say so (https and public hosts otherwise).
  allowHttp: true,
  allowPrivateNetworks: true,
});

t.test('providers are configured through the API; the secret is a credential and never answered', async (t) => {
  const created = await api('POST', `${BASE}/`, { name: 'corp-sso', type: 'oidc', enabled: true, config: oidcConfig('oidc-client') });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'corp-sso', type: 'oidc', config: { clientSecret: 'oidc-client', scopes: ['openid', 'email', 'profile', 'groups'], tokenEndpointAuthMethod: 'client_secret_basic' } });
  t.equal((await api('POST', `${BASE}/`, { name: 'corp-wrong', type: 'oidc', config: oidcConfig('oidc-wrong') })).statusCode, 201);
  t.equal((await api('POST', `${BASE}/`, { name: 'corp-other', type: 'oidc', config: oidcConfig('oidc-client') })).statusCode, 201);
  t.equal((await api('POST', `${BASE}/`, { name: 'corp-off', type: 'oidc', enabled: false, config: oidcConfig('oidc-client') })).statusCode, 201);

  const refused = await api('POST', `${BASE}/`, { name: 'corp-bad', type: 'oidc', config: { clientId: 'x', clientSecret: 'oidc-client' } });
  t.equal(refused.statusCode, 400, 'neither issuer nor metadata: refused');
  t.equal((refused.json() as { error: string }).error, 'SEC-IDP-002');

  const enabled = await get(`${BASE}/dynamic/enabled`);
  t.equal(enabled.statusCode, 200);
  t.same(
    (enabled.json() as { name: string; type: string }[]).filter((p) => p.type === 'oidc'),
    [
      { name: 'corp-other', type: 'oidc' },
      { name: 'corp-sso', type: 'oidc' },
      { name: 'corp-wrong', type: 'oidc' },
    ],
    'the login page lists the enabled OIDC providers (not the disabled one)',
  );

  for (const url of [`${BASE}/`, `${BASE}/corp-sso`, '/api/v1/security/credentials/', '/api/v1/security/credentials/oidc-client']) {
    const res = await api('GET', url);
    t.equal(res.statusCode, 200, url);
    t.notOk(res.body.includes(idp.clientSecret), `${url}: no client secret`);
  }
});

t.test('a login through the provider opens a session with the mapped identity, roles and teams', async (t) => {
  idp.accounts.set('alice', {
    preferred_username: 'alice',
    name: 'Alice Martin',
    email: 'alice@example.com',
    roles: ['operator', 'no-such-role'],
    groups: ['grp-ops', 'grp-dev', 'grp-unmapped', 'grp-ghost'],
  });
  // Granted by hand before any login: a role the claims also name, and a team they never name.
  t.equal((await api('POST', '/api/v1/security/roles/auditor/members', { identifier: 'alice' })).statusCode, 200);
  t.equal((await api('POST', '/api/v1/security/teams/hand-team/members', { identifier: 'alice' })).statusCode, 200);
  idp.accounts.get('alice')!.roles = ['operator', 'auditor', 'no-such-role'];

  const { login, state, callback } = await throughProvider('corp-sso', 'alice', '/certificates?view=mine');
  const redirect = new URL(login.headers.location as string);
  t.equal(redirect.origin, idp.issuer, '302 to the provider');
  t.equal(redirect.searchParams.get('code_challenge_method'), 'S256', 'PKCE S256');
  t.ok(redirect.searchParams.get('code_challenge'));
  t.ok(redirect.searchParams.get('state'), 'state');
  t.ok(redirect.searchParams.get('nonce'), 'nonce');
  t.equal(redirect.searchParams.get('redirect_uri'), callbackOf('corp-sso'), 'the callback URL from the request host and protocol');
  t.equal(redirect.searchParams.get('scope'), 'openid email profile groups');
  t.notOk(login.headers.location!.toString().includes(idp.clientSecret));
  const stateLine = cookieLine(login, STATE_COOKIE)!;
  t.match(stateLine, /HttpOnly/i, 'state cookie HttpOnly');
  t.match(stateLine, /SameSite=Lax/i, 'state cookie SameSite=Lax');
  t.match(stateLine, new RegExp(`Path=${BASE}/corp-sso/callback`), 'state cookie only sent to the callback');
  t.match(stateLine, /Max-Age=600/, 'state cookie short-lived');
  t.notOk(state.includes(redirect.searchParams.get('nonce')!), 'the state cookie is sealed, not readable');

  const res = await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`);
  t.equal(res.statusCode, 302, res.body);
  t.equal(res.headers.location, '/certificates?view=mine', 'back to returnTo');
  const session = cookieValue(res, 'PLAY_SESSION');
  t.ok(session, 'PLAY_SESSION set');
  t.match(cookieLine(res, 'PLAY_SESSION'), /HttpOnly/i);
  t.ok(cookieValue(res, 'csrf-token'), 'csrf-token set');
  t.match(cookieLine(res, STATE_COOKIE), /Max-Age=0/, 'the state cookie is cleared');

  const self = await get('/api/v1/security/principals/self', `PLAY_SESSION=${session}`);
  t.equal(self.statusCode, 200, self.body);
  const body = self.json() as { identity: Record<string, string>; roles: string[]; teams: string[] };
  t.same(body.identity, { identifier: 'alice', identityProviderName: 'corp-sso', identityProviderType: 'oidc', name: 'Alice Martin', email: 'alice@example.com' });
  t.same(body.roles, ['auditor', 'operator'], 'roles from the claims that exist');
  t.same(body.teams, ['dev', 'hand-team', 'ops'], 'teams from the mapped claims, plus the hand-granted one');
  t.match(capture.text, /no-such-role/, 'the unknown role is logged');
  t.match(capture.text, /ghost-team/, 'the unknown team is logged');

  const granted = (await kernel.db.knex('security_memberships').where({ identifier: 'alice' }).orderBy(['kind', 'group_name']).select('kind', 'group_name', 'granted_by')) as { kind: string; group_name: string; granted_by: string | null }[];
  t.same(granted, [
    { kind: 'role', group_name: 'auditor', granted_by: null },
    { kind: 'role', group_name: 'operator', granted_by: 'idp:corp-sso' },
    { kind: 'team', group_name: 'dev', granted_by: 'idp:corp-sso' },
    { kind: 'team', group_name: 'hand-team', granted_by: null },
    { kind: 'team', group_name: 'ops', granted_by: 'idp:corp-sso' },
  ]);
  const success = await kernel.db.knex('events').where({ code: 'SEC-LOGIN-SUCCESS', principal: 'alice' }).first();
  t.ok(success, 'a login event');
  t.match(JSON.parse(success.payload as string), { method: 'interactive', provider: 'corp-sso', rolesAdded: ['operator'], teamsAdded: ['dev', 'ops'] });

  const methods = idp.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`);
  t.ok(methods.includes('GET /.well-known/openid-configuration'), 'discovery');
  t.ok(methods.includes('POST /token'), 'token exchange');
  t.ok(methods.includes('GET /me'), 'userinfo');
});

t.test('a later login with fewer groups drops what the provider granted, and nothing granted by hand', async (t) => {
  const alice = idp.accounts.get('alice')!;
  alice.roles = ['operator'];
  alice.groups = ['grp-ops'];
  alice.name = 'Alice Martin-Durand';
  const { res, session } = await fullLogin('corp-sso', 'alice');
  t.equal(res.statusCode, 302, res.body);
  t.equal(res.headers.location, '/', 'no returnTo: /');
  const self = (await get('/api/v1/security/principals/self', `PLAY_SESSION=${session}`)).json() as { identity: Record<string, string>; roles: string[]; teams: string[] };
  t.same(self.roles, ['auditor', 'operator'], 'auditor stays: it was granted by hand');
  t.same(self.teams, ['hand-team', 'ops'], 'dev is dropped, hand-team stays');
  t.equal(self.identity.name, 'Alice Martin-Durand', 'the name of the latest login');

  // An administrator grants ops by hand too: the membership becomes theirs, and outlives the claims.
  t.equal((await api('POST', '/api/v1/security/teams/ops/members', { identifier: 'alice' })).statusCode, 200);
  alice.roles = [];
  alice.groups = [];
  const again = await fullLogin('corp-sso', 'alice');
  const last = (await get('/api/v1/security/principals/self', `PLAY_SESSION=${again.session}`)).json() as { roles: string[]; teams: string[] };
  t.same(last.roles, ['auditor']);
  t.same(last.teams, ['hand-team', 'ops'], 'ops, granted by hand as well, stays when the claims drop it');
});

t.test('failures are 401/404 problems with a failure event, never a 500', async (t) => {
  idp.accounts.set('bob', { preferred_username: 'bob', name: 'Bob', email: 'bob@example.com', groups: ['grp-ops'] });
  const before = (await failureEvents()).length;
  const reasons: string[] = [];
  const expectReason = (reason: string): void => {
    reasons.push(reason);
  };

  // Tampered state: one character of the sealed cookie changed.
  {
    const { state, callback } = await throughProvider('corp-sso', 'bob');
    const at = state.length - 5;
    const tampered = state.slice(0, at) + (state[at] === 'A' ? 'B' : 'A') + state.slice(at + 1);
    const res = await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(tampered)}`);
    isProblem(t, res, 401, 'SEC-AUTH-002', 'tampered state');
    expectReason('state-invalid');
    // The untouched state still works once: the provider's code was not spent.
    const ok = await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`);
    t.equal(ok.statusCode, 302, 'the genuine state then logs in');
    // Code replayed: the same callback again (state cookie kept by an attacker).
    const replay = await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`);
    isProblem(t, replay, 401, 'SEC-AUTH-002', 'code replayed');
    expectReason('refused-by-provider');
  }

  // Missing state cookie.
  {
    const { callback } = await throughProvider('corp-sso', 'bob');
    isProblem(t, await get(callbackPath(callback)), 401, 'SEC-AUTH-003', 'missing state cookie');
    expectReason('state-missing');
  }

  // Expired state: the genuine state, sealed again with its expiry in the past.
  {
    const { state, callback } = await throughProvider('corp-sso', 'bob');
    const aad = 'login-state:default:corp-sso';
    const opened = JSON.parse(kernel.secrets.openString(state, aad)) as { exp: number };
    opened.exp = Date.now() - 1000;
    const expired = kernel.secrets.seal(JSON.stringify(opened), aad);
    isProblem(t, await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(expired)}`), 401, 'SEC-AUTH-003', 'expired state');
    expectReason('state-expired');
  }

  // A state made for another provider (sealed to its name).
  {
    const { state } = await throughProvider('corp-other', 'bob');
    const { callback } = await throughProvider('corp-sso', 'bob');
    isProblem(t, await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`), 401, 'SEC-AUTH-002', "another provider's state");
    expectReason('state-invalid');
  }

  // State mismatch: a genuine state cookie from another login of the same provider.
  {
    const first = await throughProvider('corp-sso', 'bob');
    const second = await throughProvider('corp-sso', 'bob');
    isProblem(t, await get(callbackPath(second.callback), `${STATE_COOKIE}=${encodeURIComponent(first.state)}`), 401, 'SEC-AUTH-002', 'state of another login');
    expectReason('refused-by-provider');
  }

  // The provider says no (the user refused, or an error): its error in the query.
  {
    const { state } = await throughProvider('corp-sso', 'bob');
    const res = await get(`${BASE}/corp-sso/callback?error=access_denied&state=x`, `${STATE_COOKIE}=${encodeURIComponent(state)}`);
    isProblem(t, res, 401, 'SEC-AUTH-002', 'provider error');
    expectReason('refused-by-provider');
  }

  // Wrong client secret: the token endpoint refuses the client.
  {
    const { res } = await fullLogin('corp-wrong', 'bob');
    isProblem(t, res, 401, 'SEC-AUTH-002', 'wrong client secret');
    expectReason('refused-by-provider');
  }

  // Unknown provider, disabled provider, a provider that has no browser login.
  isProblem(t, await get(`${BASE}/nobody/login`), 404, 'SEC-IDP-003', 'unknown provider (login)');
  isProblem(t, await get(`${BASE}/nobody/callback?code=x&state=y`), 404, 'SEC-IDP-003', 'unknown provider (callback)');
  expectReason('unknown-provider');
  isProblem(t, await get(`${BASE}/corp-off/login`), 404, 'SEC-IDP-003', 'disabled provider (login)');
  isProblem(t, await get(`${BASE}/corp-off/callback?code=x&state=y`), 404, 'SEC-IDP-003', 'disabled provider (callback)');
  expectReason('unknown-provider');
  isProblem(t, await get(`${BASE}/local/login`), 404, 'SEC-IDP-003', 'local accounts have no browser login');

  const events = (await failureEvents()).slice(before);
  t.same(
    events.map((e) => e.payload.reason),
    reasons,
    'one SEC-LOGIN-FAILURE event per failed callback, with its reason',
  );
  for (const e of events) t.match(e.payload, { method: 'interactive', address: String, route: `${BASE}/:name/callback` });
  t.equal(events.find((e) => e.payload.reason === 'refused-by-provider')?.payload.provider, 'corp-sso');

  // A provider disabled after the login started: its callback is refused too.
  {
    const { state, callback } = await throughProvider('corp-other', 'bob');
    const current = (await api('GET', `${BASE}/corp-other`)).json() as Record<string, unknown>;
    t.equal((await api('PUT', `${BASE}/`, { ...current, enabled: false })).statusCode, 200);
    isProblem(t, await get(callbackPath(callback), `${STATE_COOKIE}=${encodeURIComponent(state)}`), 404, 'SEC-IDP-003', 'provider disabled mid-login');
  }

  // The causes are in the technical log; no secret is.
  const refusals = capture.lines.filter((l) => l.includes('interactive login failed') && l.includes('refused-by-provider'));
  t.ok(refusals.length >= 3, 'provider refusals are logged with their cause');
  t.ok(refusals.some((l) => /invalid_client|client authentication failed/i.test(l)), 'the wrong secret: the cause is in the log');
  t.ok(refusals.some((l) => /invalid_grant/i.test(l)), 'the replayed code: the cause is in the log');
  t.notOk(capture.text.includes(idp.clientSecret), 'the client secret is not logged');
  t.notOk(capture.text.includes(WRONG_SECRET), 'the wrong secret is not logged');
});

t.test('returnTo accepts only same-origin paths', async (t) => {
  for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/\t/evil.example', 'evil']) {
    const res = await get(`${BASE}/corp-sso/login?returnTo=${encodeURIComponent(evil)}`);
    t.equal(res.statusCode, 400, `${JSON.stringify(evil)} refused`);
    t.notOk(res.headers.location, 'no redirect');
  }
  const ok = await get(`${BASE}/corp-sso/login?returnTo=${encodeURIComponent('/requests/42?tab=1#top')}`);
  t.equal(ok.statusCode, 302);
});

t.test('a principal disabled in principal information cannot log in', async (t) => {
  idp.accounts.set('carol', { preferred_username: 'carol', name: 'Carol' });
  const created = await api('POST', '/api/v1/security/principalinfos/', { identifier: 'carol', enabled: false });
  t.ok([200, 201].includes(created.statusCode), created.body);
  const { res } = await fullLogin('corp-sso', 'carol');
  isProblem(t, res, 401, 'SEC-AUTH-005', 'disabled principal');
});
