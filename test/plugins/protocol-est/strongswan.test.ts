/**
 * EST with strongSwan's pki 5.9.8 (HTTPS only, TLS 1.2, no CA label: the unlabeled /.well-known/est/ form of
 * the default EST profile): --estca fetches the chain, --est enrolls with HTTP Basic, and --est with
 * --cert/--key re-enrolls over TLS client authentication. Every certificate verifies with `openssl verify`.
 * Runs on SQLite and MariaDB.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createPrincipal } from '../../helpers/security.js';
import { estKernel, opensslVerifies, run } from './est-kernel.js';

const est = await estKernel(t);
const device = await createPrincipal(est.kernel, 'sw-device', { secret: 'StrongSwan-Device-1!' });
const file = (name: string) => join(est.dir, name);
const pki = (args: string[]) => run('pki', args, { maxBuffer: 1 << 20 });

/** An ECDSA P-256 key and a CSR (DER) for `cn`, made by pki itself. */
async function keyAndRequest(name: string, cn: string): Promise<void> {
  await run('bash', ['-c', `pki --gen --type ecdsa --size 256 --outform der > ${file(`${name}.key.der`)} && pki --req --type ecdsa --in ${file(`${name}.key.der`)} --dn "CN=${cn}" --san ${cn} --outform der > ${file(`${name}.req.der`)}`]);
}

t.test('pki --estca: the chain of the default EST profile', async (t) => {
  await pki(['--estca', '--url', est.https, '--cacert', est.rootFile, '--caout', file('estca'), '--outform', 'pem', '--force']);
  const written = ['estca-1.pem', 'estca-2.pem', 'estca.pem'].filter((f) => existsSync(file(f)));
  t.ok(written.length >= 1, `pki wrote ${written.join(', ')}`);
  const all = written.map((f) => readFileSync(file(f), 'utf8')).join('');
  t.ok(all.includes(readFileSync(est.rootFile, 'utf8').trim().split('\n')[1]!), 'the root is among them');
});

t.test('pki --est with --userpass, then re-enrollment with --cert/--key over TLS client authentication', async (t) => {
  await keyAndRequest('sw1', 'sw1.example');
  await run('bash', ['-c', `pki --est --url ${est.https} --in ${file('sw1.req.der')} --cacert ${est.rootFile} --userpass ${device.identifier}:${device.secret} --outform pem > ${file('sw1.pem')}`]);
  t.match(readFileSync(file('sw1.pem'), 'utf8'), /BEGIN CERTIFICATE/, 'a certificate');
  t.ok(await opensslVerifies(est, file('sw1.pem')), 'openssl verify: OK');
  const subject = (await run('openssl', ['x509', '-in', file('sw1.pem'), '-noout', '-subject', '-ext', 'subjectAltName'])).stdout;
  t.match(subject, /CN\s*=\s*sw1\.example/);
  t.match(subject, /DNS:sw1\.example/);

  await run('bash', ['-c', `pki --gen --type ecdsa --size 256 --outform der > ${file('sw1b.key.der')} && pki --req --type ecdsa --in ${file('sw1b.key.der')} --dn "CN=sw1.example" --san sw1.example --outform der > ${file('sw1b.req.der')}`]);
  await run('bash', ['-c', `pki --est --url ${est.https} --in ${file('sw1b.req.der')} --cacert ${est.rootFile} --cert ${file('sw1.pem')} --key ${file('sw1.key.der')} --outform pem > ${file('sw1b.pem')}`]);
  t.ok(await opensslVerifies(est, file('sw1b.pem')), 'the renewed certificate verifies');
  const serials = await Promise.all(['sw1.pem', 'sw1b.pem'].map(async (f) => (await run('openssl', ['x509', '-in', file(f), '-noout', '-serial'])).stdout));
  t.not(serials[0], serials[1], 'a new certificate');
  const renew = await est.kernel.db.knex('requests').where({ module: 'est', workflow: 'renew', status: 'completed' }).count({ n: '*' });
  t.equal(Number(renew[0]!.n), 1, 'recorded as a renew request');
});

t.test('pki --est with a wrong password fails without a certificate', async (t) => {
  await keyAndRequest('sw2', 'sw2.example');
  const failed = await run('bash', ['-c', `pki --est --url ${est.https} --in ${file('sw2.req.der')} --cacert ${est.rootFile} --userpass ${device.identifier}:wrong --outform pem > ${file('sw2.pem')}`]).then(() => false, () => true);
  t.ok(failed, 'pki exits with an error');
  t.equal(readFileSync(file('sw2.pem'), 'utf8'), '', 'and writes nothing');
});
