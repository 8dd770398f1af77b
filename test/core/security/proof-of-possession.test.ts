/**
 * Proof of possession (client-compat §1): a certificate's holder renews, revokes and updates it with a JWT signed
 * by its key (X-JWT-CERT-POP, `sub` = the certificate PEM) carrying a Replay-Nonce the service handed out —
 * the handshakes of v1 Go (pre-flight `X-JWT-CERT-POP: {}`), v2 Go and Ansible (a nonce-less proof first),
 * each nonce accepted once, no Replay-Nonce on a success or on any API-key answer.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import t, { type Test } from 'tap';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { csrFor } from '../../helpers/csr.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const admin = caller(kernel, ADMIN_HEADERS);
const SUBMIT = '/api/v1/requests/submit';
const HOLDER = ['holder:pop'];

async function profile(name: string, workflows: Json): Promise<void> {
  const base = (await admin('GET', '/api/v1/certificate/profiles/default')).json() as Json;
  for (const k of ['_id', 'createdAt', 'updatedAt', 'authorizationLevels', 'selfPermissions']) delete base[k];
  const res = await admin('POST', '/api/v1/certificate/profiles/', { ...base, name, authorizations: { ...base.authorizations, workflows } });
  if (res.statusCode !== 201) throw new Error(`profile ${name}: ${res.statusCode} ${res.body}`);
}

async function enroll(profileName: string, cn: string, key: KeyObject): Promise<string> {
  const res = await admin('POST', SUBMIT, { module: 'webra', workflow: 'enroll', profile: profileName, template: { csr: csrFor(cn, [cn], key), labels: [] } });
  if (res.statusCode !== 201) throw new Error(`enroll ${cn}: ${res.statusCode} ${res.body}`);
  return (res.json() as Json).certificate.certificate as string;
}

/** The proof as the clients build it: sub = PEM, iat, exp = iat + 5 s, optional nonce. */
async function proof(key: KeyObject, certificatePem: string, alg: string, nonce?: string): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...(nonce ? { nonce } : {}) })
    .setProtectedHeader({ alg })
    .setSubject(certificatePem)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 5)
    .sign(key);
}

const withProof = (jwt: string, body: unknown) =>
  kernel.app.inject({ method: 'POST', url: SUBMIT, headers: { host: 'localhost', 'content-type': 'application/json', 'x-jwt-cert-pop': jwt }, payload: JSON.stringify(body) });

