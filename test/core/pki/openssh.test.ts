import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { decodeOpenSsh, type SshCertificateInfo, type SshPrivateKeyInfo, type SshPublicKeyInfo } from '../../../core/pki/openssh/decode.js';
import { tempDir } from '../../helpers/kernel.js';
import { openssl, tool, verdict } from '../../helpers/pki-tools.js';
import { assertOnlyProblems } from '../../helpers/mutations.js';

const dir = tempDir(t, 'cw-ssh-');
const keygen = (...args: string[]) => tool(dir, 'ssh-keygen', args);
const read = (name: string) => readFileSync(join(dir, name), 'utf8');

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof ProblemError ? err.code : `not a ProblemError: ${String(err)}`;
  }
  return 'no error';
};

/** ssh-keygen -l: "256 SHA256:… comment (ED25519)". */
function listed(file: string, hash = 'sha256') {
  const m = /^(\d+) (\S+) (.*) \(([A-Z0-9-]+)\)$/.exec(keygen('-l', '-E', hash, '-f', file).trim())!;
  return { bits: Number(m[1]), fingerprint: m[2]!, comment: m[3]!, name: m[4]! };
}

/** keyType as the certificate model names it, from what ssh-keygen -l prints. */
const keyTypeOf = (name: string, bits: number) =>
  name.startsWith('ED25519') ? 'ed-25519' : name.startsWith('RSA') ? `rsa-${bits}` : `ec-secp${bits}r1`;

const KEYS = [
  ['ed25519', ['-t', 'ed25519']],
  ['rsa', ['-t', 'rsa', '-b', '2048']],
  ['ecdsa256', ['-t', 'ecdsa', '-b', '256']],
  ['ecdsa384', ['-t', 'ecdsa', '-b', '384']],
  ['ecdsa521', ['-t', 'ecdsa', '-b', '521']],
] as const;
for (const [name, args] of KEYS) keygen('-q', ...args, '-N', '', '-C', `${name} user@example`, '-f', name);

t.test('public keys: type, keyType, bits, comment and both fingerprints as ssh-keygen -l prints them', async (t) => {
  for (const [name] of KEYS) {
    const line = read(`${name}.pub`);
    const sha = listed(`${name}.pub`);
    const md5 = listed(`${name}.pub`, 'md5');
    const expected: SshPublicKeyInfo = {
      kind: 'publicKey',
      type: line.split(' ')[0]!,
      keyType: keyTypeOf(sha.name, sha.bits),
      bits: sha.bits,
      comment: sha.comment,
      fingerprint: sha.fingerprint,
      md5Fingerprint: md5.fingerprint,
    };
    t.same(decodeOpenSsh(line), expected, `${name}: the .pub line`);
    const blob = line.split(' ')[1]!;
    t.same(decodeOpenSsh(blob), { ...expected, comment: null }, `${name}: the bare base64 blob`);
    t.same(decodeOpenSsh(Buffer.from(blob, 'base64')), { ...expected, comment: null }, `${name}: the wire blob as bytes`);
    t.same(decodeOpenSsh(Buffer.from(line).toString('base64')), expected, `${name}: base64 of the line`);
    t.same(decodeOpenSsh(`# my key\nfrom="10.0.0.0/8",no-pty ${line}`), expected, `${name}: an authorized_keys line with options`);
    // RFC 4716, as ssh-keygen -e exports it (its Comment header replaces the comment).
    const exported = keygen('-e', '-f', `${name}.pub`);
    const header = /Comment: "(.*)"/.exec(exported)![1];
    t.same(decodeOpenSsh(exported), { ...expected, comment: header }, `${name}: RFC 4716 export`);
  }
});

