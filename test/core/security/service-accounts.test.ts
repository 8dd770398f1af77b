import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';

/**
 * JWKS service accounts (spec "Authentication": X-API-SVA + the JWT in X-API-TOKEN or Authorization: Bearer).
 * The JWKS is served over HTTP on loopback by a plain node server the test rotates; the tokens are made
 * with jose the way a Kubernetes projected service-account token and a GitHub Actions OIDC token look.
 */

const ACCOUNTS = '/api/v1/security/service-accounts/';
const SELF = '/api/v1/security/principals/self';
const K8S_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const GH_ISSUER = 'https://token.actions.githubusercontent.com';
/** security.serviceAccounts.jwksRefreshCooldownMs in these tests (30 s by default). */
const COOLDOWN_MS = 1500;

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signingKey(kid: string, alg: 'RS256' | 'ES256' | 'EdDSA'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** A JWKS endpoint whose key set the test swaps (rotation), counting its fetches. */
async function jwksServer(t: Test, keys: SigningKey[]): Promise<{ url: string; set(keys: SigningKey[]): void; fetches(): number }> {
  let current = keys;
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: current.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/openid/v1/jwks`, set: (k) => (current = k), fetches: () => fetches };
}

interface TokenOptions {
  iss?: string;
  aud?: string | string[];
  sub?: string;
  claims?: Record<string, unknown>;
  iatOffset?: number;
  expiresIn?: number;
}

async function token(key: SigningKey, o: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const iat = now + (o.iatOffset ?? 0);
  return new SignJWT({ ...(o.claims ?? {}) })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(o.iss ?? K8S_ISSUER)
    .setAudience(o.aud ?? 'certwright')
    .setSubject(o.sub ?? 'system:serviceaccount:ci:deployer')
    .setIssuedAt(iat)
    .setExpirationTime(iat + (o.expiresIn ?? 600))
    .sign(key.privateKey);
}

const asAccount = (kernel: Kernel, name: string, jwt: string, how: 'x-api-token' | 'bearer' = 'x-api-token') =>
  caller(kernel, { 'x-api-sva': name, ...(how === 'bearer' ? { authorization: `Bearer ${jwt}` } : { 'x-api-token': jwt }) });

const securityEvents = async (kernel: Kernel): Promise<number> =>
  Number(((await kernel.db.knex('events').where({ module: 'security' }).count({ n: '*' })) as { n: number | string }[])[0]!.n);

t.test('a Kubernetes projected token and a GitHub Actions token log in by their service accounts', async (t) => {
  const capture = new LogCapture();
  const kernel = await bootKernel(t, { log: { level: 'info' }, security: { serviceAccounts: { jwksRefreshCooldownMs: COOLDOWN_MS } } }, { capture });
  const admin = caller(kernel, ADMIN_HEADERS);
  const k1 = await signingKey('k8s-1', 'RS256');
  const gh = await signingKey('gh-1', 'ES256');
  const k8sJwks = await jwksServer(t, [k1]);

  t.equal((await admin('POST', '/api/v1/security/roles/', { name: 'searchers', permissions: [{ value: 'search:certificates' }] })).statusCode, 201);

  const created = await admin('POST', ACCOUNTS, {
    name: 'ci-deployer',
    description: 'Deployments from the ci namespace',
    jwks: [{ url: k8sJwks.url }],
    issuer: K8S_ISSUER,
    audience: 'certwright',
    subjects: ['system:serviceaccount:ci:*'],
    requiredClaims: { 'kubernetes.io/namespace': 'ci' },
    maxTokenAgeSeconds: 3600,
    algorithms: ['RS256'],
    roles: ['searchers'],
    permissions: [{ value: 'configuration:scheduler:read' }],
  });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'ci-deployer', enabled: true, roles: ['searchers'], jwks: [{ url: k8sJwks.url }] });

  const staticGh = await admin('POST', ACCOUNTS, {
    name: 'github-release',
    jwks: [{ keys: [gh.publicJwk] }],
    issuer: GH_ISSUER,
    audience: ['https://certwright.example', 'certwright'],
    subjects: ['repo:acme/app:ref:refs/heads/main', 'repo:acme/app:environment:*'],
    requiredClaims: { repository_owner: 'acme', event_name: ['push', 'workflow_dispatch'] },
    permissions: [{ value: 'configuration:scheduler:read' }],
  });
  t.equal(staticGh.statusCode, 201, staticGh.body);

  const listed = (await admin('GET', ACCOUNTS)).json() as { name: string }[];
  t.same(listed.map((a) => a.name).sort(), ['ci-deployer', 'github-release'], 'GET lists both');
  t.equal((await admin('GET', `${ACCOUNTS}ci-deployer`)).json().issuer, K8S_ISSUER, 'GET :name reads one');
  t.same((await admin('GET', `${ACCOUNTS}github-release`)).json().jwks, [{ keys: [gh.publicJwk] }], 'static keys read back whole (every JWK member)');

  const k8sToken = await token(k1, { claims: { 'kubernetes.io/namespace': 'ci' } });
  const self = await asAccount(kernel, 'ci-deployer', k8sToken)('GET', SELF);
  t.equal(self.statusCode, 200, self.body);
  t.match(self.json(), { identity: { identifier: 'ci-deployer', identityProviderType: 'jwks' }, roles: ['searchers'] });
  const values = (self.json().permissions as { value: string }[]).map((p) => p.value).sort();
  t.same(values, ['configuration:scheduler:read', 'search:certificates'], 'own permissions plus the role\'s');
  t.notOk(self.headers['set-cookie'], 'no cookie on a service-account call');
  t.equal((await asAccount(kernel, 'ci-deployer', k8sToken)('GET', '/api/v1/scheduler/tasks/')).statusCode, 200, 'its permission lets it read the scheduler');
  t.equal((await asAccount(kernel, 'ci-deployer', k8sToken)('GET', ACCOUNTS)).statusCode, 403, 'and nothing it was not granted');

  const login = await asAccount(kernel, 'ci-deployer', k8sToken, 'bearer')('GET', '/api/v1/security/principals/authenticate');
  t.equal(login.statusCode, 200, 'the Bearer form authenticates too');
  t.notOk(login.headers['set-cookie'], '/authenticate opens no PLAY_SESSION for a service account (spec rule 2)');

  const search = await asAccount(kernel, 'ci-deployer', k8sToken, 'bearer')('POST', '/api/v1/certificates/search', { query: null, withCount: true, pageIndex: 1 });
  t.equal(search.statusCode, 200, `a POST with a Bearer token needs no csrf-token (no ambient credential): ${search.body}`);

  const ghToken = await token(gh, { iss: GH_ISSUER, aud: 'https://certwright.example', sub: 'repo:acme/app:environment:production', claims: { repository_owner: 'acme', event_name: 'push' } });
  const ghSelf = await asAccount(kernel, 'github-release', ghToken, 'bearer')('GET', SELF);
  t.equal(ghSelf.statusCode, 200, ghSelf.body);
  t.equal(ghSelf.json().identity.identifier, 'github-release');

  // Key rotation: the issuer publishes a new key; a token with the new kid makes the JWKS be fetched again.
  const k2 = await signingKey('k8s-2', 'RS256');
  k8sJwks.set([k2]);
  await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 100)); // the issuer's rotation is not instant either
  const before = k8sJwks.fetches();
  const rotated = await asAccount(kernel, 'ci-deployer', await token(k2, { claims: { 'kubernetes.io/namespace': 'ci' } }))('GET', SELF);
  t.equal(rotated.statusCode, 200, `a token signed by the rotated key is accepted: ${rotated.body}`);
  t.ok(k8sJwks.fetches() > before, 'the unknown kid made the JWKS be fetched again');
  const oldKeyToken = await token(k1, { claims: { 'kubernetes.io/namespace': 'ci' } });
  t.equal((await asAccount(kernel, 'ci-deployer', oldKeyToken)('GET', SELF)).statusCode, 401, 'a new token signed by the retired key is refused');

  // Unknown kids do not turn into a request to the issuer each (cooldown).
  const fetchesNow = k8sJwks.fetches();
  const stranger = await signingKey('nobody-knows', 'RS256');
  for (let i = 0; i < 5; i++) await asAccount(kernel, 'ci-deployer', await token(stranger, { claims: { 'kubernetes.io/namespace': 'ci' } }))('GET', SELF);
  t.ok(k8sJwks.fetches() - fetchesNow <= 1, `five unknown kids cost at most one JWKS fetch (${k8sJwks.fetches() - fetchesNow})`);

  // Changing the account applies on the next request.
  const put = await admin('PUT', ACCOUNTS, { ...((await admin('GET', `${ACCOUNTS}github-release`)).json() as object), enabled: false });
  t.equal(put.statusCode, 200, put.body);
  t.equal((await asAccount(kernel, 'github-release', ghToken, 'bearer')('GET', SELF)).statusCode, 401, 'a disabled account refuses even a token it accepted before');
  t.notOk(capture.text.includes(k8sToken) || capture.text.includes(ghToken), 'no token is ever written to the log');

  t.equal((await admin('DELETE', `${ACCOUNTS}github-release`)).statusCode, 204);
  t.equal((await admin('GET', `${ACCOUNTS}github-release`)).statusCode, 404);
});

t.test('every refused token is a bare 401, its cause in the technical log only', async (t) => {
  const capture = new LogCapture();
  const kernel = await bootKernel(t, { log: { level: 'info' } }, { capture });
  const admin = caller(kernel, ADMIN_HEADERS);
  const key = await signingKey('k', 'ES256');
  const other = await signingKey('k', 'ES256'); // same kid, other key: a forged signature
  const created = await admin('POST', ACCOUNTS, {
    name: 'ci',
    jwks: [{ keys: [key.publicJwk] }],
    issuer: K8S_ISSUER,
    audience: 'certwright',
    subjects: ['system:serviceaccount:ci:*'],
    requiredClaims: { 'kubernetes.io/namespace': 'ci' },
    maxTokenAgeSeconds: 300,
    permissions: [{ value: 'configuration:scheduler:read' }],
  });
  t.equal(created.statusCode, 201, created.body);
  const good = { claims: { 'kubernetes.io/namespace': 'ci' } };
  t.equal((await asAccount(kernel, 'ci', await token(key, good))('GET', SELF)).statusCode, 200, 'the good token passes');

  const hs256 = await new SignJWT({ 'kubernetes.io/namespace': 'ci' })
    .setProtectedHeader({ alg: 'HS256', kid: 'k' })
    .setIssuer(K8S_ISSUER)
    .setAudience('certwright')
    .setSubject('system:serviceaccount:ci:x')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode('a-shared-secret-anyone-could-guess-0123456789'));
  const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: K8S_ISSUER, aud: 'certwright', sub: 'system:serviceaccount:ci:x', exp: Math.floor(Date.now() / 1000) + 60, 'kubernetes.io/namespace': 'ci' })).toString('base64url')}.`;
  const cases: [string, Record<string, string>, string][] = [
    ['expired', { 'x-api-sva': 'ci', 'x-api-token': await token(key, { ...good, iatOffset: -700, expiresIn: 600 }) }, 'exp'],
    ['too old (maxTokenAgeSeconds)', { 'x-api-sva': 'ci', 'x-api-token': await token(key, { ...good, iatOffset: -400, expiresIn: 3600 }) }, 'iat'],
    ['wrong audience', { 'x-api-sva': 'ci', 'x-api-token': await token(key, { ...good, aud: 'someone-else' }) }, 'aud'],
    ['wrong issuer', { 'x-api-sva': 'ci', 'x-api-token': await token(key, { ...good, iss: 'https://evil.example' }) }, 'iss'],
    ['subject outside the patterns', { 'x-api-sva': 'ci', 'x-api-token': await token(key, { ...good, sub: 'system:serviceaccount:prod:deployer' }) }, 'subject'],
    ['required claim missing', { 'x-api-sva': 'ci', 'x-api-token': await token(key) }, 'kubernetes.io/namespace'],
    ['forged signature', { 'x-api-sva': 'ci', 'x-api-token': await token(other, good) }, 'signature'],
    ['HS256 with a guessed secret', { 'x-api-sva': 'ci', 'x-api-token': hs256 }, 'alg'],
    ['alg none', { 'x-api-sva': 'ci', 'x-api-token': unsigned }, ''],
    ['garbage', { 'x-api-sva': 'ci', 'x-api-token': 'not-a-jwt' }, ''],
    ['oversized', { 'x-api-sva': 'ci', 'x-api-token': 'a'.repeat(20_000) }, '16 KiB'],
    ['no token', { 'x-api-sva': 'ci' }, 'no token'],
    ['unknown account', { 'x-api-sva': 'nobody', 'x-api-token': await token(key, good) }, 'no such service account'],
  ];
  const eventsBefore = await securityEvents(kernel);
  for (const [label, headers, reason] of cases) {
    const res = await caller(kernel, headers)('GET', SELF);
    t.equal(res.statusCode, 401, `${label}: 401`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${label}: a problem body`);
    t.match(res.json(), { error: 'SEC-AUTH-007', message: 'The service account token was refused' }, `${label}: the same code and message whatever the cause`);
    t.notMatch(res.body, /stack|exp|iat|aud|iss|signature|subject|claim/i, `${label}: no cause in the body`);
    if (reason) t.ok(capture.lines.some((l) => l.includes('service account token refused') && l.includes(reason)), `${label}: the technical log says why (${reason})`);
  }
  t.equal(await securityEvents(kernel), eventsBefore, 'no audit event for service-account failures (spec rule 3)');
});

t.test('the service-account collection checks what it stores and who asks', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const key = await signingKey('k', 'RS256');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const base = { name: 'x', jwks: [{ keys: [key.publicJwk] }], issuer: K8S_ISSUER, audience: 'certwright' };

  const privateJwk = await admin('POST', ACCOUNTS, { ...base, jwks: [{ keys: [await exportJWK(privateKey)] }] });
  t.equal(privateJwk.statusCode, 400);
  t.match(privateJwk.json(), { error: 'SEC-SVA-002', message: /private or symmetric key/ }, 'a private key is refused, not stored');
  for (const [label, body] of [
    ['no issuer', { ...base, issuer: undefined }],
    ['no audience', { ...base, audience: undefined }],
    ['no jwks', { ...base, jwks: [] }],
    ['url and keys in one source', { ...base, jwks: [{ url: 'https://issuer.example/jwks', keys: [key.publicJwk] }] }],
    ['a symmetric algorithm', { ...base, algorithms: ['HS256'] }],
    ['an unknown field', { ...base, trustEveryone: true }],
    ['an unknown permission', { ...base, permissions: [{ value: 'nonsense:perm' }] }],
    ['an unknown role', { ...base, roles: ['ghosts'] }],
  ] as const) {
    const res = await admin('POST', ACCOUNTS, body);
    t.equal(res.statusCode, 400, `${label}: 400 (${res.body})`);
    t.equal(res.headers['content-type'], 'application/problem+json');
  }
  t.equal((await admin('POST', ACCOUNTS, '{"name":')).statusCode, 400, 'malformed JSON');
  t.same((await admin('GET', ACCOUNTS)).json(), [], 'nothing half-written');

  t.equal((await caller(kernel, {})('GET', ACCOUNTS)).statusCode, 401, 'no credentials: 401');
  const nobody = await createPrincipal(kernel, 'nobody');
  t.equal((await caller(kernel, nobody.headers)('GET', ACCOUNTS)).statusCode, 403, 'no configuration:service-accounts:read: 403');
  t.equal((await caller(kernel, nobody.headers)('POST', ACCOUNTS, base)).statusCode, 403, 'no configuration:service-accounts:write: 403');
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:service-accounts:read' }] });
  t.equal((await caller(kernel, reader.headers)('GET', ACCOUNTS)).statusCode, 200, 'the read permission reads');
  t.equal((await caller(kernel, reader.headers)('POST', ACCOUNTS, base)).statusCode, 403, 'but does not write');
});
