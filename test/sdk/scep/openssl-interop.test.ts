/**
 * Interoperability with an independent CMS implementation, the openssl CLI (run with execFile in a temp
 * dir): OpenSSL verifies our CertReps and pkiMessages and decrypts their envelopes, and our openEnvelope
 * opens EnvelopedData / AuthEnvelopedData made by `openssl cms -encrypt`.
 */
import t from 'tap';
import { buildCertRep, buildPkiMessage, openEnvelope, parsePkiMessage, ScepError, type ContentCipher } from '@certwright/sdk/scep';
import { parseSignedData } from '../../../sdk/src/scep/signed-data.js';
import { fixtures, hex, scratch, thrown } from './fixtures.js';

const { ra, otherRa, client, issued, csr, crl } = fixtures();
const allowed = ['des-cbc', 'des-ede3-cbc', 'aes-128-cbc', 'aes-192-cbc', 'aes-256-cbc', 'aes-128-gcm', 'aes-192-gcm', 'aes-256-gcm'];

t.test('openssl verifies a SUCCESS CertRep and decrypts its envelope with the client key', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('client.pem', client.pem);
  await s.write('client.key', client.keyPem);
  const cases: Array<[ContentCipher, 'sha1' | 'sha256' | 'sha512']> = [
    ['aes-256-cbc', 'sha256'],
    ['aes-128-cbc', 'sha512'],
    ['des-ede3-cbc', 'sha1'],
  ];
  for (const [cipher, digest] of cases) {
    const rep = buildCertRep({
      pkiStatus: 'SUCCESS',
      transactionId: 'openssl-1',
      recipientNonce: new Uint8Array(16).fill(3),
      digest,
      signerCertificatePem: ra.pem,
      signerPrivateKey: ra.key,
      recipientCertificateDer: client.der,
      cipher,
      certificatesDer: [issued.der, ra.der],
    });
    await s.write('rep.der', rep);
    const verified = await s.openssl('cms', '-verify', '-noverify', '-inform', 'DER', '-in', 'rep.der', '-binary', '-out', 'env.der');
    t.match(verified.stderr, /Verification successful/, `${cipher}/${digest}: signature verifies in OpenSSL`);
    t.equal(hex(await s.read('env.der')), hex(parseSignedData(rep).eContent!), 'the content is the envelope');
    await s.openssl('cms', '-decrypt', '-inform', 'DER', '-in', 'env.der', '-recip', 'client.pem', '-inkey', 'client.key', '-binary', '-out', 'inner.der');
    const certs = await s.openssl('pkcs7', '-inform', 'DER', '-in', 'inner.der', '-print_certs', '-noout');
    const subjects = [...certs.stdout.matchAll(/subject=.*CN\s*=\s*([^\n,]+)/g)].map((m) => m[1]!.trim());
    t.same(subjects, ['scep-client issued', 'Certwright SCEP RA'], `${cipher}: issued certificate first`);
  }
});

t.test('openssl reads the CRL of a GetCRL answer', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('client.pem', client.pem);
  await s.write('client.key', client.keyPem);
  const rep = buildCertRep({ pkiStatus: 'SUCCESS', transactionId: 'crl', recipientNonce: Uint8Array.of(1), digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, recipientCertificateDer: client.der, cipher: 'aes-256-cbc', crlDer: crl });
  await s.write('rep.der', rep);
  await s.openssl('cms', '-verify', '-noverify', '-inform', 'DER', '-in', 'rep.der', '-binary', '-out', 'env.der');
  await s.openssl('cms', '-decrypt', '-inform', 'DER', '-in', 'env.der', '-recip', 'client.pem', '-inkey', 'client.key', '-binary', '-out', 'inner.der');
  const out = await s.openssl('pkcs7', '-inform', 'DER', '-in', 'inner.der', '-print_certs', '-text', '-noout');
  t.match(out.stdout, /Certificate Revocation List/);
});

t.test('openssl verifies FAILURE and PENDING CertReps (no content: digest of the empty string)', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('empty', '');
  for (const pkiStatus of ['FAILURE', 'PENDING'] as const) {
    const rep = buildCertRep({ pkiStatus, ...(pkiStatus === 'FAILURE' ? { failInfo: 'badRequest' as const } : {}), transactionId: 'tx-f', recipientNonce: Uint8Array.of(5), digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, cipher: 'aes-256-cbc' });
    await s.write('rep.der', rep);
    const v = await s.openssl('cms', '-verify', '-noverify', '-inform', 'DER', '-in', 'rep.der', '-content', 'empty', '-binary', '-out', 'out.bin');
    t.match(v.stderr, /Verification successful/, pkiStatus);
    const printed = await s.openssl('cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'rep.der');
    t.match(printed.stdout, /2\.16\.840\.1\.113733\.1\.9\.3/, 'pkiStatus attribute present');
    t.match(printed.stdout, /eContent: <ABSENT>/, 'no encapsulated content');
    if (pkiStatus === 'FAILURE') t.match(printed.stdout, /2\.16\.840\.1\.113733\.1\.9\.4/, 'failInfo attribute present');
  }
});

