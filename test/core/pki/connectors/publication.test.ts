import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ADMIN_HEADERS, tempDir } from '../../../helpers/kernel.js';
import { csrFor, fakeCa, signCsr } from '../../../fixtures/pki-connectors/fake-ca.js';
import { bootFake, createConnector, moduleOf, recordCompletions, requestId, uniqueKey } from './helpers.js';

t.test('publication routes: CA, CRL and OCSP of a connector over the inventory of its issuing CA', async (t) => {
  const kernel = await bootFake(t, true);
  await recordCompletions([kernel]);
  await createConnector(kernel, { name: 'pub', type: 'fake-ca', configuration: { key: uniqueKey('pub') } });
  await createConnector(kernel, { name: 'plain', type: 'fake-plain', configuration: { key: uniqueKey('plain') } });
  const get = (url: string) => kernel.app.inject({ method: 'GET', url });

  // The issuing CA, DER (public: no credentials).
  const ca = await get('/pki/pub/ca');
  t.equal(ca.statusCode, 200);
  t.equal(ca.headers['content-type'], 'application/pkix-cert');
  const dir = tempDir(t);
  writeFileSync(join(dir, 'ca.der'), ca.rawPayload);
  const subject = execFileSync('openssl', ['x509', '-inform', 'DER', '-in', join(dir, 'ca.der'), '-noout', '-subject'], { encoding: 'utf8' });
  t.match(subject, /Fake Issuing CA/);

  // Three certificates of the fake CA in the inventory, one revoked, one expired and revoked; one of another issuer.
  const good = signCsr(csrFor('good.example'));
  const revoked = signCsr(csrFor('revoked.example'));
  const other = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'o.key'), '-subj', '/CN=other', '-days', '3', '-set_serial', `0x${good.serial}`], { encoding: 'utf8' });
  for (const pem of [good.pem, revoked.pem, other]) {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/', headers: ADMIN_HEADERS, payload: { certificate: pem } });
    t.equal(res.statusCode, 201);
  }
  const crl = async () => {
    const res = await get('/pki/pub/crl');
    t.equal(res.headers['content-type'], 'application/pkix-crl');
    return JSON.parse(res.body) as { revoked: { serial: string; revokedAt: number; reason?: string }[] };
  };
  t.same(await crl(), { revoked: [] });

  const revokedAt = Date.now() - 60_000;
  await kernel.db.knex('inv_certificates').where({ serial: revoked.serial }).update({ revoked: true, revocation_date: revokedAt, revocation_reason: 'KEY_COMPROMISE' });
  t.same(await crl(), { revoked: [] }, 'the CRL is served from the cache for a while');
  // A revocation through the gateway drops the connector's cached CRL.
  t.same(await moduleOf(kernel).gateway.revoke('default', 'pub', requestId(), { certificatePem: revoked.pem, serial: revoked.serial, reason: 'keyCompromise' }), { status: 'revoked' });
  t.same(await crl(), { revoked: [{ serial: revoked.serial, revokedAt, reason: 'keyCompromise' }] });

  // OCSP: the fake answers what the revocation source says for the serial it was sent.
  const ocsp = async (serial: string, how: 'post' | 'get') => {
    const res =
      how === 'post'
        ? await kernel.app.inject({ method: 'POST', url: '/pki/pub/ocsp', headers: { 'content-type': 'application/ocsp-request' }, payload: Buffer.from(serial) })
        : await get(`/pki/pub/ocsp/${encodeURIComponent(Buffer.from(serial).toString('base64'))}`);
    t.equal(res.statusCode, 200);
    t.equal(res.headers['content-type'], 'application/ocsp-response');
    return JSON.parse(res.body) as Record<string, unknown>;
  };
  t.same(await ocsp(good.serial, 'post'), { serial: good.serial, status: 'good' });
  t.same(await ocsp(`00${good.serial.toUpperCase()}`, 'get'), { serial: `00${good.serial.toUpperCase()}`, status: 'good' }, 'serials compare by value');
  t.same(await ocsp(revoked.serial, 'get'), { serial: revoked.serial, status: 'revoked', revokedAt, reason: 'keyCompromise' });
  t.same(await ocsp('0badc0de', 'post'), { serial: '0badc0de', status: 'unknown' });

  // 404 problems: unknown connector, a connector that does not sign CRLs / OCSP answers.
  for (const url of ['/pki/nope/crl', '/pki/nope/ca', '/pki/plain/crl', '/pki/plain/ocsp/AAAA']) {
    const res = await get(url);
    t.equal(res.statusCode, 404, url);
    t.match(res.json(), { error: 'PKI-CONN-003' }, url);
    t.equal(res.headers['content-type'], 'application/problem+json');
  }
  const bad = await get('/pki/pub/ocsp/%25%25notbase64');
  t.equal(bad.statusCode, 400);
});

t.test('publicBaseUrl: configured, or http://<server.host>:<server.port>', async (t) => {
  const configured = await bootFake(t, true, { pki: { publicBaseUrl: 'https://pki.example.com/', queue: { pollEveryMs: 300, leaseMs: 5000 }, bootstrap: { localCa: false, keyType: 'ec-secp256r1' } } });
  t.same(moduleOf(configured).gateway.publicationOf('a b'), {
    crlUrl: 'https://pki.example.com/pki/a%20b/crl',
    ocspUrl: 'https://pki.example.com/pki/a%20b/ocsp',
    caIssuersUrl: 'https://pki.example.com/pki/a%20b/ca',
  });
  const local = await bootFake(t, true, { server: { host: 'localhost', port: 8443 } });
  t.equal(moduleOf(local).gateway.publicBaseUrl(), 'http://localhost:8443');
  t.ok(fakeCa().certPem.includes('BEGIN CERTIFICATE'));
});
