/**
 * Outbound HTTP through the configured proxies, end to end with a real forward proxy (Debian's tinyproxy,
 * one process for the file): the platform's CRL downloads, a plugin context client's fetch and a webhook
 * trigger delivery (fetchConfigured) go direct with no matching proxy, and through tinyproxy, authenticated
 * with a password credential, once a proxy's destinations name the host. A rotated credential applies to
 * the very next call.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { DeliveryResult, TriggerChannel } from '@certwright/sdk';
import type { ProxyRouter } from '../../../core/egress/proxy-router.js';
import { egressClient, fetchConfigured, type Resolve } from '../../../core/plugins/egress.js';
import { egressPolicyFrom } from '@certwright/sdk';
import { ADMIN_HEADERS, bootKernel, LogCapture, tempDir } from '../../helpers/kernel.js';
import { LEAF_EXT, OpensslPki } from '../../helpers/openssl-pki.js';
import { importCa, servicesOf } from '../../helpers/pki-api.js';
import { caller } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';
import { sampleEvent } from '../../fixtures/channels/event.js';
import { startReceiver } from '../../fixtures/channels/receiver.js';
import { startTinyproxy } from './tinyproxy.js';

const PROXY_USER = 'cw-proxy';
const PROXY_PASSWORD = 'Proxy-Pass-5e1d9c';
const WRONG_PASSWORD = 'Wrong-Proxy-Pass-77ab';

const proxy = await startTinyproxy(t, { user: PROXY_USER, password: PROXY_PASSWORD });

// The destination: serves the root's CRL and answers anything else with 200 "ok", recording every request.
const pki = new OpensslPki(tempDir(t, 'cw-pki-'));
const root = pki.root('px-root', '/CN=Proxy Test Root');
const crl = pki.crl(root, { hours: 48 });
const destination = await startReceiver(t);
destination.respond((req, res) => {
  if (req.path === '/root.crl') res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(crl.der);
  else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});

const capture = new LogCapture();
const kernel = await bootKernel(
  t,
  {
    scheduler: { processEveryMs: 50 },
    // The destination is plain http on loopback: this webhook instance's egress policy allows both.
    plugins: { instances: { 'trigger-webhook': [{ name: 'default', config: { allowHttp: true, allowPrivateNetworks: true, timeoutMs: 5000 } }] } },
  },
  { capture },
);
const api = caller(kernel, ADMIN_HEADERS);
// A plugin's context client as the plugin manager builds it, with the kernel's own router.
const client = egressClient('proxy-test', ['127.0.0.1'], kernel.container.resolve<ProxyRouter>('proxies'));
const webhook = kernel.provided.triggerChannels.get('webhook') as TriggerChannel<object>;
const { crls } = servicesOf(kernel);
const ca = await importCa(kernel, { name: 'px-root', certificate: root.pem, trusted: true, crlUrl: `${destination.base}/root.crl` });

const crlEntry = async () => (await api('GET', '/api/v1/caches/crls/px-root')).json() as { lastAttempt: number | null; lastError: string | null };
await until('the first CRL download', async () => (await api('GET', '/api/v1/caches/crls/px-root')).statusCode === 200 || (await crlEntry()).lastAttempt !== null);

interface Outcome {
  crl: string | null;
  fetch: string;
  webhook: DeliveryResult;
  /** What the destination received during these calls: path and the Via header tinyproxy adds. */
  received: { path: string; via: string | undefined }[];
  /** Request lines tinyproxy logged during these calls. */
  proxied: string[];
}

/** One call of each kind, and what the destination and the proxy saw of them. */
async function callEach(expectProxied = 0): Promise<Outcome> {
  const seen = destination.received.length;
  const logged = proxy.requests().length;
  const before = Number((await crlEntry()).lastAttempt ?? 0);
  await crls.plan('default', String(ca._id));
  await until('a new CRL download', async () => Number((await crlEntry()).lastAttempt ?? 0) > before);
  const fetched = await client.fetch(`${destination.base}/fetch`).then(
    async (res) => `HTTP ${res.status} ${await res.text()}`,
    (err: Error) => `${err.message}`,
  );
  const delivered = await webhook.send(sampleEvent(), { url: `${destination.base}/hook`, secret: 'whsec-0123456789abcdef' });
  // tinyproxy logs a request line as it reads the request, but its log write can trail the answer on a
  // loaded machine: wait for the lines this round should produce (the assertions then check which ones).
  if (expectProxied > 0) await until(`tinyproxy logs ${expectProxied} request(s)`, () => proxy.requests().length - logged >= expectProxied, 5000).catch(() => undefined);
  return {
    crl: (await crlEntry()).lastError,
    fetch: fetched,
    webhook: delivered,
    received: destination.received.slice(seen).map((r) => ({ path: r.path.split('?')[0]!, via: r.headers.via as string | undefined })),
    proxied: proxy.requests().slice(logged),
  };
}