/** ssh-keygen -L, as {field: first value, and the indented lists under Principals / options}. */
function certificateListing(file: string) {
  const text = keygen('-L', '-f', file);
  const value = (label: string) => new RegExp(`^\\s+${label}: ?(.*)$`, 'm').exec(text)![1]!.trim();
  const list = (label: string): string[] => {
    const after = text.split(new RegExp(`^\\s+${label}: ?.*$`, 'm'))[1]!;
    const lines: string[] = [];
    for (const line of after.split('\n').slice(1)) {
      if (!/^\s{16}\S/.test(line)) break;
      lines.push(line.trim());
    }
    return lines;
  };
  return { text, value, list };
}

/** "2025-01-01T00:00:00" (UTC: the tests run ssh-keygen with TZ=UTC) → epoch ms. */
const sshTime = (text: string) => Date.parse(`${text}Z`);

function compareCertificate(t: Test, info: SshCertificateInfo, file: string) {
  const { value, list } = certificateListing(file);
  const [type, certType] = value('Type').split(' ');
  t.equal(info.type, type, 'type');
  t.equal(info.certType, certType, 'user or host');
  const [keyName, fingerprint] = value('Public key').split(' ');
  t.equal(info.fingerprint, fingerprint, 'fingerprint of the certified key');
  const short = listed(file);
  t.equal(info.fingerprint, short.fingerprint, 'ssh-keygen -l agrees');
  t.equal(info.bits, short.bits, 'bits');
  t.equal(info.keyType, keyTypeOf(keyName!, short.bits), 'keyType');
  t.equal(info.md5Fingerprint, listed(file, 'md5').fingerprint, 'md5 fingerprint');
  const ca = /^(\S+) (\S+) \(using (\S+)\)$/.exec(value('Signing CA'))!;
  t.equal(info.signatureKey.fingerprint, ca[2], 'CA fingerprint');
  t.equal(info.signatureAlgorithm, ca[3], 'signature algorithm');
  t.equal(`"${info.keyId}"`, value('Key ID'), 'key id');
  t.equal(info.serial, value('Serial'), 'serial');
  const valid = value('Valid');
  const range = /^from (\S+) to (\S+)$/.exec(valid);
  const expected = range
    ? [sshTime(range[1]!), sshTime(range[2]!)]
    : valid === 'forever'
      ? [null, null]
      : valid.startsWith('after ')
        ? [sshTime(valid.slice(6)), null]
        : [null, sshTime(valid.slice(7))];
  t.same([info.validAfter, info.validBefore], expected, `validity (${valid})`);
  const principals = value('Principals') === '(none)' ? [] : list('Principals');
  t.same(info.principals, principals, 'principals');
  const options = (label: string) =>
    value(label) === '(none)'
      ? []
      : list(label).map((line) => {
          const [name, ...rest] = line.split(' ');
          const unknown = /^UNKNOWN OPTION: ([0-9a-f]+) \(len \d+\)$/.exec(rest.join(' '));
          // ssh-keygen shows the raw data of options it does not know: a string (uint32 length + text).
          return { name: name!, value: unknown ? Buffer.from(unknown[1]!, 'hex').subarray(4).toString() : rest.join(' ') };
        });
  t.same(info.criticalOptions, options('Critical Options'), 'critical options');
  t.same(info.extensions, options('Extensions'), 'extensions');
  t.equal(info.signatureValid, true, 'signature verifies');
}

keygen('-q', '-t', 'ed25519', '-N', '', '-C', 'ed ca', '-f', 'ca_ed25519');
keygen('-q', '-t', 'rsa', '-b', '2048', '-N', '', '-C', 'rsa ca', '-f', 'ca_rsa');
keygen('-q', '-t', 'ecdsa', '-b', '384', '-N', '', '-C', 'ec ca', '-f', 'ca_ecdsa');

