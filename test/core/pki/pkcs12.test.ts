import { createHash } from 'node:crypto';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { children, readTlv, readTop, TAG, whole } from '../../../core/pki/der/reader.js';
import { rc2CbcDecrypt, rc2DecryptBlock, rc2ExpandKey } from '../../../core/pki/pkcs12/rc2.js';
import { bmpPassword, pkcs12Kdf } from '../../../core/pki/pkcs12/kdf.js';
import { decodePkcs12 } from '../../../core/pki/pkcs12/decode.js';
import { tlv } from '../../../core/pki/der/writer.js';
import { rareTools, type RareTools } from '../../helpers/openssl-rare.js';

const PASSWORD = 's3cret-Pässwörd';

function problem(run: () => unknown): ProblemError {
  try {
    run();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('no problem raised');
}

/** What openssl itself reads from a PKCS#12 file. */
function opensslView(tools: RareTools, file: string, password: string) {
  const pass = `pass:${password}`;
  const info = tools.both(['pkcs12', '-info', '-noout', '-legacy', '-in', file, '-passin', pass]);
  const mac = /MAC: (\S+), Iteration (\d+)/.exec(info);
  const algorithms = [...info.matchAll(/(?:PKCS7 Encrypted data|Shrouded Keybag): (.*)$/gm)].map((m) => m[1]!.replace(/, Iteration \d+/, ''));
  const certs = tools.run(['pkcs12', '-legacy', '-in', file, '-passin', pass, '-nokeys']);
  const certificates = [...certs.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n/g)].map((m) => {
    tools.write('one.pem', m[0]);
    const out = tools.run(['x509', '-in', 'one.pem', '-noout', '-serial', '-subject', '-nameopt', 'RFC2253', '-fingerprint', '-sha1']);
    return {
      serial: /serial=(\S+)/.exec(out)![1]!.toLowerCase(),
      dn: /subject=(.*)/.exec(out)![1]!.trim(),
      thumbprint: /Fingerprint=(\S+)/.exec(out)![1]!.replace(/:/g, '').toLowerCase(),
    };
  });
  const keys = tools.run(['pkcs12', '-legacy', '-in', file, '-passin', pass, '-nocerts', '-nodes']);
  tools.write('keys.pem', keys);
  const spki = tools.bytes(['pkey', '-in', 'keys.pem', '-pubout', '-outform', 'DER']);
  return {
    macAlgorithm: mac?.[1] ?? null,
    macIterations: mac ? Number(mac[2]) : null,
    algorithms,
    certificates,
    publicKeyThumbprint: createHash('sha256').update(spki).digest('hex'),
    // The bag attributes openssl prints above each certificate and key.
    friendlyNames: [...new Set([...`${certs}${keys}`.matchAll(/friendlyName: (.*)$/gm)].map((m) => m[1]!.trim()))],
  };
}

t.test('RC2 by hand: the RFC 2268 test vectors', async (t) => {
  const vectors: [string, number, string, string][] = [
    ['0000000000000000', 63, '0000000000000000', 'ebb773f993278eff'],
    ['ffffffffffffffff', 64, 'ffffffffffffffff', '278b27e42e2f0d49'],
    ['3000000000000000', 64, '1000000000000001', '30649edf9be7d2c2'],
    ['88', 64, '0000000000000000', '61a8a244adacccf0'],
    ['88bca90e90875a', 64, '0000000000000000', '6ccf4308974c267f'],
    ['88bca90e90875a7f0f79c384627bafb2', 64, '0000000000000000', '1a807d272bbe5db1'],
    ['88bca90e90875a7f0f79c384627bafb2', 128, '0000000000000000', '2269552ab0f85ca6'],
    ['88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e', 129, '0000000000000000', '5b78d3a43dfff1f1'],
  ];
  for (const [key, bits, plain, cipher] of vectors) {
    const block = Buffer.from(cipher, 'hex');
    rc2DecryptBlock(rc2ExpandKey(Buffer.from(key, 'hex'), bits), block);
    t.equal(block.toString('hex'), plain, `key ${key} at ${bits} bits`);
  }
});

t.test('the PKCS#12 KDF by hand equals openssl kdf PKCS12KDF', async (t) => {
  const tools = rareTools(t);
  const salt = Buffer.from('0a58cf64530d823f', 'hex');
  const cases: [string, string, number, number, number][] = [
    ['sha1', 'smeg', 1, 1, 24],
    ['sha1', 'smeg', 2, 1, 8],
    ['sha1', PASSWORD, 3, 2048, 20],
    ['sha1', '', 1, 2048, 24],
    ['sha256', PASSWORD, 3, 2048, 32],
    ['sha256', 'x', 1, 3, 80],
    ['sha512', PASSWORD, 3, 10, 64],
    ['sha512', 'long password, longer than one 128-byte block of the KDF: 0123456789abcdef0123456789abcdef0123456789', 1, 5, 200],
  ];
  for (const [digest, password, id, iterations, length] of cases) {
    const bmp = bmpPassword(password);
    const ours = Buffer.from(pkcs12Kdf(digest, bmp, salt, id, iterations, length)).toString('hex');
    const theirs = tools
      .run(['kdf', '-keylen', String(length), '-kdfopt', `digest:${digest.toUpperCase()}`, '-kdfopt', `hexpass:${Buffer.from(bmp).toString('hex')}`, '-kdfopt', `hexsalt:${salt.toString('hex')}`, '-kdfopt', `iter:${iterations}`, '-kdfopt', `id:${id}`, 'PKCS12KDF'])
      .trim()
      .replace(/:/g, '')
      .toLowerCase();
    t.equal(ours, theirs, `${digest}, id ${id}, ${iterations} rounds, ${length} bytes`);
  }
  t.equal(Buffer.from(bmpPassword('ab')).toString('hex'), '006100620000', 'BMPString with its terminator');
});

