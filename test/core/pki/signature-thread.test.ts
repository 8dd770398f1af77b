import { generateKeyPairSync, sign, verify } from 'node:crypto';
import t from 'tap';
import { buildCsr } from '../../../core/pki/csr/build.js';
import { parseCsr, parseCsrPem, parseCsrPemOffThread } from '../../../core/pki/csr/parse.js';
import { toPem } from '../../../core/pki/input.js';
import { checkOffThread, stopSignatureThread } from '../../../core/pki/x509/signature-thread.js';
import { forgetVerifiedSignatures } from '../../../core/pki/x509/signature.js';
import { openssl } from '../../helpers/openssl.js';

const KEYS = [
  ['ec', { namedCurve: 'P-256' }],
  ['ec', { namedCurve: 'P-521' }],
  ['rsa', { modulusLength: 2048 }],
  ['ed25519', {}],
] as const;

const csrOf = (type: string, options: object, cn: string): Uint8Array => {
  const { privateKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
  return buildCsr(privateKey, { subject: `CN=${cn}`, sans: [{ sanType: 'DNSNAME', value: cn }] });
};

const flip = (der: Uint8Array, at: number): Buffer => {
  const out = Buffer.from(der);
  out[at] = out[at]! ^ 0x01;
  return out;
};

t.teardown(() => stopSignatureThread());

/** A P-256 / SHA-256 check sent to the worker, with the same check on this thread for when it is gone. */
function offThread(spki: Buffer, data: Buffer, signature: Buffer): Promise<boolean> {
  const here = (): boolean => {
    try {
      return verify('sha256', data, { key: spki, format: 'der', type: 'spki' }, signature);
    } catch {
      return false;
    }
  };
  return checkOffThread({ digest: 'sha256', key: { spki }, data, signature }, here);
}

t.test('a CSR checked on the worker thread decodes as on the calling thread, its signature verdict too', async (t) => {
  for (const [type, options] of KEYS) {
    const label = `${type} ${JSON.stringify(options)}`;
    const der = csrOf(type, options, `thread-${type}.example.com`);
    const pem = toPem(der, 'CERTIFICATE REQUEST');
    forgetVerifiedSignatures();
    const off = await parseCsrPemOffThread(pem);
    t.equal(off.signatureValid, true, `${label}: verifies off the thread`);
    t.same(off, parseCsrPem(pem), `${label}: the same decoding`);
    // A changed subject under the same signature, and a changed signature byte: both fail, never remembered.
    const subject = flip(der, Buffer.from(der).indexOf(Buffer.from('thread-')));
    const signature = flip(der, der.length - 3);
    for (const [what, bad] of [['a changed subject', subject], ['a changed signature', signature]] as const) {
      t.equal((await parseCsrPemOffThread(bad)).signatureValid, false, `${label}: ${what} fails off the thread`);
      t.equal(parseCsr(bad).signatureValid, false, `${label}: ${what} still fails on the calling thread`);
    }
  }
});

t.test('an RSA-PSS CSR (openssl) verifies off the thread with its salt length', async (t) => {
  const ssl = openssl(t);
  ssl.run(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'pss.key', '-subj', '/CN=pss.example.com', '-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:32', '-out', 'pss.csr']);
  const pem = ssl.read('pss.csr').toString();
  forgetVerifiedSignatures();
  const off = await parseCsrPemOffThread(pem);
  t.equal(off.signingAlgorithm, 'rsassaPss');
  t.equal(off.signatureValid, true);
  ssl.run(['req', '-in', 'pss.csr', '-outform', 'DER', '-out', 'pss.der']);
  const der = ssl.read('pss.der');
  t.equal((await parseCsrPemOffThread(flip(der, der.length - 3))).signatureValid, false, 'a changed signature fails');
});

t.test('bad input answers a PKI problem, as the calling-thread decoder does', async (t) => {
  await t.rejects(parseCsrPemOffThread('not a csr'), { code: 'PKI-001' });
  await t.rejects(parseCsrPemOffThread(Buffer.from('30030201', 'hex')), { code: 'PKI-001' });
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  // A key node cannot import (a point off the curve): false, not an error.
  const spki = Buffer.from(publicKey.export({ type: 'spki', format: 'der' }));
  spki[spki.length - 1] = spki[spki.length - 1]! ^ 0xff;
  const data = Buffer.from('data');
  t.equal(await offThread(spki, data, sign('sha256', data, privateKey)), false);
});

t.test('many checks at once each get their own answer; stopping the worker loses none', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const items = Array.from({ length: 200 }, (_, i) => {
    const data = Buffer.from(`message ${i}`);
    const signature = sign('sha256', data, privateKey);
    // Every third one is signed over other data: it must fail, and only it.
    return { data, signature: i % 3 === 0 ? sign('sha256', Buffer.from('other'), privateKey) : signature, ok: i % 3 !== 0 };
  });
  const answers = await Promise.all(items.map((it) => offThread(spki, it.data, it.signature)));
  t.same(answers, items.map((it) => it.ok), 'each answer is its own check');

  // Stopped with checks in flight: they are answered on the calling thread; later ones start the worker again.
  const inFlight = items.map((it) => offThread(spki, it.data, it.signature));
  await stopSignatureThread();
  t.same(await Promise.all(inFlight), items.map((it) => it.ok), 'in flight during the stop: all answered, correctly');
  t.same(
    await Promise.all(items.slice(0, 6).map((it) => offThread(spki, it.data, it.signature))),
    items.slice(0, 6).map((it) => it.ok),
    'after the stop',
  );
});