t.test('openssl verifies our pkiMessage and decrypts its envelope with the RA key', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('ra.pem', ra.pem);
  await s.write('ra.key', ra.keyPem);
  for (const cipher of ['aes-128-cbc', 'des-ede3-cbc'] as const) {
    const msg = buildPkiMessage({ messageType: 'PKCSReq', transactionId: 'x', inner: csr, signerCertificatePem: client.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.der], cipher, digest: 'sha256' });
    await s.write('msg.der', msg);
    const v = await s.openssl('cms', '-verify', '-noverify', '-inform', 'DER', '-in', 'msg.der', '-binary', '-out', 'env.der');
    t.match(v.stderr, /Verification successful/);
    await s.openssl('cms', '-decrypt', '-inform', 'DER', '-in', 'env.der', '-recip', 'ra.pem', '-inkey', 'ra.key', '-binary', '-out', 'csr.der');
    t.equal(hex(await s.read('csr.der')), hex(csr), `${cipher}: OpenSSL recovers the CSR`);
  }
});

t.test('openEnvelope opens EnvelopedData made by openssl cms -encrypt', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('ra.pem', ra.pem);
  await s.write('other.pem', otherRa.pem);
  await s.write('csr.der', csr);
  const cases: Array<[string, ContentCipher, string[]]> = [
    ['-aes256', 'aes-256-cbc', []],
    ['-aes128', 'aes-128-cbc', []],
    ['-des3', 'des-ede3-cbc', []],
    ['-aes256', 'aes-256-cbc', ['-keyid']], // recipient named by subjectKeyIdentifier
    ['-aes-256-gcm', 'aes-256-gcm', []], // AuthEnvelopedData
  ];
  for (const [flag, cipher, extra] of cases) {
    await s.openssl('cms', '-encrypt', flag, ...extra, '-binary', '-in', 'csr.der', '-outform', 'DER', '-out', 'env.der', '-recip', 'other.pem', '-recip', 'ra.pem');
    const env = await s.read('env.der');
    const inner = openEnvelope(env, { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: allowed });
    t.equal(hex(inner), hex(csr), `${flag} ${extra.join(' ')}: the CSR comes out`);
    const err = thrown(() => openEnvelope(env, { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: allowed.filter((c) => c !== cipher) }));
    t.ok(err instanceof ScepError && err.failInfo === 'badAlg', `${cipher} refused when not allowed`);
  }
});

t.test('openssl decrypts the envelope inside a parsed pkiMessage (envelope.der)', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('ra.pem', ra.pem);
  await s.write('ra.key', ra.keyPem);
  const m = parsePkiMessage(buildPkiMessage({ messageType: 'GetCert', transactionId: 'g', inner: csr, signerCertificatePem: client.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.der], cipher: 'aes-256-cbc', digest: 'sha512' }));
  await s.write('env.der', m.envelope.der);
  await s.openssl('cms', '-decrypt', '-inform', 'DER', '-in', 'env.der', '-recip', 'ra.pem', '-inkey', 'ra.key', '-binary', '-out', 'inner.der');
  t.equal(hex(await s.read('inner.der')), hex(csr));
});

t.test('single DES with OpenSSL\'s legacy provider, both ways', async (t) => {
  const s = await scratch();
  t.teardown(s.cleanup);
  await s.write('ra.pem', ra.pem);
  await s.write('client.pem', client.pem);
  await s.write('client.key', client.keyPem);
  await s.write('csr.der', csr);
  const legacy = ['-provider', 'legacy', '-provider', 'default'];
  try {
    await s.openssl('cms', '-encrypt', '-des', ...legacy, '-binary', '-in', 'csr.der', '-outform', 'DER', '-out', 'env.der', '-recip', 'ra.pem');
  } catch (err) {
    t.comment(`skipped: openssl has no legacy provider here: ${(err as Error).message.split('\n')[0]}`);
    return;
  }
  t.equal(hex(openEnvelope(await s.read('env.der'), { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: ['des-cbc'] })), hex(csr), 'openssl -des → openEnvelope');
  const rep = buildCertRep({ pkiStatus: 'SUCCESS', transactionId: 'des', recipientNonce: Uint8Array.of(1), digest: 'sha1', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, recipientCertificateDer: client.der, cipher: 'des-cbc', certificatesDer: [issued.der] });
  await s.write('rep.der', rep);
  await s.openssl('cms', '-verify', '-noverify', '-inform', 'DER', '-in', 'rep.der', '-binary', '-out', 'env2.der');
  await s.openssl('cms', '-decrypt', ...legacy, '-inform', 'DER', '-in', 'env2.der', '-recip', 'client.pem', '-inkey', 'client.key', '-binary', '-out', 'inner.der');
  const out = await s.openssl('pkcs7', '-inform', 'DER', '-in', 'inner.der', '-print_certs', '-noout');
  t.match(out.stdout, /CN\s*=\s*scep-client issued/, 'buildCertRep des-cbc → openssl');
});