const port = new URL(destination.base).port;
// Distinct paths: a CRL download the CA's import scheduled can land in the first round too (a loaded machine).
const paths = (o: Outcome) => [...new Set(o.received.map((r) => r.path))].sort();
const ALL = ['/fetch', '/hook', '/root.crl'];

t.test('(a) no proxy object: every call goes direct, tinyproxy sees nothing', async (t) => {
  const o = await callEach();
  t.equal(o.crl, null, 'the CRL was downloaded');
  t.equal(o.fetch, 'HTTP 200 ok');
  t.match(o.webhook, { delivered: true });
  t.same(paths(o), ALL, 'the destination got each call');
  t.ok(o.received.every((r) => r.via === undefined), 'no Via header: no proxy on the way');
  t.same(o.proxied, [], "tinyproxy's log shows no request");
});

t.test('(d) a proxy whose destinations do not match: still direct', async (t) => {
  const res = await api('POST', '/api/v1/proxy/httpproxies/', { name: 'elsewhere', host: '127.0.0.1', port: proxy.port, destinations: ['*.example.com', 'example.org'] });
  t.equal(res.statusCode, 201, res.body);
  const o = await callEach();
  t.equal(o.crl, null);
  t.equal(o.fetch, 'HTTP 200 ok');
  t.match(o.webhook, { delivered: true });
  t.same(paths(o), ALL);
  t.ok(o.received.every((r) => r.via === undefined), 'no Via header');
  t.same(o.proxied, [], "tinyproxy's log shows no request");
});

t.test('(b) a proxy for 127.0.0.1 with a password credential: every call goes through tinyproxy', async (t) => {
  let res = await api('POST', '/api/v1/security/credentials/', { name: 'proxy-login', type: 'password', login: PROXY_USER, password: { value: PROXY_PASSWORD }, targets: ['proxy'] });
  t.equal(res.statusCode, 201, res.body);
  res = await api('POST', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['127.0.0.1'] });
  t.equal(res.statusCode, 201, res.body);
  const o = await callEach(3);
  t.equal(o.crl, null, 'the CRL was downloaded and accepted');
  t.equal(o.fetch, 'HTTP 200 ok');
  t.match(o.webhook, { delivered: true, detail: 'HTTP 200' });
  t.same(paths(o), ALL, 'the destination got each call');
  t.ok(o.received.filter((r) => r.path !== '/hook').every((r) => /tinyproxy/.test(r.via ?? '')), 'the forwarded ones carry the Via header tinyproxy adds');
  t.same(o.proxied.sort(), [`CONNECT 127.0.0.1:${port}`, `GET http://127.0.0.1:${port}/fetch`, `GET http://127.0.0.1:${port}/root.crl`], "tinyproxy's log shows each call; the webhook tunnelled (its path stays hidden from the proxy)");
});

t.test('(c) a wrong proxy password: the call fails and reaches nothing; the rotated credential applies at once', async (t) => {
  let res = await api('PUT', '/api/v1/security/credentials/', { name: 'proxy-login', type: 'password', login: PROXY_USER, password: { value: WRONG_PASSWORD }, targets: ['proxy'] });
  t.equal(res.statusCode, 200, res.body);
  const refused = await callEach(3);
  // tinyproxy answers a wrong password with 401 (a missing one with 407, see below): on a forwarded request
  // that is an answer like any other, on the webhook's CONNECT it is the proxy's refusal.
  t.match(refused.crl, /root\.crl: HTTP 401$/);
  t.match(refused.fetch, /^HTTP 401 /);
  t.match(refused.webhook, { delivered: false, retryable: true, detail: 'host 127.0.0.1: HTTP proxy "corp" refused the credentials (HTTP 401)' });
  t.same(refused.received, [], 'nothing reached the destination');
  t.equal(refused.proxied.length, 3, 'tinyproxy saw (and refused) each call');

  res = await api('PUT', '/api/v1/security/credentials/', { name: 'proxy-login', type: 'password', login: PROXY_USER, password: { value: PROXY_PASSWORD }, targets: ['proxy'] });
  t.equal(res.statusCode, 200, res.body);
  const o = await callEach(3);
  t.equal(o.crl, null);
  t.equal(o.fetch, 'HTTP 200 ok');
  t.match(o.webhook, { delivered: true });
  t.same(paths(o), ALL);
  t.equal(o.proxied.length, 3, 'through tinyproxy again');
});

t.test('(c) no credentials for a proxy that wants them: 407, said plainly, nothing reached', async (t) => {
  let res = await api('PUT', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, destinations: ['127.0.0.1'] });
  t.equal(res.statusCode, 200, res.body);
  const refused = await callEach();
  const plain = /HTTP proxy "corp" refused the credentials \(407 Proxy Authentication Required\)/;
  t.match(refused.crl, plain);
  t.match(refused.fetch, plain);
  t.match(refused.webhook, { delivered: false, retryable: true, detail: plain });
  t.same(refused.received, [], 'nothing reached the destination');
  res = await api('PUT', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['127.0.0.1'] });
  t.equal(res.statusCode, 200, res.body);
  t.equal((await callEach()).received.length, 3, 'with its credentials again, every call passes');
});

