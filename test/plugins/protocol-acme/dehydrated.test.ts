/**
 * dehydrated 0.7.0 (Debian's package) against the ACME server: it registers (finding its account URL by
 * newAccount onlyReturnExisting), obtains over http-01 — it only writes the challenge files into WELLKNOWN, so
 * the test serves that directory on a loopback port — and revokes. The certificate verifies with openssl
 * against the chain dehydrated saved; the inventory shows the revocation. Runs on SQLite and MariaDB.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startBind9 } from '../../helpers/bind9.js';
import { tempDir } from '../../helpers/kernel.js';
import { acmeKernel } from './acme-kernel.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import type { CertificateRepository } from '../../../core/inventory/repository.js';

const run = promisify(execFile);
const dir = tempDir(t, 'cw-dehydrated-');
const wellKnown = join(dir, 'well-known');
mkdirSync(wellKnown);
mkdirSync(join(dir, 'base'));
const bind = await startBind9(t);
const httpPort = await freePort();

// dehydrated's WELLKNOWN directory, served as /.well-known/acme-challenge/<token>.
const files = createServer((req, res) => {
  const token = (req.url ?? '').replace(/^\/\.well-known\/acme-challenge\//, '');
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return res.writeHead(404).end();
  try {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(readFileSync(join(wellKnown, token)));
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise<void>((resolve) => files.listen(httpPort, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => files.close(() => resolve())));

const { kernel, port } = await acmeKernel(t, { bind, httpPort });

const configFile = join(dir, 'config');
writeFileSync(
  configFile,
  [`CA="http://127.0.0.1:${port}/acme/default/directory"`, `BASEDIR="${dir}/base"`, `WELLKNOWN="${wellKnown}"`, 'CHALLENGETYPE="http-01"', 'CONTACT_EMAIL="ops@example.com"', 'KEY_ALGO=prime256v1', ''].join('\n'),
);

async function dehydrated(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('dehydrated', ['-f', configFile, ...args], { encoding: 'utf8', timeout: 120_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`dehydrated failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

const certFile = join(dir, 'base', 'certs', 'dh.acme.test', 'cert.pem');
const inventory = (): CertificateRepository => (kernel.container.resolve('inventory') as { repository: CertificateRepository }).repository;

t.test('dehydrated registers and obtains over http-01', async (t) => {
  await dehydrated(['--register', '--accept-terms']);
  await dehydrated(['--cron', '--domain', 'dh.acme.test']);
  const chainFile = join(dir, 'base', 'certs', 'dh.acme.test', 'chain.pem');
  const chain = readFileSync(chainFile, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
  writeFileSync(join(dir, 'root.pem'), chain[chain.length - 1]! + '\n');
  const { stdout } = await run('openssl', ['verify', '-CAfile', join(dir, 'root.pem'), '-untrusted', chainFile, certFile], { encoding: 'utf8' });
  t.match(stdout, /cert\.pem: OK/, 'openssl verifies the certificate against the chain the directory published');
  t.match(new X509Certificate(readFileSync(certFile)).subjectAltName ?? '', /DNS:dh\.acme\.test/);
});

t.test('dehydrated revokes', async (t) => {
  const cert = new X509Certificate(readFileSync(certFile));
  await dehydrated(['--revoke', certFile]);
  const stored = await inventory().getByThumbprint('default', cert.fingerprint.replace(/:/g, '').toLowerCase());
  t.equal(stored?.revoked, true, 'the inventory shows the certificate revoked');
});