t.test('RC2-CBC by hand opens what openssl enc -rc2-40-cbc wrote', async (t) => {
  const tools = rareTools(t);
  const key = Buffer.from('0123456789', 'hex');
  const iv = Buffer.from('0011223344556677', 'hex');
  tools.write('plain.bin', 'legacy PKCS#12 bags are RC2-40 encrypted');
  const cipher = tools.bytes(['enc', '-rc2-40-cbc', '-provider', 'legacy', '-provider', 'default', '-K', key.toString('hex'), '-iv', iv.toString('hex'), '-in', 'plain.bin']);
  const plain = rc2CbcDecrypt(key, 40, iv, cipher);
  t.equal(Buffer.from(plain.subarray(0, plain.length - plain[plain.length - 1]!)).toString(), 'legacy PKCS#12 bags are RC2-40 encrypted');
});

t.test('legacy and modern files, as openssl reads them', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.issue('leaf');
  tools.run(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'rsa.key']);
  tools.run(['req', '-new', '-key', 'rsa.key', '-subj', '/CN=rsa.example', '-out', 'rsa.csr']);
  tools.run(['ca', '-batch', '-config', 'ca.cnf', '-notext', '-extensions', 'leaf', '-in', 'rsa.csr', '-out', 'rsa.pem']);
  const legacyProvider = ['-provider', 'legacy', '-provider', 'default'];
  const variants = [
    { name: '-legacy', args: ['-legacy'], encryption: 'legacy', mac: 'sha1' },
    { name: 'RC2-40 + 3DES, SHA-1 MAC', args: ['-certpbe', 'PBE-SHA1-RC2-40', '-keypbe', 'PBE-SHA1-3DES', '-macalg', 'sha1', ...legacyProvider], encryption: 'legacy', mac: 'sha1' },
    { name: 'RC2-128 + 2-key 3DES', args: ['-certpbe', 'PBE-SHA1-RC2-128', '-keypbe', 'PBE-SHA1-2DES', ...legacyProvider], encryption: 'legacy', mac: 'sha256' },
    { name: 'AES-256 + SHA-256 MAC', args: ['-certpbe', 'AES-256-CBC', '-keypbe', 'AES-256-CBC', '-macalg', 'sha256'], encryption: 'modern', mac: 'sha256' },
    { name: 'AES-128, SHA-512 MAC, 10 000 iterations', args: ['-certpbe', 'AES-128-CBC', '-keypbe', 'AES-128-CBC', '-macalg', 'sha512', '-iter', '10000', '-maciter'], encryption: 'modern', mac: 'sha512' },
    { name: 'openssl 3 default', args: [], encryption: 'modern', mac: 'sha256' },
    { name: 'no encryption', args: ['-certpbe', 'NONE', '-keypbe', 'NONE'], encryption: 'modern', mac: 'sha256' },
    { name: 'no MAC', args: ['-nomac'], encryption: 'modern', mac: null },
    { name: 'RSA key, legacy', args: ['-legacy'], encryption: 'legacy', mac: 'sha1', key: 'rsa' },
  ];
  for (const v of variants) {
    const file = `${v.name.replace(/\W+/g, '_')}.p12`;
    const [cert, key] = v.key === 'rsa' ? ['rsa.pem', 'rsa.key'] : ['leaf.pem', 'leaf.key'];
    tools.run(['pkcs12', '-export', '-in', cert, '-inkey', key, '-certfile', 'ca.pem', '-name', 'My Leaf', '-passout', `pass:${PASSWORD}`, '-out', file, ...v.args]);
    const decoded = decodePkcs12(tools.read(file), PASSWORD);
    const view = opensslView(tools, file, PASSWORD);
    t.equal(decoded.encryption, v.encryption, `${v.name}: encryption`);
    t.equal(decoded.macAlgorithm, view.macAlgorithm, `${v.name}: MAC algorithm`);
    t.equal(decoded.macAlgorithm, v.mac, `${v.name}: MAC as asked`);
    t.equal(decoded.macIterations, view.macIterations, `${v.name}: MAC iterations`);
    t.same(decoded.encryptionAlgorithms, [...new Set(view.algorithms)], `${v.name}: encryption algorithms as openssl names them`);
    t.same(
      decoded.certificates.map((c) => ({ serial: c.serial, dn: c.dn, thumbprint: c.thumbprint })),
      view.certificates,
      `${v.name}: certificates (serial, DN, SHA-1 thumbprint)`,
    );
    t.equal(decoded.keys.length, 1, `${v.name}: one key`);
    const k = decoded.keys[0]!;
    t.equal(k.keyType, v.key === 'rsa' ? 'rsa-2048' : 'ec-secp256r1', `${v.name}: key type`);
    t.equal(k.publicKeyThumbprint, view.publicKeyThumbprint, `${v.name}: public key thumbprint (openssl pkey -pubout)`);
    t.equal(k.matchesCertificate, view.certificates[0]!.thumbprint, `${v.name}: the key belongs to the leaf`);
    t.equal(k.publicKeyThumbprint, decoded.certificates[0]!.publicKeyThumbprint);
    t.same(decoded.friendlyNames, view.friendlyNames, `${v.name}: friendly names`);
    t.same(decoded.friendlyNames, ['My Leaf']);
    t.equal(k.friendlyName, 'My Leaf');
    t.notOk(JSON.stringify(decoded).includes('PRIVATE KEY'), `${v.name}: no key material in the answer`);

    const wrong = problem(() => decodePkcs12(tools.read(file), 'not the password'));
    t.equal(wrong.code, 'PKI-003', `${v.name}: a wrong password is PKI-003`);
    t.equal(wrong.status, 400);
    t.notOk(`${wrong.message} ${wrong.detail ?? ''}`.includes('not the password'), 'the password is not echoed');
  }
});

