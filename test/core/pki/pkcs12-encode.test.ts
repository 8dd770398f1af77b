import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { decodePkcs12 } from '../../../core/pki/pkcs12/decode.js';
import { encodePkcs12 } from '../../../core/pki/pkcs12/encode.js';
import { parseCertificate } from '../../../core/pki/x509/parse.js';
import { tempDir, type TestContext } from '../../helpers/kernel.js';
import { CA_EXT, LEAF_EXT, OpensslPki, openssl } from '../../helpers/openssl-pki.js';
import { verdict } from '../../helpers/pki-tools.js';

const pemDer = (pem: string): Uint8Array => new Uint8Array(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'));

/** A root, an intermediate and a leaf made by openssl; the leaf's key given as PKCS#8 DER. */
function chain(t: TestContext, leafKey?: string) {
  const dir = tempDir(t, 'cw-p12-');
  const pki = new OpensslPki(dir);
  const root = pki.root('root', '/O=Certwright Test/CN=P12 Root');
  const intermediate = pki.issue('intermediate', '/O=Certwright Test/CN=P12 Intermediate', root, { ext: CA_EXT });
  let keyPath: string | undefined;
  if (leafKey) {
    keyPath = join(dir, 'leaf.key');
    openssl(['genpkey', ...(leafKey.startsWith('rsa') ? ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${leafKey.slice(4)}`] : ['-algorithm', leafKey]), '-out', keyPath]);
  }
  const leaf = pki.issue('leaf', '/CN=p12.example', intermediate, { ext: LEAF_EXT, ...(keyPath ? { keyPath } : {}) });
  const key = createPrivateKey(readFileSync(leaf.keyPath));
  return {
    dir,
    leaf,
    certificatesDer: [leaf, intermediate, root].map((c) => pemDer(c.pem)),
    privateKeyPkcs8Der: new Uint8Array(key.export({ type: 'pkcs8', format: 'der' })),
    publicKeyPem: createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string,
  };
}

/** The problem code `fn` throws, if any. */
function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof ProblemError ? err.code : String(err);
  }
}

const write = (dir: string, name: string, bytes: Uint8Array): string => {
  writeFileSync(join(dir, name), bytes);
  return name;
};

t.test('openssl pkcs12 -info opens the file: modern algorithms, the key and the whole chain', async (t) => {
  const c = chain(t);
  const password = 'S3cret pass, wörd!';
  const p12 = encodePkcs12({ privateKeyPkcs8Der: c.privateKeyPkcs8Der, certificatesDer: c.certificatesDer, password, friendlyName: 'my certificate' });
  write(c.dir, 'out.p12', p12);
  const info = verdict(c.dir, 'openssl', ['pkcs12', '-info', '-in', 'out.p12', '-passin', `pass:${password}`, '-nodes']);
  t.match(info, /MAC: sha256, Iteration 2048/);
  t.match(info, /PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/);
  t.match(info, /Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256/);
  t.match(info, /friendlyName: my certificate/);
  t.equal(info.match(/-----BEGIN CERTIFICATE-----/g)?.length, 3);
  t.equal(info.match(/-----BEGIN PRIVATE KEY-----/g)?.length, 1);
  t.notMatch(info, /error|invalid/i);
  // The key openssl extracts is the leaf's.
  const keyPem = openssl(['pkcs12', '-in', join(c.dir, 'out.p12'), '-passin', `pass:${password}`, '-nocerts', '-nodes']);
  t.equal(createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'pem' }), c.publicKeyPem);
  const leafOut = openssl(['pkcs12', '-in', join(c.dir, 'out.p12'), '-passin', `pass:${password}`, '-clcerts', '-nokeys']);
  t.match(leafOut, /subject=CN = p12\.example/, 'the leaf carries the key id: openssl lists it as the client certificate');

  const decoded = decodePkcs12(p12, password);
  t.same(decoded.certificates.map((x) => x.dn), ['CN=p12.example', 'CN=P12 Intermediate,O=Certwright Test', 'CN=P12 Root,O=Certwright Test']);
  t.equal(decoded.keys.length, 1);
  t.equal(decoded.keys[0]!.keyType, 'ec-secp256r1');
  t.equal(decoded.keys[0]!.matchesCertificate, parseCertificate(c.certificatesDer[0]!).thumbprint);
  t.same(decoded.friendlyNames, ['my certificate']);
  t.equal(decoded.macAlgorithm, 'sha256');
  t.equal(decoded.macIterations, 2048);
  t.equal(decoded.encryption, 'modern');
});

t.test('a wrong password opens nothing', async (t) => {
  const c = chain(t);
  const p12 = encodePkcs12({ privateKeyPkcs8Der: c.privateKeyPkcs8Der, certificatesDer: c.certificatesDer, password: 'right' });
  write(c.dir, 'out.p12', p12);
  t.match(verdict(c.dir, 'openssl', ['pkcs12', '-info', '-in', 'out.p12', '-passin', 'pass:wrong', '-nodes']), /Mac verify error: invalid password\?/);
  t.equal(code(() => decodePkcs12(p12, 'wrong')), 'PKI-003');
  t.equal(decodePkcs12(p12, 'right').keys.length, 1);
});

for (const keyType of ['rsa-2048', 'ED25519'] as const) {
  t.test(`a ${keyType} key, an empty password, no friendly name`, async (t) => {
    const c = chain(t, keyType);
    const p12 = encodePkcs12({ privateKeyPkcs8Der: c.privateKeyPkcs8Der, certificatesDer: c.certificatesDer.slice(0, 1), password: '' });
    write(c.dir, 'out.p12', p12);
    const info = verdict(c.dir, 'openssl', ['pkcs12', '-info', '-in', 'out.p12', '-passin', 'pass:', '-nodes']);
    t.match(info, /MAC: sha256/);
    t.equal(info.match(/-----BEGIN CERTIFICATE-----/g)?.length, 1);
    t.equal(info.match(/-----BEGIN PRIVATE KEY-----/g)?.length, 1);
    const decoded = decodePkcs12(p12, '');
    t.equal(decoded.keys[0]!.keyType, keyType === 'rsa-2048' ? 'rsa-2048' : 'ed-25519');
    t.ok(decoded.keys[0]!.matchesCertificate);
    t.same(decoded.friendlyNames, []);
  });
}

t.test('a key the leaf does not certify, or that is not PKCS#8, is refused', async (t) => {
  const c = chain(t);
  const stranger = new Uint8Array(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'der' }));
  t.equal(code(() => encodePkcs12({ privateKeyPkcs8Der: stranger, certificatesDer: c.certificatesDer, password: 'x' })), 'HTTP-003');
  t.equal(code(() => encodePkcs12({ privateKeyPkcs8Der: Uint8Array.of(0x30, 0x00), certificatesDer: c.certificatesDer, password: 'x' })), 'HTTP-003');
  t.equal(code(() => encodePkcs12({ privateKeyPkcs8Der: c.privateKeyPkcs8Der, certificatesDer: [Uint8Array.of(1, 2, 3)], password: 'x' })), 'HTTP-003');
});