t.test('fetchConfigured through the proxy: address classes checked first, the proxy sent to the checked address', async (t) => {
  const res = await api('PUT', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['127.0.0.1', '*.test'] });
  t.equal(res.statusCode, 200, res.body);
  const router = kernel.container.resolve<ProxyRouter>('proxies');
  // This node resolves the names; the proxy never gets a name to resolve again.
  const resolve: Resolve = async (host) => [{ address: host === 'metadata.test' ? '169.254.169.254' : '127.0.0.1', family: 4 }];
  const policy = egressPolicyFrom({ allowHttp: true, allowPrivateNetworks: true, timeoutMs: 5000 });
  const seen = destination.received.length;
  const logged = proxy.requests().length;
  const answer = await fetchConfigured(`http://hooks.test:${port}/pinned?token=secret-part`, { method: 'POST', body: '{}' }, policy, resolve, router);
  t.equal(answer.status, 200);
  t.same(proxy.requests().slice(logged), [`CONNECT 127.0.0.1:${port}`], 'the proxy was asked for the checked address, not the name');
  t.match(destination.received.slice(seen), [{ path: '/pinned?token=secret-part', headers: { host: `hooks.test:${port}` } }], 'the destination got the name in Host');
  t.notOk(proxy.log().includes('secret-part'), "the URL's path and query never reach the proxy's log");
  await t.rejects(fetchConfigured(`http://metadata.test:${port}/x`, {}, policy, resolve, router), /169\.254\.169\.254 is a cloud metadata address/);
  t.equal(proxy.requests().length, logged + 1, 'a refused address never reaches the proxy');
});

t.test('a call with its own trust anchors (an ACME CA under a private root): direct and through the proxy', async (t) => {
  // An https destination whose certificate only the test's root vouches for.
  const leaf = pki.issue('px-tls', '/CN=127.0.0.1', root, { ext: [...LEAF_EXT, 'subjectAltName=IP:127.0.0.1'] });
  const server = createHttpsServer({ cert: leaf.pem, key: readFileSync(leaf.keyPath) }, (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('tls ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/directory`;
  const text = (res: Response) => res.text().then((body) => `HTTP ${res.status} ${body}`);

  // The proxy `corp` covers 127.0.0.1: through tinyproxy (CONNECT), TLS inside the tunnel trusting the root.
  const logged = proxy.requests().length;
  t.equal(await client.fetch(url, {}, { caPem: root.pem }).then(text), 'HTTP 200 tls ok', 'through the proxy, trusting the given root');
  t.same(proxy.requests().slice(logged), [`CONNECT ${new URL(url).host}`], 'tinyproxy carried it');
  await t.rejects(client.fetch(url), 'without the trust anchor the certificate is refused');

  // No proxy for it: direct, still trusting only the given root.
  let res = await api('PUT', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['*.test'] });
  t.equal(res.statusCode, 200, res.body);
  const before = proxy.requests().length;
  t.equal(await client.fetch(url, {}, { caPem: root.pem }).then(text), 'HTTP 200 tls ok', 'direct, trusting the given root');
  t.equal(proxy.requests().length, before, 'tinyproxy saw nothing');
  const other = pki.root('px-other', '/CN=Another Root');
  await t.rejects(client.fetch(url, {}, { caPem: other.pem }), 'another root does not vouch for it');
  res = await api('PUT', '/api/v1/proxy/httpproxies/', { name: 'corp', host: '127.0.0.1', port: proxy.port, credentials: 'proxy-login', destinations: ['127.0.0.1', '*.test'] });
  t.equal(res.statusCode, 200, res.body);
});

t.test('a proxy whose credential cannot be used fails the call instead of going direct', async (t) => {
  let res = await api('POST', '/api/v1/security/credentials/', { name: 'storage-only', type: 'password', login: 'x', password: { value: 'y' }, targets: ['storage'] });
  t.equal(res.statusCode, 201, res.body);
  // The proxy type refuses such a credential; a later change of the credential can still make it unfit.
  res = await api('PUT', '/api/v1/security/credentials/', { name: 'proxy-login', type: 'password', login: PROXY_USER, password: { value: PROXY_PASSWORD }, targets: ['storage'] });
  t.equal(res.statusCode, 200, res.body);
  const seen = destination.received.length;
  await t.rejects(client.fetch(`${destination.base}/fetch`), /HTTP proxy "corp": credentials: "proxy-login" is not usable by a proxy/);
  t.equal(destination.received.length, seen, 'nothing went direct');
});

t.test('proxy passwords are never logged', async (t) => {
  for (const secret of [PROXY_PASSWORD, WRONG_PASSWORD, Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')]) {
    t.notOk(capture.text.includes(secret), 'not in the kernel log');
  }
});
