/**
 * SCEP with strongSwan's pki 5.9.8 (AES + SHA-256, RSA keys): --scepca fetches the CA and RA certificates,
 * --scep enrolls with a one-time challenge from the request API, renews with --cert/--key (RenewalReq signed
 * by the current certificate), and on a profile that needs approval polls with CertPoll until an approver
 * approves. Every certificate verifies with `openssl verify`. Runs on SQLite and MariaDB.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { caller, createPrincipal } from '../../helpers/security.js';
import { opensslVerifies, run, scepKernel } from './scep-kernel.js';

const scep = await scepKernel(t, { profiles: [{ name: 'gated', protocols: { scep: { enabled: true, requireApproval: true, challenge: 'static', staticChallenge: 'Gated-Static-1' } } }] });
const approver = await createPrincipal(scep.kernel, 'approver', { permissions: [{ value: 'lifecycle:*:gated:*:approve' } as never] });
const file = (name: string) => join(scep.dir, name);
const url = (profile: string) => `${scep.http}/scep/${profile}/pkiclient.exe`;

async function rsaKey(name: string): Promise<string> {
  await run('bash', ['-c', `pki --gen --type rsa --size 2048 --outform der > ${file(`${name}.key.der`)}`]);
  return file(`${name}.key.der`);
}

t.test('pki --scepca writes the CA and the RA certificates', async (t) => {
  await run('pki', ['--scepca', '--url', url('default'), '--caout', file('ca.pem'), '--raout', file('ra.pem'), '--outform', 'pem', '--force']);
  const ra = (await run('openssl', ['x509', '-in', file('ra.pem'), '-noout', '-subject', '-text'])).stdout;
  t.match(ra, /SCEP RA default/, 'the RA certificate');
  t.match(ra, /rsaEncryption/, 'an RSA key');
  t.ok(await opensslVerifies(scep, file('ra.pem')), 'the RA is issued by the profile CA');
});

t.test('pki --scep with a one-time challenge, then a renewal with --cert/--key', async (t) => {
  const key = await rsaKey('sw1');
  const challenge = await scep.challenge('default');
  await run('bash', ['-c', `pki --scep --url ${url('default')} --in ${key} --dn "CN=sw1.example" --san sw1.example --password '${challenge}' --cacert-enc ${file('ra.pem')} --cacert-sig ${file('ra.pem')} --cacert ${scep.chainFile} --cipher aes --digest sha256 --outform pem > ${file('sw1.pem')}`]);
  t.ok(await opensslVerifies(scep, file('sw1.pem')), 'openssl verify: OK');
  t.match((await run('openssl', ['x509', '-in', file('sw1.pem'), '-noout', '-subject', '-ext', 'subjectAltName'])).stdout, /CN\s*=\s*sw1\.example[\s\S]*DNS:sw1\.example/);

  const reused = await run('bash', ['-c', `pki --scep --url ${url('default')} --in ${await rsaKey('sw2')} --dn "CN=sw2.example" --password '${challenge}' --cacert-enc ${file('ra.pem')} --cacert-sig ${file('ra.pem')} --cacert ${scep.chainFile} --maxpolltime 1 --outform pem > ${file('sw2.pem')}`]).then(() => 'issued', (e: { stderr?: string }) => e.stderr ?? 'failed');
  t.not(reused, 'issued', 'a spent challenge enrolls nothing');

  const newKey = await rsaKey('sw1b');
  await run('bash', ['-c', `pki --scep --url ${url('default')} --in ${newKey} --dn "CN=sw1.example" --san sw1.example --cacert-enc ${file('ra.pem')} --cacert-sig ${file('ra.pem')} --cacert ${scep.chainFile} --cert ${file('sw1.pem')} --key ${key} --outform pem > ${file('sw1b.pem')}`]);
  t.ok(await opensslVerifies(scep, file('sw1b.pem')), 'the renewed certificate verifies');
  const renewed = await scep.kernel.db.knex('requests').where({ module: 'scep', workflow: 'renew', status: 'completed' }).count({ n: '*' });
  t.equal(Number(renewed[0]!.n), 1, 'a renew request of the workflow');
});

t.test('pki --scep on a profile that needs approval (static challenge): PENDING, CertPoll until approved', async (t) => {
  const key = await rsaKey('gated');
  const challenge = 'Gated-Static-1';
  await run('pki', ['--scepca', '--url', url('gated'), '--raout', file('gated-ra.pem'), '--caout', file('gated-ca.pem'), '--outform', 'pem', '--force']);
  const child = spawn('bash', ['-c', `pki --scep --url ${url('gated')} --in ${key} --dn "CN=gated.example" --password '${challenge}' --cacert-enc ${file('gated-ra.pem')} --cacert-sig ${file('gated-ra.pem')} --cacert ${scep.chainFile} --interval 1 --maxpolltime 60 --outform pem > ${file('gated.pem')}`]);
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  t.teardown(() => void child.kill());
  let pending: { _id: string }[] = [];
  for (let i = 0; i < 50 && pending.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    pending = (await scep.admin('POST', '/api/v1/requests/search', { query: 'status equals "pending"' })).json().results;
  }
  t.equal(pending.length, 1, 'the PKCSReq made one pending request');
  await new Promise((r) => setTimeout(r, 1500));
  const stillPending = (await scep.admin('POST', '/api/v1/requests/search', { query: 'status equals "pending"' })).json().results;
  t.equal(stillPending.length, 1, 'polling (CertPoll) adds no request');
  const approved = await caller(scep.kernel, { ...approver.headers, host: '127.0.0.1' })('POST', '/api/v1/requests/approve', { _id: pending[0]!._id });
  t.equal(approved.statusCode, 200, approved.body);
  t.equal(await exited, 0, 'pki polls, then exits with the certificate');
  t.ok(await opensslVerifies(scep, file('gated.pem')));
  t.match(readFileSync(file('gated.pem'), 'utf8'), /BEGIN CERTIFICATE/);
});