const CERTS = [
  { name: 'user, two principals, one day', ca: 'ca_ed25519', key: 'ecdsa384', args: ['-I', 'alice-id', '-n', 'alice,bob', '-V', '+1d', '-z', '42'] },
  { name: 'host, RSA CA (rsa-sha2-512), fixed window', ca: 'ca_rsa', key: 'ed25519', args: ['-h', '-I', 'host-id', '-n', 'h.example,h2.example', '-V', '20250101000000:20300101123456', '-z', '18446744073709551000'] },
  {
    name: 'critical options, ECDSA CA, open-ended',
    ca: 'ca_ecdsa',
    key: 'rsa',
    args: ['-I', 'robot', '-V', '20250101000000:forever', '-O', 'force-command=/bin/true', '-O', 'source-address=10.0.0.0/8', '-O', 'no-port-forwarding'],
  },
  { name: 'forever, custom extension', ca: 'ca_ecdsa', key: 'ecdsa256', args: ['-I', 'custom', '-O', 'clear', '-O', 'permit-pty', '-O', 'extension:custom@example.com=hello'] },
  { name: 'RSA CA signing with ssh-rsa (SHA-1)', ca: 'ca_rsa', key: 'ecdsa521', args: ['-I', 'legacy', '-t', 'ssh-rsa', '-n', 'carol'] },
];

t.test('certificates: every field as ssh-keygen -L prints it', async (t) => {
  for (const c of CERTS) {
    keygen('-q', '-s', c.ca, ...c.args, `${c.key}.pub`);
    const file = `${c.key}-cert.pub`;
    t.test(c.name, async (t) => {
      const info = decodeOpenSsh(read(file)) as SshCertificateInfo;
      t.equal(info.kind, 'certificate');
      compareCertificate(t, info, file);
      t.equal(info.comment, read(`${c.key}.pub`).trim().split(' ').slice(2).join(' '), 'comment of the line');
      t.equal(info.signatureKey.fingerprint, listed(`${c.ca}.pub`).fingerprint, 'the CA that signed it');
      t.equal(info.signatureKey.type, read(`${c.ca}.pub`).split(' ')[0]);
    });
  }
});

t.test('a certificate altered after signing has signatureValid false (ssh-keygen refuses it)', async (t) => {
  keygen('-q', '-s', 'ca_ed25519', '-I', 'genuine-id', '-n', 'alice', 'ed25519.pub');
  const [type, blob, comment] = read('ed25519-cert.pub').trim().split(' ');
  const bytes = Buffer.from(blob!, 'base64');
  const at = bytes.indexOf('genuine-id');
  bytes.write('GENUINE-ID', at, 'latin1');
  const forged = `${type} ${bytes.toString('base64')} ${comment}\n`;
  writeFileSync(join(dir, 'forged-cert.pub'), forged);
  const info = decodeOpenSsh(forged) as SshCertificateInfo;
  t.not(info.keyId, 'genuine-id');
  t.equal(info.signatureValid, false);
  t.notMatch(verdict(dir, 'ssh-keygen', ['-L', '-f', 'forged-cert.pub']), /Key ID/, 'ssh-keygen does not list it');
});

t.test('private keys: the public half and the protection, never the secret', async (t) => {
  keygen('-q', '-t', 'rsa', '-b', '2048', '-N', 'correct horse', '-a', '32', '-C', 'protected', '-f', 'protected');
  const cases = [...KEYS.map(([name]) => [name, false] as const), ['protected', true] as const];
  for (const [name, encrypted] of cases) {
    const sha = listed(`${name}.pub`);
    const info = decodeOpenSsh(read(name)) as SshPrivateKeyInfo;
    const expected: SshPrivateKeyInfo = {
      kind: 'privateKey',
      type: read(`${name}.pub`).split(' ')[0]!,
      keyType: keyTypeOf(sha.name, sha.bits),
      bits: sha.bits,
      fingerprint: sha.fingerprint,
      md5Fingerprint: listed(`${name}.pub`, 'md5').fingerprint,
      encrypted,
      cipher: encrypted ? 'aes256-ctr' : 'none',
      kdf: encrypted ? 'bcrypt' : 'none',
      ...(encrypted ? { rounds: 32 } : { comment: sha.comment }),
    };
    t.same(info, expected, `${name}`);
    // ssh-keygen -y derives the public key from the private file: the same key.
    if (!encrypted) t.equal(info.fingerprint, (decodeOpenSsh(keygen('-y', '-f', name)) as SshPublicKeyInfo).fingerprint, `${name}: ssh-keygen -y agrees`);
    const json = JSON.stringify(info);
    t.ok(json.length < 600 && !/[A-Za-z0-9+/]{60}/.test(json), `${name}: nothing key-sized in the answer`);
  }
});