t.test('empty passwords, as openssl writes them', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.issue('leaf');
  for (const args of [['-legacy'], []]) {
    tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-passout', 'pass:', '-out', 'empty.p12', ...args]);
    const decoded = decodePkcs12(tools.read('empty.p12'), '');
    t.equal(decoded.certificates.length, 1, `${args.join(' ') || 'default'}: opened with ''`);
    t.equal(decoded.keys.length, 1);
    t.equal(problem(() => decodePkcs12(tools.read('empty.p12'), 'x')).code, 'PKI-003');
  }
});

t.test('bad files: specific codes in bounded time', async (t) => {
  const tools = rareTools(t);
  tools.ca();
  tools.issue('leaf');
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-passout', `pass:${PASSWORD}`, '-out', 'good.p12']);
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-passout', `pass:${PASSWORD}`, '-out', 'rc4.p12', '-certpbe', 'PBE-SHA1-RC4-128', '-keypbe', 'PBE-SHA1-RC4-128', '-provider', 'legacy', '-provider', 'default']);
  const good = tools.read('good.p12');

  // The same file with a MAC claiming two billion iterations: refused before any work.
  const top = readTop(good, TAG.SEQUENCE, 'PFX');
  const [version, authSafe, macData] = children(good, top);
  const [digestInfo, salt] = children(good, macData!);
  const greedy = tlv(0x30, whole(good, version!), whole(good, authSafe!), tlv(0x30, whole(good, digestInfo!), whole(good, salt!), Uint8Array.of(0x02, 0x04, 0x7f, 0xff, 0xff, 0xff)));

  const nested = (levels: number): Uint8Array => {
    let inner: Uint8Array = Uint8Array.of(0x05, 0x00);
    for (let i = 0; i < levels; i++) inner = tlv(0x30, inner);
    return inner;
  };
  const cases: [string, Uint8Array, string][] = [
    ['truncated', good.subarray(0, good.length - 40), 'PKI-001'],
    ['garbage', Uint8Array.from({ length: 512 }, (_, i) => (i * 91 + 7) & 0xff), 'PKI-001'],
    ['a certificate', tools.der('leaf.pem', 'x509'), 'PKI-002'],
    ['a greedy iteration count', greedy, 'PKI-004'],
    ['an absurd length', Uint8Array.of(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x02, 0x01, 0x03), 'PKI-004'],
    ['deep nesting', nested(3000), 'PKI-005'],
    ['RC4 (not offered)', tools.read('rc4.p12'), 'PKI-006'],
  ];
  for (const [name, bytes, code] of cases) {
    const started = performance.now();
    const err = problem(() => decodePkcs12(bytes, PASSWORD));
    t.equal(err.code, code, `${name}: ${err.detail}`);
    t.ok(performance.now() - started < 1000, `${name}: in bounded time`);
    t.notOk(`${err.message} ${err.detail ?? ''}`.includes(PASSWORD), `${name}: the password is not echoed`);
  }

  // BER framing (indefinite lengths), as some exporters write: still opens.
  const ber = Buffer.concat([Uint8Array.of(0x30, 0x80), good.subarray(readTlv(good, 0).valueStart), Uint8Array.of(0, 0)]);
  t.equal(decodePkcs12(ber, PASSWORD).certificates.length, 1, 'an indefinite-length PFX opens');
});
