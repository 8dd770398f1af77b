/**
 * The HTTPS listener on the embedded default: the first listen issues a server certificate from the local CA
 * for localhost, 127.0.0.1, ::1 and the allowed hosts (kept in <dataDir>/tls, key mode 0600); clients that
 * trust the local CA's root verify it by name and by address; HTTPS passes the same host/capability gate as
 * HTTP; ACME directories fetched over HTTPS name https:// URLs; a renewed certificate is swapped in without a
 * restart, and a second start reuses the stored one. Runs on SQLite and MariaDB.
 */
import { statSync } from 'node:fs';
import { request } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import type { Enrollment } from '../../../core/enrollment/index.js';
import { ensureServerCertificate, serverNames } from '../../../core/http/tls/server-certificate.js';
import type { HttpsListener } from '../../../core/http/tls/listener.js';
import { bootKernel, ENROLLMENT_BOOTSTRAP, testConfig } from '../../helpers/kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

const port = await freePort();
const config = await testConfig(t, { ...ENROLLMENT_BOOTSTRAP, server: { host: '127.0.0.1', port, tls: { port: 0, hosts: ['pki.example.test'] } } });
const kernel = await bootKernel(t, {}, { config });
await kernel.listen();
const httpsPort = Number(new URL(kernel.httpsAddress!).port);
const enrollment = kernel.container.resolve('enrollment') as Enrollment;
const chain = await enrollment.gateway.caChain('default', 'local-ca');
const root = chain[chain.length - 1]!;

/** One GET over TLS trusting only the local CA's root; `servername` is the name checked. */
function get(path: string, options: { host?: string; servername?: string } = {}): Promise<{ status: number; body: string; peer: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: httpsPort, path, ca: root, servername: options.servername ?? 'localhost', headers: { host: options.host ?? 'localhost' }, agent: false }, (res) => {
      const peer = new X509Certificate((res.socket as import('node:tls').TLSSocket).getPeerCertificate().raw);
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, peer }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('the first listen serves HTTPS with a local-CA certificate', async (t) => {
  t.match(kernel.httpsAddress, /^https:\/\/127\.0\.0\.1:\d+$/);
  const health = await get('/healthz');
  t.equal(health.status, 200, 'GET /healthz over HTTPS, verified against the local CA root');
  t.same(health.peer.subjectAltName?.split(', ').sort(), ['DNS:localhost', 'DNS:pki.example.test', 'IP Address:0:0:0:0:0:0:0:1', 'IP Address:127.0.0.1'], 'loopback names, addresses and the configured hosts');
  t.ok(health.peer.checkIP('127.0.0.1'), 'valid for 127.0.0.1');
  t.equal(statSync(join(config.dataDir, 'tls', 'server.key')).mode & 0o777, 0o600, 'the key file is private');
  t.same(serverNames(['A.example', 'localhost']), ['localhost', '127.0.0.1', '::1', 'a.example']);
});

t.test('the same gate and routes as HTTP', async (t) => {
  t.equal((await get('/healthz', { host: 'unknown.example' })).status, 200, 'probes answer on every host');
  t.equal((await get('/api/v1/licenses', { host: 'unknown.example' })).status, 404, 'a host not allowed: 404');
  t.equal((await get('/api/v1/licenses')).status, 401, 'credentials still required');
  const directory = JSON.parse((await get('/acme/default/directory')).body) as { newNonce: string };
  t.match(directory.newNonce, /^https:\/\/localhost\/acme\/default\/new-nonce$/, 'ACME URLs over HTTPS are https://');
});

t.test('renewal swaps the certificate in; a restart reuses the stored one', async (t) => {
  const before = (await get('/healthz')).peer.serialNumber;
  const reused = await ensureServerCertificate({ dir: join(config.dataDir, 'tls'), names: serverNames(['pki.example.test', ...config.allowedHosts]), renewBeforeMs: 86_400_000, now: Date.now(), gateway: enrollment.gateway, tenant: 'default', connector: 'local-ca' });
  t.equal(reused.issued, false, 'a certificate with time left is reused');
  const next = await ensureServerCertificate({ dir: join(config.dataDir, 'tls'), names: serverNames(['pki.example.test']), renewBeforeMs: 365 * 86_400_000, now: Date.now(), gateway: enrollment.gateway, tenant: 'default', connector: 'local-ca' });
  t.equal(next.issued, true, 'one inside the renewal margin is issued again');
  (kernel as unknown as { https: HttpsListener }).https.renew(next);
  const after = (await get('/healthz')).peer.serialNumber;
  t.not(after, before, 'new connections get the new certificate');
});