/** A refusal the clients retry on: 401, `proof required`, a fresh Replay-Nonce. */
function expectChallenge(t: Test, res: Awaited<ReturnType<typeof withProof>>, what: string): string {
  t.equal(res.statusCode, 401, `${what}: 401`);
  t.equal(res.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
  t.match(res.json(), { error: 'SEC-AUTH-008', message: 'proof required' }, `${what}: the message Ansible's test expects`);
  const nonce = res.headers['replay-nonce'];
  t.type(nonce, 'string', `${what}: a Replay-Nonce to retry with`);
  return nonce as string;
}

async function nonce(t: Test): Promise<string> {
  return expectChallenge(t, await withProof('{}', {}), 'pre-flight');
}

await profile('holders', { renew: { direct: HOLDER }, revoke: { direct: HOLDER }, update: { direct: HOLDER } });
await profile('no-holders', {});

t.test('a holder renews, updates and revokes its own certificate with its key', async (t) => {
  const ecKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const pem = await enroll('holders', 'pop-holder.example.com', ecKey);

  // v1 Go: pre-flight with `{}`; v2 Go / Ansible: a nonce-less proof. Both get a nonce.
  await nonce(t);
  const n1 = expectChallenge(t, await withProof(await proof(ecKey, pem, 'ES256'), { workflow: 'renew', certificatePem: pem }), 'nonce-less proof');

  const newKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const renewBody = { module: 'webra', workflow: 'renew', certificatePem: pem, template: { csr: csrFor('pop-holder.example.com', ['pop-holder.example.com'], newKey) } };
  const renewJwt = await proof(ecKey, pem, 'ES256', n1);
  const renewed = await withProof(renewJwt, renewBody);
  t.equal(renewed.statusCode, 201, renewed.body);
  t.equal(renewed.json().status, 'completed', 'the profile grants holder:pop direct: completed at once');
  t.notOk(renewed.headers['replay-nonce'], 'no Replay-Nonce on a success');
  const renewedPem = renewed.json().certificate.certificate as string;
  t.not(renewedPem, pem, 'a new certificate');

  expectChallenge(t, await withProof(renewJwt, renewBody), 'the same proof replayed (its nonce is spent)');

  // The new certificate's holder is the new key: the old key proves nothing about it.
  const n2 = await nonce(t);
  const oldKeyOnNew = await withProof(await proof(ecKey, renewedPem, 'ES256', n2), { workflow: 'update', certificatePem: renewedPem, template: { contactEmail: { value: 'x@example.com' } } });
  expectChallenge(t, oldKeyOnNew, 'a proof signed by another key than the certificate\'s');

  const n3 = await nonce(t);
  const updated = await withProof(await proof(newKey, renewedPem, 'ES256', n3), { workflow: 'update', certificatePem: renewedPem, template: { contactEmail: { value: 'holder@example.com' } } });
  t.equal(updated.statusCode, 201, updated.body);
  t.equal(updated.json().certificate.contactEmail, 'holder@example.com', 'the update applied');

  const n4 = await nonce(t);
  const revoked = await withProof(await proof(newKey, renewedPem, 'ES256', n4), { workflow: 'revoke', certificatePem: renewedPem, template: { revocationReason: 'superseded' } });
  t.equal(revoked.statusCode, 201, revoked.body);
  t.equal(revoked.json().certificate.status, 'revoked');
  const events = (await kernel.db.knex('events').where({ object_id: revoked.json().certificate._id }).select('principal')) as { principal: string | null }[];
  t.ok(events.some((e) => e.principal?.startsWith('pop:')), 'the events name the holder (pop:<thumbprint>)');
});

t.test('RSA and Ed25519 holders sign RS256 and EdDSA proofs', async (t) => {
  for (const [label, key, alg] of [
    ['RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RS256'],
    ['Ed25519', generateKeyPairSync('ed25519').privateKey, 'EdDSA'],
  ] as const) {
    const pem = await enroll('holders', `${label.toLowerCase()}-holder.example.com`, key);
    const res = await withProof(await proof(key, pem, alg, await nonce(t)), { workflow: 'update', certificatePem: pem, template: { contactEmail: { value: `${label}@example.com` } } });
    t.equal(res.statusCode, 201, `${label}: ${res.body}`);
    const wrongAlg = await withProof(await proof(key, pem, label === 'RSA' ? 'PS384' : 'EdDSA', await nonce(t)), { workflow: 'update', certificatePem: pem });
    if (label === 'RSA') expectChallenge(t, wrongAlg, 'RSA key with an algorithm outside RS256/384/512, PS256');
  }
});

t.test('a proof opens its own certificate only, on a profile that grants holder:pop', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const mine = await enroll('holders', 'mine.example.com', key);
  const theirs = await enroll('holders', 'theirs.example.com', generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
  const other = await withProof(await proof(key, mine, 'ES256', await nonce(t)), { workflow: 'revoke', certificatePem: theirs, template: { revocationReason: 'keycompromise' } });
  t.equal(other.statusCode, 403, 'another certificate: 403');
  t.equal(other.json().error, 'REQ-006');
  t.notOk(other.headers['replay-nonce'], 'a refusal of the workflow is no proof challenge');

  const enrollBody = { module: 'webra', workflow: 'enroll', profile: 'holders', template: { csr: csrFor('new.example.com', [], key) } };
  t.equal((await withProof(await proof(key, mine, 'ES256', await nonce(t)), enrollBody)).json().error, 'REQ-006', 'no enroll by proof');

  const ungranted = await enroll('no-holders', 'ungranted.example.com', key);
  const refused = await withProof(await proof(key, ungranted, 'ES256', await nonce(t)), { workflow: 'revoke', certificatePem: ungranted, template: { revocationReason: 'superseded' } });
  t.equal(refused.statusCode, 403, 'a profile without holder:pop: 403');
  t.equal(refused.json().error, 'REQ-006');

  const self = await kernel.app.inject({ url: '/api/v1/security/principals/self', headers: { host: 'localhost', 'x-jwt-cert-pop': await proof(key, mine, 'ES256', await nonce(t)) } });
  t.equal(self.statusCode, 401, 'a proof opens no other route');
  t.equal(self.json().error, 'SEC-AUTH-009');
  t.notOk(self.headers['replay-nonce']);

  const state = await admin('GET', `/api/v1/certificates/search?query=${encodeURIComponent('dn equals "CN=theirs.example.com"')}`);
  t.ok(state.statusCode < 500, 'the inventory still answers');
});

t.test('bad proofs are challenged, never a 500, and API-key callers never see a Replay-Nonce', async (t) => {
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const pem = await enroll('holders', 'bad-proofs.example.com', key);
  const body = { workflow: 'update', certificatePem: pem, template: {} };
  const n = await nonce(t);
  const hs256 = await new SignJWT({ nonce: n }).setProtectedHeader({ alg: 'HS256' }).setSubject(pem).setIssuedAt().setExpirationTime('5s').sign(new TextEncoder().encode('0123456789abcdef0123456789abcdef'));
  const old = Math.floor(Date.now() / 1000) - 3600;
  const stale = await new SignJWT({ nonce: await nonce(t) }).setProtectedHeader({ alg: 'ES256' }).setSubject(pem).setIssuedAt(old).setExpirationTime(old + 5).sign(key);
  for (const [label, jwt] of [
    ['garbage', 'not.a.jwt'],
    ['HS256', hs256],
    ['expired', stale],
    ['sub not a certificate', await new SignJWT({ nonce: await nonce(t) }).setProtectedHeader({ alg: 'ES256' }).setSubject('alice').setIssuedAt().setExpirationTime('5s').sign(key)],
    ['a nonce this service never issued', await proof(key, pem, 'ES256', 'made-up-nonce')],
    ['oversized', 'a'.repeat(40_000)],
  ] as const) {
    expectChallenge(t, await withProof(jwt, body), label);
  }

  const keyCaller = await admin('POST', SUBMIT, { workflow: 'update', certificatePem: 'not a pem' });
  t.equal(keyCaller.statusCode, 400);
  t.notOk(keyCaller.headers['replay-nonce'], 'an API-key caller\'s error carries no Replay-Nonce');
  const both = await kernel.app.inject({ method: 'POST', url: SUBMIT, headers: { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS, 'x-jwt-cert-pop': '{}' }, payload: '{}' });
  t.notOk(both.headers['replay-nonce'], 'API-key headers win over a stray proof header: no Replay-Nonce');
});

t.test('the profile says holder:pop in both shapes, and refuses it where it means nothing', async (t) => {
  const horizon = (await admin('GET', '/api/v1/certificate/profiles/holders')).json() as Json;
  t.match(horizon.selfPermissions, { selfPopRenew: true, selfPopRevoke: true, selfPopUpdate: true, selfRenew: false }, 'Horizon selfPermissions follow the lists');
  t.match((await admin('GET', '/api/v1/certificate/profiles/no-holders')).json().selfPermissions, { selfPopRenew: false });
  const echoed = await admin('PUT', '/api/v1/certificate/profiles/', horizon);
  t.equal(echoed.statusCode, 200, `a GET answer PUT back is accepted: ${echoed.body.slice(0, 300)}`);

  const base = (await admin('GET', '/api/v1/certificate/profiles/default')).json() as Json;
  for (const k of ['_id', 'createdAt', 'updatedAt', 'authorizationLevels', 'selfPermissions']) delete base[k];
  const enroll = await admin('POST', '/api/v1/certificate/profiles/', { ...base, name: 'bad', authorizations: { ...base.authorizations, workflows: { enroll: { direct: HOLDER } } } });
  t.equal(enroll.statusCode, 400, 'holder:pop on enroll is refused');
  t.match(enroll.json(), { error: 'PRF-002' });
  t.match(enroll.body, /renew, revoke and update only/, 'saying where it applies');
  const flag = await admin('PUT', '/api/v1/certificate/profiles/', { ...((await admin('GET', '/api/v1/certificate/profiles/no-holders')).json() as Json), selfPermissions: { selfPopRenew: true } });
  t.equal(flag.statusCode, 400, 'selfPopRenew true without the grant is refused with where to grant it');
  t.match(flag.body, /holder:pop/);
});