t.test('bad input: a specific PKI code, quickly', async (t) => {
  const line = read('ed25519.pub');
  const blob = Buffer.from(line.split(' ')[1]!, 'base64');
  const sshString = (s: Buffer | string) => {
    const body = Buffer.from(s);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length);
    return Buffer.concat([length, body]);
  };
  const unknownType = Buffer.concat([sshString('ssh-foo'), sshString(Buffer.alloc(32, 1))]);
  const absurd = Buffer.concat([sshString('ssh-ed25519'), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(32)]);
  const hugeRsa = Buffer.concat([sshString('ssh-rsa'), sshString(Buffer.from([1, 0, 1])), sshString(Buffer.concat([Buffer.from([0]), Buffer.alloc(2100, 0xff)]))]);
  openssl(dir, 'genrsa', '-traditional', '-out', 'legacy.pem', '2048');
  openssl(dir, 'req', '-x509', '-key', 'legacy.pem', '-subj', '/CN=x', '-out', 'x509.pem');
  const privateBody = Buffer.from(read('ed25519').replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, ''), 'base64');
  const twoKeys = Buffer.from(privateBody);
  // The key count follows magic, cipher "none", kdf "none" and empty kdf options.
  twoKeys.writeUInt32BE(2, 15 + 8 + 8 + 4);
  const cases: [string, string | Uint8Array, string][] = [
    ['empty', '', 'PKI-001'],
    ['garbage text', 'hello, this is not a key', 'PKI-001'],
    ['garbage bytes', Buffer.from([0xff, 0x00, 0x13, 0x37]), 'PKI-001'],
    ['truncated blob', blob.subarray(0, blob.length - 5).toString('base64'), 'PKI-001'],
    ['trailing bytes', Buffer.concat([blob, Buffer.from([0])]).toString('base64'), 'PKI-001'],
    ['absurd length', absurd.toString('base64'), 'PKI-001'],
    ['line type differs from the blob', line.replace('ssh-ed25519', 'ssh-rsa'), 'PKI-001'],
    ['unknown key type', `ssh-foo ${unknownType.toString('base64')}`, 'PKI-006'],
    ['RSA modulus beyond 16384 bits', hugeRsa.toString('base64'), 'PKI-004'],
    ['larger than any SSH object', `ssh-ed25519 ${'A'.repeat(300 * 1024)}`, 'PKI-004'],
    ['an X.509 certificate', read('x509.pem'), 'PKI-002'],
    ['a PEM RSA private key', read('legacy.pem'), 'PKI-002'],
    ['a private key file with two keys', `-----BEGIN OPENSSH PRIVATE KEY-----\n${twoKeys.toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`, 'PKI-001'],
    ['a private key cut short', `-----BEGIN OPENSSH PRIVATE KEY-----\n${privateBody.subarray(0, 120).toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`, 'PKI-001'],
  ];
  for (const [name, input, code] of cases) {
    const started = performance.now();
    t.equal(codeOf(() => decodeOpenSsh(input)), code, name);
    t.ok(performance.now() - started < 1000, `${name}: bounded time`);
  }
});

t.test('mutated keys, certificates and private keys: a decoded object or a PKI problem, nothing else', async (t) => {
  const blobs = [
    Buffer.from(read('rsa.pub').split(' ')[1]!, 'base64'),
    Buffer.from(read('ecdsa384-cert.pub').split(' ')[1]!, 'base64'),
    Buffer.from(read('ed25519').replace(/-----[A-Z ]+-----/g, '').replace(/\s/g, ''), 'base64'),
  ];
  for (const bytes of blobs) {
    assertOnlyProblems(decodeOpenSsh, bytes, 4253);
  }
  t.pass('3 × 500 mutations');
});
