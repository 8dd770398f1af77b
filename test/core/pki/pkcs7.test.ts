import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { readTlv } from '../../../core/pki/der/reader.js';
import { berToDer } from '../../../core/pki/pkcs7/ber.js';
import { decodePkcs7 } from '../../../core/pki/pkcs7/decode.js';
import { rareTools, type RareTools } from '../../helpers/openssl-rare.js';

function problemCode(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof ProblemError) return err.code;
    throw err;
  }
  return 'none';
}

/** serial, RFC 2253 subject and SHA-1 fingerprint of each certificate `openssl pkcs7 -print_certs` lists. */
function printedCerts(tools: RareTools, file: string, inform: 'PEM' | 'DER') {
  const pem = tools.run(['pkcs7', '-inform', inform, '-in', file, '-print_certs']);
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n/g)].map((m) => {
    tools.write('one.pem', m[0]);
    const out = tools.run(['x509', '-in', 'one.pem', '-noout', '-serial', '-subject', '-nameopt', 'RFC2253', '-fingerprint', '-sha1']);
    return {
      serial: /serial=(\S+)/.exec(out)![1]!.toLowerCase(),
      dn: /subject=(.*)/.exec(out)![1]!.trim(),
      thumbprint: /Fingerprint=(\S+)/.exec(out)![1]!.replace(/:/g, '').toLowerCase(),
    };
  });
}

const summary = (certs: { serial: string; dn: string; thumbprint: string }[]) => certs.map((c) => ({ serial: c.serial, dn: c.dn, thumbprint: c.thumbprint }));

t.test('a p7b bundle from openssl crl2pkcs7: the certificates openssl prints', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.issue('leaf');
  tools.issue('other');
  tools.write('chain.pem', `${tools.text('leaf.pem')}${tools.text('other.pem')}${tools.text('ca.pem')}`);
  tools.run(['crl2pkcs7', '-nocrl', '-certfile', 'chain.pem', '-out', 'bundle.p7b']);
  tools.run(['crl2pkcs7', '-nocrl', '-certfile', 'chain.pem', '-outform', 'DER', '-out', 'bundle.der']);
  const expected = printedCerts(tools, 'bundle.p7b', 'PEM');
  t.equal(expected.length, 3);

  const fromDer = decodePkcs7(tools.read('bundle.der'));
  t.same(summary(fromDer.certificates), expected, 'certificates in bundle order');
  t.same(fromDer.crls, []);
  t.equal(fromDer.signerCount, 0, 'degenerate SignedData');
  t.equal(fromDer.otherCertificates, 0);
  t.equal(fromDer.encapsulatedContentType, '1.2.840.113549.1.7.1');
  t.equal(fromDer.certificates[2]!.selfSigned, true, 'the CA is self-signed');
  t.equal(fromDer.certificates[0]!.issuer, fromDer.certificates[2]!.dn);

  // The same bundle with indefinite lengths (BER), as some exporters write it.
  const der = tools.read('bundle.der');
  const ber = Buffer.concat([Uint8Array.of(0x30, 0x80), der.subarray(readTlv(der, 0).valueStart), Uint8Array.of(0, 0)]);
  t.same(summary(decodePkcs7(ber).certificates), expected, 'BER framing');
  t.same(berToDer(ber), der, 'BER normalised back to the DER openssl wrote');
  t.equal(berToDer(der), der, 'DER comes back as the very same bytes');
});

t.test('a bundle with a CRL, and signed CMS (BER, streamed) from openssl cms', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.revoke(tools.issue('revoked'), { reason: 'keyCompromise' });
  tools.issue('signer');
  tools.gencrl();
  tools.run(['crl2pkcs7', '-in', 'crl.pem', '-certfile', 'ca.pem', '-outform', 'DER', '-out', 'with-crl.der']);
  const bundle = decodePkcs7(tools.read('with-crl.der'));
  t.equal(bundle.certificates.length, 1);
  t.equal(bundle.crls.length, 1);
  t.same(bundle.crls[0], decodeCrl(tools.der('crl.pem', 'crl')), 'the CRL decodes as on its own');
  t.equal(bundle.crls[0]!.entries[0]!.reason, 'KEYCOMPROMISE');

  tools.write('content.txt', 'signed content');
  tools.run(['cms', '-sign', '-in', 'content.txt', '-signer', 'signer.pem', '-inkey', 'signer.key', '-certfile', 'ca.pem', '-outform', 'DER', '-stream', '-nodetach', '-out', 'signed.der']);
  const signed = tools.read('signed.der');
  t.equal(signed[1], 0x80, 'openssl -stream writes indefinite lengths');
  const decoded = decodePkcs7(signed);
  t.equal(decoded.signerCount, 1);
  t.same(summary(decoded.certificates), printedCerts(tools, 'signed.der', 'DER'));
  t.equal(decoded.certificates.length, 2);

  tools.run(['cms', '-encrypt', '-in', 'content.txt', '-recip', 'signer.pem', '-outform', 'DER', '-out', 'enveloped.der']);
  t.equal(problemCode(() => decodePkcs7(tools.read('enveloped.der'))), 'PKI-006', 'EnvelopedData is not a bundle');
});

t.test('bad input: specific codes', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.run(['crl2pkcs7', '-nocrl', '-certfile', 'ca.pem', '-outform', 'DER', '-out', 'bundle.der']);
  const der = tools.read('bundle.der');
  // 1000 indefinite-length SEQUENCEs, one inside the other.
  const deep = Buffer.concat([Buffer.alloc(2000).map((_, i) => (i % 2 ? 0x80 : 0x30)), Buffer.alloc(2000, 0)]);
  const cases: [string, Uint8Array, string][] = [
    ['truncated', der.subarray(0, der.length - 5), 'PKI-001'],
    ['a certificate', tools.der('ca.pem', 'x509'), 'PKI-002'],
    ['garbage', Uint8Array.from({ length: 100 }, (_, i) => (i * 13) & 0xff), 'PKI-001'],
    ['deeply nested BER', deep, 'PKI-005'],
    ['an absurd length', Uint8Array.of(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x06, 0x00), 'PKI-004'],
  ];
  for (const [name, bytes, code] of cases) {
    const started = performance.now();
    t.equal(problemCode(() => decodePkcs7(bytes)), code, name);
    t.ok(performance.now() - started < 500, `${name}: in bounded time`);
  }
});
