/**
 * The ACME server's answers to what a client may get wrong (RFC 8555 §6.7 problem types, statuses and
 * headers), with hand-made JWS requests: every error is application/problem+json with a fresh
 * Replay-Nonce, never a 500. The happy path with an IP identifier (http-01 answered by a server of the
 * test) runs up to finalize, where the CSR and the profile decide. Runs on SQLite and MariaDB.
 */
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP, tempDir, testConfig } from '../../helpers/kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { until } from '../../helpers/until.js';
import { JwsClient, type Answer } from './jws-client.js';

const keyAuthorizations = new Map<string, string>();
const challengeServer = createServer((req, res) => {
  const token = (req.url ?? '').split('/').pop() ?? '';
  const value = keyAuthorizations.get(token);
  res.writeHead(value ? 200 : 404).end(value ?? 'no');
});
const httpPort = await freePort();
await new Promise<void>((resolve) => challengeServer.listen(httpPort, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => challengeServer.close(() => resolve())));

const config = await testConfig(t, {
  ...ENROLLMENT_BOOTSTRAP,
  scheduler: { processEveryMs: 200 },
  plugins: { instances: { 'protocol-acme': [{ name: 'acme', config: { validation: { httpPort, retries: 0 } } }] } },
});
const kernel = await bootKernel(t, {}, { config });
const base = 'http://localhost';
const client = await JwsClient.create(kernel.app, base);
const directory = (await client.request('GET', `${base}/acme/default/directory`)).json;

function isProblem(t: Test, answer: Answer, type: string, status: number): void {
  t.equal(answer.status, status, `${type}: HTTP ${status}`);
  t.equal(answer.headers['content-type'], 'application/problem+json', `${type}: problem+json`);
  t.equal(answer.json.type, `urn:ietf:params:acme:error:${type}`, `${type}: the problem type`);
  t.match(answer.headers['replay-nonce'], /^[A-Za-z0-9_-]{20,}$/, `${type}: a fresh Replay-Nonce`);
}

t.test('directory and nonces', async (t) => {
  t.match(directory, { newNonce: `${base}/acme/default/new-nonce`, newAccount: `${base}/acme/default/new-acct`, newOrder: `${base}/acme/default/new-order`, revokeCert: `${base}/acme/default/revoke-cert`, keyChange: `${base}/acme/default/key-change`, meta: { externalAccountRequired: false } });
  const head = await client.request('HEAD', directory.newNonce);
  t.equal(head.status, 200);
  const get = await client.request('GET', directory.newNonce);
  t.equal(get.status, 204);
  t.not(head.headers['replay-nonce'], get.headers['replay-nonce'], 'each answer has its own nonce');
  t.match(get.headers.link, /rel="index"/);
  const again = await client.request('GET', `${base}/acme/default/directory`);
  t.match(again.headers['replay-nonce'], /^[A-Za-z0-9_-]{20,}$/, 'the directory answer carries a nonce too');
  const posted = await client.request('POST', `${base}/acme/default/directory`, { body: await client.sign(`${base}/acme/default/directory`, null, { nonce: await client.nonce(directory) }) });
  t.same(posted.json, directory, 'POST-as-GET on the directory (RFC 8555 §6.3)');
  const postNonce = await client.request('POST', directory.newNonce, { body: await client.sign(directory.newNonce, null, { nonce: await client.nonce(directory) }) });
  t.equal(postNonce.status, 204, 'and on newNonce');
  const unknown = await client.request('GET', `${base}/acme/nope/directory`);
  t.equal(unknown.status, 404, 'a profile without ACME has no directory');
});

