/**
 * X509 client-certificate login (issue 28, item 1) over real sockets: the kernel's HTTPS listener with a client
 * certificate asked for, certificates made by the openssl CLI, the issuing CAs imported through the API (one flagged
 * trusted for client authentication, one not, one never imported), the revocation learned by the CRL cache from a
 * CRL served on loopback. Each refusal is a 401 problem and a SEC-LOGIN-FAILURE event naming its reason.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel, testConfig, tempDir } from '../../helpers/kernel.js';
import { CA_EXT, OpensslPki, type Made } from '../../helpers/openssl-pki.js';
import { importCa, servicesOf } from '../../helpers/pki-api.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

const AUTHZ = '/api/v1/security/identity/x509/authorizations/';
const PROVIDERS = '/api/v1/security/identity/providers/';
const SELF = '/api/v1/security/principals/self';
const clientExt = (...extra: string[]) => ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid:always', ...extra];

// --- PKI made by openssl ---------------------------------------------------------------------------------------
const pki = new OpensslPki(tempDir(t, 'cw-x509-'));
const crlServer: Server = createServer((req, res) => {
  if (req.url === '/trusted.crl') {
    res.writeHead(200, { 'content-type': 'application/pkix-crl' });
    res.end(currentCrl);
  } else res.writeHead(404).end();
});
let currentCrl: Buffer = Buffer.alloc(0);
await new Promise<void>((resolve) => crlServer.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise((resolve) => (crlServer.closeAllConnections(), crlServer.close(resolve))));
const crlUrl = `http://127.0.0.1:${(crlServer.address() as AddressInfo).port}/trusted.crl`;

const serverRoot = pki.root('server-root', '/CN=X509 Test Server Root');
const serverCert = pki.issue('server', '/CN=localhost', serverRoot, { ext: clientExt('extendedKeyUsage=serverAuth', 'subjectAltName=DNS:localhost,IP:127.0.0.1') });
const trusted = pki.root('trusted', '/O=Certwright/CN=Client Auth CA');
const unflagged = pki.root('unflagged', '/O=Certwright/CN=Imported But Not For Clients');
const stranger = pki.root('stranger', '/O=Elsewhere/CN=Never Imported CA');

const alice = pki.issue('alice', '/O=Certwright/CN=alice', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:alice@example.com') });
const dave = pki.issue('dave', '/O=Certwright/CN=dave', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:dave@example.com') });
const carol = pki.issue('carol', '/O=Certwright/CN=carol', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=otherName:1.3.6.1.4.1.311.20.2.3;UTF8:carol@corp.example') });
const serverOnly = pki.issue('server-only', '/O=Certwright/CN=alice', trusted, { ext: clientExt('extendedKeyUsage=serverAuth', 'subjectAltName=email:alice@example.com') });
const expired = pki.issue('expired', '/O=Certwright/CN=alice', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:alice@example.com'), start: '20200101000000Z', end: '20210101000000Z' });
const revoked = pki.issue('revoked', '/O=Certwright/CN=alice', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:alice@example.com') });
const nobody = pki.issue('nobody', '/O=Certwright/CN=nobody', trusted, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:nobody@elsewhere.example') });
const fromUnflagged = pki.issue('bob', '/O=Certwright/CN=bob', unflagged, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:bob@example.com') });
const fromStranger = pki.issue('mallory', '/O=Elsewhere/CN=mallory', stranger, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:mallory@example.com') });
pki.revoke(revoked, trusted, 'keyCompromise');
currentCrl = pki.crl(trusted, { hours: 24 }).der;
void CA_EXT;

// --- the kernel: HTTP and HTTPS on loopback --------------------------------------------------------------------
const port = await freePort();
const config = await testConfig(t, { server: { host: '127.0.0.1', port, tls: { port: 0, certFile: serverCert.certPath, keyFile: serverCert.keyPath, requestClientCert: true } } } as never);
const kernel: Kernel = await bootKernel(t, {}, { config });
await kernel.listen();
const httpsPort = Number(new URL(kernel.httpsAddress!).port);
const admin = caller(kernel, ADMIN_HEADERS);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json: () => Record<string, unknown>;
}
const answer = (status: number, headers: IncomingHttpHeaders, body: string): Answer => ({ status, headers, body, json: () => JSON.parse(body) as Record<string, unknown> });

/** A GET over TLS, with a client certificate when `who` is given. */
function tls(path: string, who?: Made, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: httpsPort,
        path,
        method: 'GET',
        agent: false,
        ca: serverRoot.pem,
        servername: 'localhost',
        headers: { host: 'localhost', accept: 'application/json', ...headers },
        ...(who ? { cert: readFileSync(who.certPath), key: readFileSync(who.keyPath) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(answer(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A GET over plain HTTP (a reverse proxy on 127.0.0.1 forwarding a certificate, or a cookie alone). */
function plain(path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', agent: false, headers: { host: 'localhost', accept: 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(answer(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.end();
  });
}

async function failures(): Promise<{ module: string; payload: Record<string, unknown> }[]> {
  const rows = (await kernel.db.knex('events').where({ code: 'SEC-LOGIN-FAILURE' }).orderBy('seq').select('module', 'payload')) as { module: string; payload: string | Record<string, unknown> }[];
  return rows.map((r) => ({ module: r.module, payload: typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload }));
}

/** The call is refused as the spec says (401 SEC-AUTH-00x problem, no stack) and one new failure event says why. */
async function refused(tt: Test, call: () => Promise<Answer>, reason: string, code = 'SEC-AUTH-006', who?: Made): Promise<Record<string, unknown>> {
  const before = (await failures()).length;
  const res = await call();
  tt.equal(res.status, 401, `401, not ${res.status}: ${res.body}`);
  tt.match(String(res.headers['content-type']), /^application\/(problem\+)?json/);
  tt.match(res.json(), { error: code, status: 401 });
  tt.notMatch(res.body, /at .*\.ts:\d+/, 'no stack');
  const after = await failures();
  tt.equal(after.length, before + 1, 'one failure event');
  const event = after[after.length - 1]!;
  tt.equal(event.module, 'security');
  tt.match(event.payload, { method: 'x509', reason, provider: 'certs' });
  if (who) {
    tt.match(event.payload, { subjectDn: who.subject.split('/').filter(Boolean).reverse().join(','), serial: pki.serial(who).replace(/^0+(?=..)/, '') });
  }
  return event.payload;
}

/** Setup steps fail the file loudly (no top-level assertions: tap ends the root test on its own). */
function must(ok: boolean, what: string): void {
  if (!ok) throw new Error(`setup: ${what}`);
}

// --- setup through the API -------------------------------------------------------------------------------------
await importCa(kernel, { name: 'client-auth-ca', certificate: trusted.pem, trustedForClientAuthentication: true, crlUrl });
await importCa(kernel, { name: 'unflagged-ca', certificate: unflagged.pem, trusted: true });
const caRecord = (await servicesOf(kernel).caStore.byName('default', 'client-auth-ca'))!;
const refreshed = await servicesOf(kernel).crls.refresh('default', caRecord);
must(refreshed.ok, `the CRL cache holds the CA's CRL: ${JSON.stringify(refreshed)}`);

const provider = await admin('POST', PROVIDERS, { name: 'certs', type: 'x509', enabled: true, config: {} });
must(provider.statusCode === 201, provider.body);
for (const authz of [
  { name: 'by-email', priority: 10, match: { email: '*@example.com' }, identifier: '{email}' },
  { name: 'by-dn', priority: 20, match: { subjectDn: 'CN=dave, O=Certwright' }, identifier: 'dave-admin' },
  { name: 'by-upn', priority: 30, match: { upn: '*@corp.example' }, identifier: 'upn:{upn}' },
  { name: 'everyone-off', priority: 0, enabled: false, match: { subjectDn: '*' }, identifier: 'everyone' },
]) {
  const res = await admin('POST', AUTHZ, authz);
  must(res.statusCode === 201, res.body);
}

t.test('accepted: /self names the mapped principal; /authenticate sets PLAY_SESSION and the cookie alone works after', async (t) => {
  const self = await tls(SELF, alice);
  t.equal(self.status, 200, self.body);
  t.match(self.json(), { identity: { identifier: 'alice@example.com' } });

  const upn = await tls(SELF, carol);
  t.equal(upn.status, 200, upn.body);
  t.match(upn.json(), { identity: { identifier: 'upn:carol@corp.example' } }, 'by SAN UPN');

  // dave matches by-email (priority 10) and by-dn (20): the first wins until by-dn comes first.
  t.match((await tls(SELF, dave)).json(), { identity: { identifier: 'dave@example.com' } });
  const moved = await admin('PUT', AUTHZ, { name: 'by-dn', priority: 5, match: { subjectDn: 'CN=dave, O=Certwright' }, identifier: 'dave-admin' });
  t.equal(moved.statusCode, 200, moved.body);
  t.match((await tls(SELF, dave)).json(), { identity: { identifier: 'dave-admin' } }, 'by subject DN, now first');

  const login = await tls('/api/v1/security/principals/authenticate', alice);
  t.equal(login.status, 200, login.body);
  const cookies = ([] as string[]).concat(login.headers['set-cookie'] ?? []);
  const session = cookies.find((c) => c.startsWith('PLAY_SESSION='));
  t.ok(session, 'PLAY_SESSION set');
  const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
  const again = await plain(SELF, { cookie });
  t.equal(again.status, 200, again.body);
  t.match(again.json(), { identity: { identifier: 'alice@example.com' } }, 'the cookie alone, over HTTP without any certificate');
  const overTls = await tls(SELF, undefined, { cookie });
  t.equal(overTls.status, 200, 'the cookie alone over TLS without a certificate');
});

t.test('no certificate: 401 SEC-AUTH-001 and no event', async (t) => {
  const before = (await failures()).length;
  const res = await tls(SELF);
  t.equal(res.status, 401);
  t.match(res.json(), { error: 'SEC-AUTH-001' });
  t.equal((await failures()).length, before);
});

t.test('wrong EKU (serverAuth only)', async (t) => {
  await refused(t, () => tls(SELF, serverOnly), 'no-client-auth-eku', 'SEC-AUTH-006', serverOnly);
});

t.test('untrusted CA: imported without the flag, and not imported at all', async (t) => {
  const unflaggedEvent = await refused(t, () => tls(SELF, fromUnflagged), 'untrusted-ca', 'SEC-AUTH-006', fromUnflagged);
  t.match(unflaggedEvent.detail, /unflagged-ca is not trusted for client authentication/);
  const strangerEvent = await refused(t, () => tls(SELF, fromStranger), 'untrusted-ca', 'SEC-AUTH-006', fromStranger);
  t.match(strangerEvent.detail, /not an imported CA/);
});

t.test('expired', async (t) => {
  await refused(t, () => tls(SELF, expired), 'expired', 'SEC-AUTH-006', expired);
});

t.test('revoked (the CRL cache)', async (t) => {
  await refused(t, () => tls(SELF, revoked), 'revoked', 'SEC-AUTH-006', revoked);
  t.equal((await tls(SELF, alice)).status, 200, 'a sibling certificate of the same CA still logs in');
});

t.test('no authorization (and a disabled one that would match is not used)', async (t) => {
  await refused(t, () => tls(SELF, nobody), 'no-authorization', 'SEC-AUTH-006', nobody);
  const login = await tls('/api/v1/security/principals/authenticate', nobody);
  t.equal(login.status, 401);
  t.notOk(([] as string[]).concat(login.headers['set-cookie'] ?? []).some((c) => c.startsWith('PLAY_SESSION=')), 'no session');
});

t.test('API keys over TLS with a client certificate: the key decides, the certificate is not judged', async (t) => {
  const before = (await failures()).length;
  const res = await tls(SELF, fromStranger, ADMIN_HEADERS);
  t.equal(res.status, 200, res.body);
  t.match(res.json(), { identity: { identifier: 'administrator' } });
  t.equal((await failures()).length, before, 'no failure event');
});

t.test('forwarded header from a trusted proxy address (127.0.0.1), then from a disallowed one', async (t) => {
  const configure = async (trustedProxies: string[]) => {
    const res = await admin('PUT', PROVIDERS, { name: 'certs', type: 'x509', enabled: true, config: { forwardedHeader: 'ssl-client-cert', trustedProxies } });
    t.equal(res.statusCode, 200, res.body);
  };
  await configure(['10.9.0.0/16', '127.0.0.1']);
  const escaped = encodeURIComponent(alice.pem);
  const viaProxy = await plain(SELF, { 'ssl-client-cert': escaped });
  t.equal(viaProxy.status, 200, viaProxy.body);
  t.match(viaProxy.json(), { identity: { identifier: 'alice@example.com' } }, 'over plain HTTP from 127.0.0.1');
  const viaTls = await tls(SELF, undefined, { 'ssl-client-cert': escaped });
  t.equal(viaTls.status, 200, 'over TLS without a client certificate');
  // A forwarded certificate is judged like any other.
  await refused(t, () => plain(SELF, { 'ssl-client-cert': encodeURIComponent(expired.pem) }), 'expired', 'SEC-AUTH-006', expired);

  await configure(['10.0.0.0/8', '::1']);
  const event = await refused(t, () => plain(SELF, { 'ssl-client-cert': escaped }), 'forwarded-from-untrusted-address', 'SEC-AUTH-006');
  t.match(event, { header: 'ssl-client-cert', connectionAddress: /127\.0\.0\.1/ });
  // Over TLS with a certificate of its own, a header from an untrusted address is ignored (and said so).
  const before = (await failures()).length;
  const own = await tls(SELF, carol, { 'ssl-client-cert': escaped });
  t.equal(own.status, 200);
  t.match(own.json(), { identity: { identifier: 'upn:carol@corp.example' } }, 'the connection\'s own certificate, not the forwarded one');
  t.equal((await failures()).length, before + 1, 'the ignored header is an event');
  await configure([]);
});

t.test('the authorization collection: 401 without credentials, 403 without the permission, 400 on bad input', async (t) => {
  t.equal((await kernel.app.inject({ method: 'GET', url: AUTHZ, headers: { host: 'localhost' } })).statusCode, 401);
  const reader = await createPrincipal(kernel, 'x509-reader', { permissions: [{ value: 'configuration:identity-providers:read' }] });
  const nobodyPrincipal = await createPrincipal(kernel, 'x509-nobody');
  const asReader = caller(kernel, reader.headers);
  const list = await asReader('GET', AUTHZ);
  t.equal(list.statusCode, 200, list.body);
  t.same(
    (list.json() as { name: string }[]).map((a) => a.name).sort(),
    ['by-dn', 'by-email', 'by-upn', 'everyone-off'],
  );
  const write = await asReader('POST', AUTHZ, { name: 'x', match: { email: '*' }, identifier: 'x' });
  t.equal(write.statusCode, 403, 'read is not write');
  t.match(write.json(), { error: 'SEC-PERM-001' });
  t.equal((await caller(kernel, nobodyPrincipal.headers)('GET', AUTHZ)).statusCode, 403);

  for (const [body, field] of [
    [{ name: 'empty', match: {}, identifier: 'x' }, /match/],
    [{ name: 'no-identifier', match: { email: '*' } }, /identifier/],
    [{ name: 'bad-query', match: { query: 'status equals' }, identifier: 'x' }, /match\.query/],
    [{ name: 'bad-template', match: { email: '*' }, identifier: '{nope}' }, /placeholder/],
    [{ name: 'extra', match: { email: '*', other: 1 }, identifier: 'x' }, /other|additional/],
  ] as const) {
    const res = await admin('POST', AUTHZ, body);
    t.equal(res.statusCode, 400, `${body.name}: ${res.body}`);
    t.match(res.json(), { error: 'X509AUTH-002', status: 400 });
    t.match(res.body, field);
  }
  t.equal((await admin('GET', `${AUTHZ}nope`)).statusCode, 404);
});

t.test('a certificate query: the certificate must be in the inventory and match', async (t) => {
  const query = await admin('POST', AUTHZ, { name: 'by-query', priority: 1, match: { query: 'owner equals "robot-owner"' }, identifier: 'robot-{cn}' });
  t.equal(query.statusCode, 201, query.body);
  await refused(t, () => tls(SELF, nobody), 'no-authorization', 'SEC-AUTH-006', nobody);
  const imported = await admin('POST', '/api/v1/certificates/', { certificate: nobody.pem, owner: 'robot-owner' });
  t.equal(imported.statusCode, 201, imported.body);
  const self = await tls(SELF, nobody);
  t.equal(self.status, 200, self.body);
  t.match(self.json(), { identity: { identifier: 'robot-nobody' } }, 'mapped by the query, identifier from the CN');
  const elsewhere = await admin('POST', '/api/v1/certificates/', { certificate: fromStranger.pem, owner: 'robot-owner' });
  t.equal(elsewhere.statusCode, 201, elsewhere.body);
  await refused(t, () => tls(SELF, fromStranger), 'untrusted-ca', 'SEC-AUTH-006', fromStranger);
  t.equal((await admin('DELETE', `${AUTHZ}by-query`)).statusCode, 204);
});

t.test('OCSP: a CA naming a responder has it asked (openssl ocsp, a real responder on loopback)', async (t) => {
  const ocspCa = pki.root('ocsp-ca', '/O=Certwright/CN=OCSP Client CA');
  const erin = pki.issue('erin', '/O=Certwright/CN=erin', ocspCa, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:erin@example.com') });
  const frank = pki.issue('frank', '/O=Certwright/CN=frank', ocspCa, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:frank@example.com') });
  const gina = pki.issue('gina', '/O=Certwright/CN=gina', ocspCa, { ext: clientExt('extendedKeyUsage=clientAuth', 'subjectAltName=email:gina@example.com') });
  pki.revoke(frank, ocspCa, 'keyCompromise');
  const ocspPort = await freePort();
  // openssl 3.0's -port takes a number (it listens on every local address: loopback only here).
  const responder = spawn('openssl', ['ocsp', '-index', join(ocspCa.dbDir, 'index.txt'), '-port', String(ocspPort), '-rsigner', ocspCa.certPath, '-rkey', ocspCa.keyPath, '-CA', ocspCa.certPath, '-ignore_err'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stopped = new Promise((resolve) => responder.once('exit', resolve));
  t.teardown(() => (responder.exitCode === null ? (responder.kill(), stopped) : undefined));
  // It serves one connection at a time: wait for its own word rather than probing the port (a probe would hold it).
  await listening(responder);
  await importCa(kernel, { name: 'ocsp-client-ca', certificate: ocspCa.pem, trustedForClientAuthentication: true, responderUrl: `http://127.0.0.1:${ocspPort}` });

  const good = await tls(SELF, erin);
  t.equal(good.status, 200, `the responder says good: ${good.body}`);
  t.match(good.json(), { identity: { identifier: 'erin@example.com' } });
  await refused(t, () => tls(SELF, frank), 'revoked', 'SEC-AUTH-006', frank);

  responder.kill();
  await stopped;
  await refused(t, () => tls(SELF, gina), 'ocsp-unavailable', 'SEC-AUTH-006', gina);
});

/** Resolves when openssl ocsp says it waits for clients (it prints this once bound), within 10 s. */
function listening(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`openssl ocsp did not start: ${said}`)), 10_000);
    const hear = (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (/Waiting for OCSP client connections/i.test(said)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', hear);
    child.stderr?.on('data', hear);
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`openssl ocsp exited ${code}: ${said}`))));
  });
}
