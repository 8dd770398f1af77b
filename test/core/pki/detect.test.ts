import { createPrivateKey } from 'node:crypto';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { detect, type Detection } from '../../../core/pki/detect.js';
import { MAX_OBJECT_BYTES } from '../../../core/pki/input.js';
import { seq } from '../../../core/pki/der/writer.js';
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

/** One object of every kind, each written by openssl or ssh-keygen. */
function objects(tools: RareTools) {
  tools.ca();
  tools.issue('leaf');
  tools.issue('tsa', 'Rare TSA', 'tsa');
  tools.gencrl();
  // Keys: PKCS#8 (genpkey), PKCS#1 (rsa -traditional), SEC1 (ec), encrypted PKCS#8 (pkcs8 -topk8 -v2 aes256), SPKI (pkey -pubout).
  tools.run(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'rsa.key']);
  tools.run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384', '-out', 'ec.key']);
  tools.run(['genpkey', '-algorithm', 'ED25519', '-out', 'ed.key']);
  tools.run(['rsa', '-in', 'rsa.key', '-traditional', '-out', 'rsa-pkcs1.pem']);
  tools.run(['rsa', '-in', 'rsa.key', '-traditional', '-outform', 'DER', '-out', 'rsa-pkcs1.der']);
  tools.run(['rsa', '-in', 'rsa.key', '-traditional', '-aes256', '-passout', 'pass:x', '-out', 'rsa-legacy-encrypted.pem']);
  tools.run(['rsa', '-in', 'rsa.key', '-RSAPublicKey_out', '-out', 'rsa-pkcs1-pub.pem']);
  tools.run(['ec', '-in', 'ec.key', '-out', 'ec-sec1.pem']);
  tools.run(['ec', '-in', 'ec.key', '-outform', 'DER', '-out', 'ec-sec1.der']);
  tools.run(['pkcs8', '-topk8', '-v2', 'aes256', '-in', 'ec.key', '-passout', 'pass:x', '-out', 'ec-encrypted.pem']);
  tools.run(['pkcs8', '-topk8', '-v2', 'aes256', '-in', 'ec.key', '-passout', 'pass:x', '-outform', 'DER', '-out', 'ec-encrypted.der']);
  tools.run(['pkey', '-in', 'ec.key', '-pubout', '-out', 'ec-pub.pem']);
  tools.run(['pkey', '-in', 'ed.key', '-pubout', '-outform', 'DER', '-out', 'ed-pub.der']);
  tools.run(['pkey', '-in', 'ed.key', '-outform', 'DER', '-out', 'ed.der']);
  // Bundles and keystores.
  tools.run(['crl2pkcs7', '-nocrl', '-certfile', 'ca.pem', '-out', 'bundle.p7b']);
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-passout', 'pass:x', '-out', 'leaf.p12']);
  // OCSP and time-stamping.
  tools.run(['ocsp', '-issuer', 'ca.pem', '-cert', 'leaf.pem', '-no_nonce', '-reqout', 'ocsp.req']);
  tools.run(['ocsp', '-index', 'index.txt', '-rsigner', 'ca.pem', '-rkey', 'ca.key', '-CA', 'ca.pem', '-reqin', 'ocsp.req', '-respout', 'ocsp.resp']);
  tools.write('content.txt', 'time-stamped content');
  tools.run(['ts', '-query', '-data', 'content.txt', '-sha256', '-cert', '-out', 'query.tsq']);
  tools.write('tsaserial', '01\n');
  tools.write(
    'tsa.cnf',
    ['[ tsa ]', 'default_tsa = tsa_config', '[ tsa_config ]', 'serial = ./tsaserial', 'signer_cert = ./tsa.pem', 'signer_key = ./tsa.key', 'signer_digest = sha256', 'default_policy = 1.2.3.4.1', 'digests = sha256', 'ess_cert_id_alg = sha256', ''].join('\n'),
  );
  tools.run(['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'query.tsq', '-out', 'reply.tsr']);
  // OpenSSH: a private key, its public key, a certificate signed by an SSH CA.
  tools.sshKeygen(['-q', '-t', 'ed25519', '-N', '', '-C', 'me@example', '-f', 'id_ed25519']);
  tools.sshKeygen(['-q', '-t', 'ecdsa', '-b', '256', '-N', '', '-C', 'ecdsa key', '-f', 'id_ecdsa']);
  tools.sshKeygen(['-q', '-t', 'ed25519', '-N', '', '-f', 'ssh_ca']);
  tools.sshKeygen(['-q', '-s', 'ssh_ca', '-I', 'ident', '-n', 'alice', 'id_ed25519.pub']);
}

t.test('one object of each type, as openssl and ssh-keygen write them', async (t) => {
  const tools = rareTools(t);
  objects(tools);
  const text = (f: string) => tools.text(f);
  const b64 = (f: string) => tools.read(f).toString('base64');
  const cases: [string, string | Uint8Array | Record<string, unknown>, Partial<Detection>][] = [
    ['certificate PEM', text('ca.pem'), { type: 'certificate', encoding: 'pem', label: 'CERTIFICATE' }],
    ['certificate DER', tools.der('ca.pem', 'x509'), { type: 'certificate', encoding: 'der' }],
    ['certificate base64', tools.der('leaf.pem', 'x509').toString('base64'), { type: 'certificate', encoding: 'base64' }],
    ['CSR', text('leaf.csr'), { type: 'csr', encoding: 'pem', label: 'CERTIFICATE REQUEST' }],
    ['CSR DER', tools.der('leaf.csr', 'req'), { type: 'csr', encoding: 'der' }],
    ['CRL', text('crl.pem'), { type: 'crl', encoding: 'pem', label: 'X509 CRL' }],
    ['CRL DER', tools.der('crl.pem', 'crl'), { type: 'crl', encoding: 'der' }],
    ['PKCS#7', text('bundle.p7b'), { type: 'pkcs7', encoding: 'pem', label: 'PKCS7' }],
    ['PKCS#7 DER', tools.der('bundle.p7b', 'pkcs7'), { type: 'pkcs7', encoding: 'der' }],
    ['PKCS#12 DER', tools.read('leaf.p12'), { type: 'pkcs12', encoding: 'der' }],
    ['PKCS#12 base64', b64('leaf.p12'), { type: 'pkcs12', encoding: 'base64' }],
    ['PKCS#8', text('ec.key'), { type: 'private-key-pkcs8', encoding: 'pem', label: 'PRIVATE KEY' }],
    ['PKCS#8 DER (Ed25519)', tools.read('ed.der'), { type: 'private-key-pkcs8', encoding: 'der' }],
    ['PKCS#1', text('rsa-pkcs1.pem'), { type: 'private-key-pkcs1', encoding: 'pem', label: 'RSA PRIVATE KEY' }],
    ['PKCS#1 DER', tools.read('rsa-pkcs1.der'), { type: 'private-key-pkcs1', encoding: 'der' }],
    ['SEC1', text('ec-sec1.pem'), { type: 'private-key-sec1', encoding: 'pem', label: 'EC PRIVATE KEY' }],
    ['SEC1 DER', tools.read('ec-sec1.der'), { type: 'private-key-sec1', encoding: 'der' }],
    ['encrypted PKCS#8', text('ec-encrypted.pem'), { type: 'encrypted-private-key', encoding: 'pem', label: 'ENCRYPTED PRIVATE KEY' }],
    ['encrypted PKCS#8 DER', tools.read('ec-encrypted.der'), { type: 'encrypted-private-key', encoding: 'der' }],
    ['legacy encrypted PEM', text('rsa-legacy-encrypted.pem'), { type: 'encrypted-private-key', encoding: 'pem', label: 'RSA PRIVATE KEY' }],
    ['SPKI', text('ec-pub.pem'), { type: 'public-key', encoding: 'pem', label: 'PUBLIC KEY' }],
    ['SPKI DER', tools.read('ed-pub.der'), { type: 'public-key', encoding: 'der' }],
    ['PKCS#1 public key', text('rsa-pkcs1-pub.pem'), { type: 'public-key', encoding: 'pem', label: 'RSA PUBLIC KEY' }],
    ['OpenSSH private key', text('id_ed25519'), { type: 'openssh-private-key', encoding: 'pem', label: 'OPENSSH PRIVATE KEY' }],
    ['OpenSSH public key', text('id_ed25519.pub'), { type: 'openssh-public-key', encoding: 'openssh' }],
    ['OpenSSH ECDSA public key', text('id_ecdsa.pub'), { type: 'openssh-public-key', encoding: 'openssh' }],
    ['OpenSSH certificate', text('id_ed25519-cert.pub'), { type: 'openssh-certificate', encoding: 'openssh' }],
    ['OpenSSH public key blob, base64', text('id_ed25519.pub').split(' ')[1]!, { type: 'openssh-public-key', encoding: 'base64' }],
    ['OCSP request', tools.read('ocsp.req'), { type: 'ocsp-request', encoding: 'der' }],
    ['OCSP request base64', b64('ocsp.req'), { type: 'ocsp-request', encoding: 'base64' }],
    ['OCSP response', tools.read('ocsp.resp'), { type: 'ocsp-response', encoding: 'der' }],
    ['TSP query', tools.read('query.tsq'), { type: 'tsp-query', encoding: 'der' }],
    ['TSP reply', tools.read('reply.tsr'), { type: 'tsp-reply', encoding: 'der' }],
    ['unknown DER', Uint8Array.of(0x30, 0x03, 0x01, 0x01, 0xff), { type: 'unknown', encoding: 'der' }],
  ];
  const seen = new Set<string>();
  for (const [name, input, want] of cases) {
    const got = detect(input);
    t.match(got, want, name);
    if (want.label === undefined) t.equal(got.label, undefined, `${name}: no label`);
    seen.add(got.type);
  }

  // Details, compared with what the tools print.
  const cert = detect(text('leaf.pem'));
  t.same(cert.details, { dn: 'CN=leaf.example', issuer: 'CN=Rare Test CA,O=Certwright Test,C=FR', serial: tools.run(['x509', '-in', 'leaf.pem', '-noout', '-serial']).split('=')[1]!.trim().toLowerCase() });
  t.match(detect(text('rsa-pkcs1.pem')).details, { algorithm: 'rsa', bits: 2048 });
  t.match(detect(tools.read('ec-sec1.der')).details, { algorithm: 'ec', curve: 'secp384r1' });
  t.match(detect(text('ec.key')).details, { algorithm: 'ec', curve: 'secp384r1' });
  t.match(detect(tools.read('ed-pub.der')).details, { algorithm: 'ed25519', format: 'spki' });
  t.match(detect(text('ec-encrypted.pem')).details, { algorithm: 'PBES2' });
  t.match(detect(text('rsa-legacy-encrypted.pem')).details, { format: 'legacy-pem', cipher: 'AES-256-CBC' });
  t.match(detect(tools.read('ocsp.resp')).details, { status: 'successful' });
  t.match(detect(tools.read('reply.tsr')).details, { status: 'granted', token: true });
  t.match(detect(tools.read('query.tsq')).details, { hashAlgorithm: 'sha256', certReq: true });
  t.match(detect(tools.read('ocsp.req')).details, { requests: 1, signed: false });
  t.match(detect(text('id_ed25519')).details, { cipher: 'none', encrypted: false, keyType: 'ssh-ed25519' });
  t.same(detect(text('id_ed25519.pub')).details, { keyType: 'ssh-ed25519', comment: 'me@example' });
  t.equal(detect(text('id_ecdsa.pub')).details?.keyType, tools.sshKeygen(['-l', '-f', 'id_ecdsa.pub']).includes('(ECDSA)') ? 'ecdsa-sha2-nistp256' : 'unexpected');
  t.equal(detect(text('id_ed25519-cert.pub')).details?.keyType, 'ssh-ed25519-cert-v01@openssh.com');
  t.match(detect(text('leaf.pem') + text('ca.pem')).details, { blocks: 2 });

  // JWK: a key openssl made, exported by node (object, JSON text, {keys: […]}).
  const jwk = createPrivateKey(text('ec.key')).export({ format: 'jwk' }) as Record<string, unknown>;
  t.match(detect(jwk), { type: 'jwk', encoding: 'json', details: { kty: 'EC', crv: 'P-384', private: true } });
  const { d: _d, ...publicJwk } = jwk;
  t.match(detect(JSON.stringify(publicJwk)), { type: 'jwk', encoding: 'json', details: { kty: 'EC', private: false } });
  t.match(detect({ keys: [publicJwk] }), { type: 'jwk', details: { set: true, keys: 1 } });
  t.match(detect('{"hello": "world"}'), { type: 'unknown', encoding: 'json' });
  for (const type of ['jwk']) seen.add(type);

  const all = ['certificate', 'csr', 'crl', 'pkcs7', 'pkcs12', 'private-key-pkcs1', 'private-key-pkcs8', 'private-key-sec1', 'encrypted-private-key', 'public-key', 'openssh-private-key', 'openssh-public-key', 'openssh-certificate', 'ocsp-request', 'ocsp-response', 'tsp-query', 'tsp-reply', 'jwk', 'unknown'];
  t.same([...seen].sort(), all.sort(), 'every type was produced and recognised');
});

t.test('PEM from clients: percent-encoded, \\n escapes, a label that lies', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  const pem = tools.text('ca.pem');
  t.match(detect(encodeURIComponent(pem)), { type: 'certificate', encoding: 'pem' });
  t.match(detect(pem.replace(/\n/g, '\\n')), { type: 'certificate', encoding: 'pem' });
  // Decided by the label when there is one; an unknown label falls back to the DER shape.
  const relabelled = pem.replace(/CERTIFICATE/g, 'SOMETHING ELSE');
  t.match(detect(relabelled), { type: 'certificate', encoding: 'pem', label: 'SOMETHING ELSE' });
});