t.test('JWS errors', async (t) => {
  isProblem(t, await client.request('POST', directory.newAccount, { body: await client.sign(directory.newAccount, {}, { nonce: 'bm90LWlzc3VlZA' }) }), 'badNonce', 400);
  const nonce = await client.nonce(directory);
  const once = await client.request('POST', directory.newAccount, { body: await client.sign(directory.newAccount, { onlyReturnExisting: true }, { nonce }) });
  isProblem(t, once, 'accountDoesNotExist', 400);
  isProblem(t, await client.request('POST', directory.newAccount, { body: await client.sign(directory.newAccount, {}, { nonce }) }), 'badNonce', 400);
  const hs = await client.request('POST', directory.newAccount, { body: JSON.stringify({ protected: Buffer.from(JSON.stringify({ alg: 'HS256', nonce: await client.nonce(directory), url: directory.newAccount, jwk: client.jwk })).toString('base64url'), payload: '', signature: 'AA' }) });
  isProblem(t, hs, 'badSignatureAlgorithm', 400);
  t.ok(hs.json.algorithms.includes('ES256'), 'the accepted algorithms are listed');
  isProblem(t, await client.request('POST', directory.newAccount, { body: '{not json' }), 'malformed', 400);
  isProblem(t, await client.request('POST', directory.newAccount, { body: '{}', contentType: 'application/json' }), 'malformed', 415);
  isProblem(t, await client.post(directory, directory.newAccount, {}, { url: `${base}/acme/default/elsewhere` }), 'unauthorized', 403);
  const tampered = JSON.parse(await client.sign(directory.newAccount, {}, { nonce: await client.nonce(directory) }));
  tampered.payload = Buffer.from('{"contact":[]}').toString('base64url');
  isProblem(t, await client.request('POST', directory.newAccount, { body: JSON.stringify(tampered) }), 'malformed', 400);
  isProblem(t, await client.post(directory, directory.newAccount, { contact: ['tel:+33123'] }), 'unsupportedContact', 400);
  isProblem(t, await client.post(directory, directory.newAccount, { contact: ['mailto:a@b.example,c@d.example'] }), 'invalidContact', 400);
});

t.test('accounts', async (t) => {
  const created = await client.post(directory, directory.newAccount, { termsOfServiceAgreed: true, contact: ['mailto:ops@example.com'] });
  t.equal(created.status, 201);
  t.match(created.json, { status: 'valid', contact: ['mailto:ops@example.com'] });
  const location = created.headers.location as string;
  t.match(location, new RegExp(`^${base}/acme/acct/default/`));
  const again = await client.post(directory, directory.newAccount, {});
  t.equal(again.status, 200, 'the same key finds its account');
  t.equal(again.headers.location, location);
  client.kid = location;
  const read = await client.post(directory, location, null);
  t.equal(read.json.status, 'valid', 'POST-as-GET reads the account');
  const updated = await client.post(directory, location, { contact: ['mailto:pki@example.com'] });
  t.same(updated.json.contact, ['mailto:pki@example.com'], 'contacts updated');
  isProblem(t, await client.post(directory, location, { status: 'revoked' }), 'malformed', 400);
  const leaving = await JwsClient.create(kernel.app, base);
  leaving.kid = (await leaving.post(directory, directory.newAccount, {})).headers.location as string;
  t.equal((await leaving.post(directory, leaving.kid, { status: 'deactivated' })).json.status, 'deactivated', 'an account deactivates itself');
  isProblem(t, await leaving.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'a.example' }] }), 'unauthorized', 403);
  const stranger = await JwsClient.create(kernel.app, base);
  stranger.kid = `${base}/acme/acct/default/nope`;
  isProblem(t, await stranger.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'a.example' }] }), 'accountDoesNotExist', 400);
});

t.test('key-change rolls the account key over', async (t) => {
  const holder = await JwsClient.create(kernel.app, base);
  holder.kid = (await holder.post(directory, directory.newAccount, {})).headers.location as string;
  const next = await JwsClient.create(kernel.app, base, 'ES384');
  const inner = JSON.parse(await next.sign(directory.keyChange, { account: holder.kid, oldKey: holder.jwk }, {}));
  const wrongOld = JSON.parse(await next.sign(directory.keyChange, { account: holder.kid, oldKey: next.jwk }, {}));
  isProblem(t, await holder.post(directory, directory.keyChange, wrongOld), 'malformed', 400);
  const changed = await holder.post(directory, directory.keyChange, inner);
  t.equal(changed.status, 200, 'the account key changed');
  isProblem(t, await holder.post(directory, holder.kid, null), 'malformed', 400);
  next.kid = holder.kid;
  t.equal((await next.post(directory, holder.kid, null)).json.status, 'valid', 'the new key signs for the account');
  next.kid = undefined;
  const found = await next.post(directory, directory.newAccount, { onlyReturnExisting: true });
  t.equal(found.headers.location, holder.kid, 'new-acct with the new key finds the account');
  const taken = await client.post(directory, directory.keyChange, JSON.parse(await next.sign(directory.keyChange, { account: client.kid, oldKey: client.jwk }, {})));
  t.equal(taken.status, 409, 'a key another account holds: 409');
  t.equal(taken.headers.location, holder.kid, 'naming that account');
});

