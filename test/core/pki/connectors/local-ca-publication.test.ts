import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP, tempDir } from '../../../helpers/kernel.js';
import { csrFor } from '../../../fixtures/pki-connectors/fake-ca.js';
import { moduleOf, recordCompletions, requestId } from './helpers.js';

// Async: the server answering openssl runs in this process.
const run = promisify(execFile);
const openssl = async (args: string[]): Promise<string> => (await run('openssl', args, { encoding: 'utf8', timeout: 20_000 })).stdout;

t.test('first start: connector local-ca, profile default, the CA imported; its CRL and OCSP verified by openssl', async (t) => {
  const kernel = await bootKernel(t, { ...ENROLLMENT_BOOTSTRAP, server: { host: '127.0.0.1', port: 0 } });
  const connectors = (await kernel.app.inject({ method: 'GET', url: '/api/v1/pki/connectors/', headers: ADMIN_HEADERS })).json() as { name: string; type: string }[];
  t.match(connectors, [{ name: 'local-ca', type: 'local-ca' }]);
  const cas = (await kernel.app.inject({ method: 'GET', url: '/api/v1/cas/', headers: ADMIN_HEADERS })).json() as { name: string }[];
  t.equal(cas.length, 2, 'root and issuing CA imported');
  const { gateway } = moduleOf(kernel);
  await recordCompletions([kernel]);
  // The bootstrap runs once: a second call changes nothing.
  await kernel.container.resolve<{ bootstrap(tenant: string): Promise<void> }>('enrollment').bootstrap('default');
  t.equal(((await kernel.db.knex('pki_connectors').count({ n: '*' }).first()) as { n: number }).n, 1);

  const address = await kernel.listen();
  const base = `${address}/pki/local-ca`;
  const dir = tempDir(t);
  const chain = await gateway.caChain('default', 'local-ca');
  writeFileSync(join(dir, 'issuer.pem'), chain[0]!);
  writeFileSync(join(dir, 'chain.pem'), chain.join(''));

  const issued = await gateway.issue('default', 'local-ca', { requestId: requestId(), csrPem: csrFor('ocsp.example'), profile: 'default', validityDays: 30 });
  if (issued.status !== 'issued') throw new Error(`not issued: ${JSON.stringify(issued)}`);
  writeFileSync(join(dir, 'leaf.pem'), issued.certificatePem);
  const imported = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/', headers: ADMIN_HEADERS, payload: { certificate: issued.certificatePem } });
  t.equal(imported.statusCode, 201);
  const serial = (imported.json() as { serial: string }).serial;

  const ocsp = () => openssl(['ocsp', '-issuer', join(dir, 'issuer.pem'), '-cert', join(dir, 'leaf.pem'), '-url', `${base}/ocsp`, '-CAfile', join(dir, 'chain.pem'), '-resp_text']);
  t.match(await ocsp(), /leaf\.pem: good/);

  const crlFile = join(dir, 'crl.der');
  const fetchCrl = async () => {
    const res = await fetch(`${base}/crl`);
    t.equal(res.headers.get('content-type'), 'application/pkix-crl');
    writeFileSync(crlFile, Buffer.from(await res.arrayBuffer()));
    return openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', join(dir, 'chain.pem'), '-noout', '-text']);
  };
  t.notMatch(await fetchCrl(), new RegExp(serial, 'i'));

  await kernel.db.knex('inv_certificates').where({ serial }).update({ revoked: true, revocation_date: Date.now(), revocation_reason: 'keyCompromise' });
  t.same(await gateway.revoke('default', 'local-ca', requestId(), { certificatePem: issued.certificatePem, serial, reason: 'keyCompromise' }), { status: 'revoked' });
  t.match(await ocsp(), /leaf\.pem: revoked/);
  const text = await fetchCrl();
  t.match(text.replace(/:/g, '').toLowerCase(), serial.toLowerCase(), 'the CRL lists the revoked serial');
  const verified = await run('openssl', ['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', join(dir, 'chain.pem'), '-noout'], { encoding: 'utf8' });
  t.match(verified.stderr, /verify OK/, 'openssl verifies the CRL signature');
});
