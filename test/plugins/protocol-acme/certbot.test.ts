/**
 * certbot 2.1.0 (Debian's package) against the ACME server on profile `default`, as the README shows it:
 * a fresh install (local CA, profile default with ACME on), certbot's standalone http-01 server on a loopback
 * port, the name www.acme.test resolved by a BIND9 the test starts; then over dns-01 with
 * python3-certbot-dns-rfc2136 publishing the TXT record in that BIND9 (TSIG hmac-sha256). certbot obtains, renews
 * (--force-renewal --no-random-sleep-on-renew) and revokes; each certificate verifies with openssl against
 * the chain certbot saved, and the inventory shows the revocation. Runs on SQLite and, with
 * TEST_DATABASE_URL, on MariaDB.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { startBind9 } from '../../helpers/bind9.js';
import { tempDir } from '../../helpers/kernel.js';
import { acmeKernel } from './acme-kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import type { CertificateRepository } from '../../../core/inventory/repository.js';

const run = promisify(execFile);
const dir = tempDir(t, 'cw-certbot-');
const bind = await startBind9(t);
const httpPort = await freePort();
const { kernel, directory } = await acmeKernel(t, { bind, httpPort });

async function certbot(args: string[]): Promise<string> {
  const common = ['--config-dir', join(dir, 'config'), '--work-dir', join(dir, 'work'), '--logs-dir', join(dir, 'logs'), '-n'];
  try {
    const { stdout, stderr } = await run('certbot', [...args, ...common], { encoding: 'utf8', timeout: 120_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    let log = '';
    try {
      log = readFileSync(join(dir, 'logs', 'letsencrypt.log'), 'utf8').slice(-4000);
    } catch {
      // no log
    }
    throw new Error(`certbot ${args[0]} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}\n${log}`);
  }
}

const live = (file: string, name = 'www.acme.test') => join(dir, 'config', 'live', name, file);

/** openssl verify against the root (last certificate of the chain certbot saved), the rest untrusted. */
async function verifies(t: Test, name = 'www.acme.test'): Promise<void> {
  const chain = readFileSync(live('chain.pem', name), 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
  writeFileSync(join(dir, 'root.pem'), chain[chain.length - 1]! + '\n');
  const { stdout } = await run('openssl', ['verify', '-CAfile', join(dir, 'root.pem'), '-untrusted', live('chain.pem', name), live('cert.pem', name)], { encoding: 'utf8' });
  t.match(stdout, /cert\.pem: OK/, 'openssl verifies the certificate against the chain the directory published');
}

const inventory = (): CertificateRepository => (kernel.container.resolve('inventory') as { repository: CertificateRepository }).repository;

const obtain = ['certonly', '--standalone', '--http-01-port', String(httpPort), '--http-01-address', '127.0.0.1', '-d', 'www.acme.test', '--server', directory, '--agree-tos', '--register-unsafely-without-email'];

t.test('certbot obtains a certificate over http-01', async (t) => {
  await certbot(obtain);
  const cert = new X509Certificate(readFileSync(live('cert.pem')));
  t.match(cert.subjectAltName ?? '', /DNS:www\.acme\.test/, 'the certificate names the ordered domain');
  await verifies(t);
  const stored = await inventory().getByThumbprint('default', cert.fingerprint.replace(/:/g, '').toLowerCase());
  t.equal(stored?.profile, 'default', 'the inventory holds it under profile default');
});

t.test('certbot obtains over dns-01 with its RFC 2136 plugin and BIND9', async (t) => {
  const ini = join(dir, 'rfc2136.ini');
  writeFileSync(
    ini,
    [`dns_rfc2136_server = 127.0.0.1`, `dns_rfc2136_port = ${bind.port}`, `dns_rfc2136_name = ${bind.tsig.name}`, `dns_rfc2136_secret = ${bind.tsig.secret}`, `dns_rfc2136_algorithm = HMAC-SHA256`, ''].join('\n'),
    { mode: 0o600 },
  );
  await certbot(['certonly', '--dns-rfc2136', '--dns-rfc2136-credentials', ini, '--dns-rfc2136-propagation-seconds', '1', '-d', 'txt.acme.test', '--server', directory, '--agree-tos', '--register-unsafely-without-email']);
  const file = join(dir, 'config', 'live', 'txt.acme.test', 'cert.pem');
  t.match(new X509Certificate(readFileSync(file)).subjectAltName ?? '', /DNS:txt\.acme\.test/, 'the certificate names the domain validated over dns-01');
  await verifies(t, 'txt.acme.test');
});

t.test('certbot renews with --force-renewal', async (t) => {
  const before = new X509Certificate(readFileSync(live('cert.pem'))).serialNumber;
  await certbot(['renew', '--cert-name', 'www.acme.test', '--force-renewal', '--no-random-sleep-on-renew', '--server', directory]);
  const after = new X509Certificate(readFileSync(live('cert.pem'))).serialNumber;
  t.not(after, before, 'a new certificate replaced the old one');
  await verifies(t);
});

t.test('certbot revokes', async (t) => {
  const cert = new X509Certificate(readFileSync(live('cert.pem')));
  await certbot(['revoke', '--cert-path', live('cert.pem'), '--reason', 'keycompromise', '--no-delete-after-revoke', '--server', directory]);
  const stored = await inventory().getByThumbprint('default', cert.fingerprint.replace(/:/g, '').toLowerCase());
  t.equal(stored?.revoked, true, 'the inventory shows the certificate revoked');
});