t.test('bad input: a specific code, quickly', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  const der = tools.der('ca.pem', 'x509');
  const nested = Buffer.concat([Buffer.alloc(4000).map((_, i) => (i % 2 ? 0x80 : 0x30)), Buffer.alloc(4000, 0)]);
  let definite: Uint8Array = Uint8Array.of(0x05, 0x00);
  for (let i = 0; i < 100; i++) definite = seq(definite);
  const cases: [string, string | Uint8Array, string][] = [
    ['garbage text', 'this is not a certificate at all!', 'PKI-001'],
    ['binary garbage', Uint8Array.from({ length: 64 }, (_, i) => (i * 29 + 200) & 0xff), 'PKI-001'],
    ['truncated DER', der.subarray(0, der.length - 1), 'PKI-001'],
    ['truncated PEM body', tools.text('ca.pem').replace(/[A-Za-z0-9+/=]{20}\n-----END/, '\n-----END'), 'PKI-001'],
    ['an absurd length', Uint8Array.of(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02, 0x01, 0x00), 'PKI-004'],
    ['indefinite-length nesting', nested, 'PKI-005'],
    ['an OpenSSH line whose blob lies', 'ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAABAQ== me', 'PKI-001'],
    ['broken JSON', '{"kty": ', 'PKI-001'],
    ['too large', 'A'.repeat(MAX_OBJECT_BYTES * 2 + 1), 'PKI-004'],
  ];
  for (const [name, input, code] of cases) {
    const started = performance.now();
    t.equal(problemCode(() => detect(input)), code, name);
    t.ok(performance.now() - started < 1000, `${name}: in bounded time`);
  }
  t.equal(problemCode(() => detect(definite)), 'PKI-005', '100 definite-length levels');
});

t.test('arbitrary bytes and text: a detection or a ProblemError, nothing else', async (t) => {
  const fc = await import('fast-check');
  const check = (input: string | Uint8Array) => {
    try {
      detect(input);
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
    }
  };
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => check(Uint8Array.from([0x30, ...bytes]))), { numRuns: 2000, seed: 1 });
  fc.assert(fc.property(fc.string({ maxLength: 200 }), check), { numRuns: 2000, seed: 2 });
  t.pass('4000 inputs');
});