t.test('orders, challenges and finalize', async (t) => {
  isProblem(t, await client.post(directory, directory.newOrder, { identifiers: [{ type: 'dns', value: 'not a name' }] }), 'rejectedIdentifier', 400);
  isProblem(t, await client.post(directory, directory.newOrder, { identifiers: [{ type: 'email', value: 'a@b.example' }] }), 'unsupportedIdentifier', 400);
  isProblem(t, await client.post(directory, directory.newOrder, { identifiers: [] }), 'malformed', 400);
  const ordered = await client.post(directory, directory.newOrder, { identifiers: [{ type: 'ip', value: '127.0.0.1' }] });
  t.equal(ordered.status, 201);
  const order = ordered.json;
  t.equal(order.status, 'pending');
  const list = await client.post(directory, `${client.kid}/orders`, null);
  t.ok(list.json.orders.includes(ordered.headers.location), "the account's orders list it");
  isProblem(t, await client.request('GET', `${client.kid}/orders`), 'malformed', 405);
  const dir = tempDir(t, 'cw-acme-csr-');
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'k.pem'), '-subj', '/', '-addext', 'subjectAltName=IP:127.0.0.1', '-outform', 'DER', '-out', join(dir, 'csr.der')]);
  const csr = readFileSync(join(dir, 'csr.der')).toString('base64url');
  isProblem(t, await client.post(directory, order.finalize, { csr }), 'orderNotReady', 403);

  const other = await JwsClient.create(kernel.app, base);
  other.kid = (await other.post(directory, directory.newAccount, {})).headers.location as string;
  isProblem(t, await other.post(directory, ordered.headers.location as string, null), 'unauthorized', 403);

  const authz = (await client.post(directory, order.authorizations[0], null)).json;
  t.match(authz, { identifier: { type: 'ip', value: '127.0.0.1' }, status: 'pending' });
  t.same(authz.challenges.map((c: { type: string }) => c.type).sort(), ['http-01', 'tls-alpn-01'], 'no dns-01 for an IP address');
  const http = authz.challenges.find((c: { type: string }) => c.type === 'http-01');
  keyAuthorizations.set(http.token, `${http.token}.${await client.thumbprint()}`);
  const started = await client.post(directory, http.url, {});
  t.equal(started.status, 200);
  t.match(started.headers.link, /rel="up"/);
  await until('the order turns ready once http-01 validated', async () => (await client.post(directory, ordered.headers.location as string, null)).json.status === 'ready');

  execFileSync('openssl', ['req', '-new', '-key', join(dir, 'k.pem'), '-subj', '/', '-addext', 'subjectAltName=IP:127.0.0.2', '-outform', 'DER', '-out', join(dir, 'other.der')]);
  isProblem(t, await client.post(directory, order.finalize, { csr: readFileSync(join(dir, 'other.der')).toString('base64url') }), 'badCSR', 400);
  isProblem(t, await client.post(directory, order.finalize, { csr: 'AAAA' }), 'badCSR', 400);
  // The profile `default` allows DNS names only: the workflow refuses the IP address, the order turns invalid.
  const refused = await client.post(directory, order.finalize, { csr });
  isProblem(t, refused, 'badCSR', 400);
  t.match(refused.json.detail, /IPADDRESS/);
  t.equal((await client.post(directory, ordered.headers.location as string, null)).json.status, 'invalid');
});

t.test('a wrong key authorization fails the authorization', async (t) => {
  const ordered = await client.post(directory, directory.newOrder, { identifiers: [{ type: 'ip', value: '127.0.0.1' }] });
  const authz = (await client.post(directory, ordered.json.authorizations[0], null)).json;
  const http = authz.challenges.find((c: { type: string }) => c.type === 'http-01');
  keyAuthorizations.set(http.token, `${http.token}.wrong`);
  await client.post(directory, http.url, {});
  await until('the authorization turns invalid', async () => (await client.post(directory, ordered.json.authorizations[0], null)).json.status === 'invalid');
  const challenge = (await client.post(directory, http.url, null)).json;
  t.equal(challenge.error.type, 'urn:ietf:params:acme:error:incorrectResponse');
  t.equal((await client.post(directory, ordered.headers.location as string, null)).json.status, 'invalid', 'so does the order');
});

t.test('other resources and oversized bodies', async (t) => {
  isProblem(t, await client.post(directory, `${client.kid}/elsewhere`, null), 'malformed', 404);
  const huge = await client.request('POST', directory.newOrder, { body: JSON.stringify({ protected: 'a'.repeat(70_000), payload: '', signature: '' }) });
  t.equal(huge.status, 413, 'a body over 64 KiB: 413');
  t.equal(huge.headers['content-type'], 'application/problem+json', 'as a problem');
});

t.test('revocation errors', async (t) => {
  isProblem(t, await client.post(directory, directory.revokeCert, { certificate: 'AAAA' }), 'malformed', 404);
  isProblem(t, await client.post(directory, directory.revokeCert, { certificate: 'AAAA', reason: 2 }), 'badRevocationReason', 400);
});
