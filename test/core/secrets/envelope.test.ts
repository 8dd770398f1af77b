import t from 'tap';
import { randomBytes } from 'node:crypto';
import { SecretBox, SecretDecryptError } from '../../../core/secrets/index.js';

const key = randomBytes(32);
const box = new SecretBox(key);
const PLAINTEXT = 'hunter2-very-secret-password';

/** Decode one base64url field of a sealed string, flip a bit, re-encode. */
function flipBit(sealed: string, field: 2 | 3 | 4): string {
  const parts = sealed.split('.');
  const buf = Buffer.from(parts[field] ?? '', 'base64url');
  buf[0] = (buf[0] ?? 0) ^ 0x01;
  parts[field] = buf.toString('base64url');
  return parts.join('.');
}

/** The assertions `refused` needs; satisfied by any tap Test. */
interface Asserts {
  ok(v: unknown, msg: string): boolean;
  equal(a: unknown, b: unknown, msg: string): boolean;
  fail(msg: string): boolean;
}

/** Runs fn, asserts it throws a SecretDecryptError, returns the message. */
function refused(t: Asserts, fn: () => unknown, what: string): string {
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof SecretDecryptError, `${what}: SecretDecryptError`);
    if (err instanceof SecretDecryptError) {
      t.equal(err.code, 'SECRET-001', `${what}: code`);
      return err.message;
    }
    t.fail(`${what}: threw ${String(err)}`);
    return '';
  }
  t.fail(`${what}: did not throw`);
  return '';
}


t.test('round trips', async (t) => {
  t.equal(box.openString(box.seal(PLAINTEXT)), PLAINTEXT);
  t.equal(box.openString(box.seal('')), '', 'empty string');
  t.equal(box.openString(box.seal('päss 🔑 ключ')), 'päss 🔑 ключ', 'unicode');
  const bin = randomBytes(1000);
  t.same(box.open(box.seal(bin)), bin, 'binary buffer');
  const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  t.same(box.open(box.seal(allBytes)), allBytes, 'every byte value');
  t.same(box.open(box.seal(Buffer.alloc(0))), Buffer.alloc(0), 'empty buffer');
  t.equal(box.openString(box.seal(PLAINTEXT, 'pki_connectors.password'), 'pki_connectors.password'), PLAINTEXT);
  t.same(bin.length, 1000, 'caller buffer untouched');
});

t.test('format', async (t) => {
  const sealed = box.seal(PLAINTEXT);
  const parts = sealed.split('.');
  t.equal(parts.length, 5);
  t.equal(parts[0], 'cw1');
  t.equal(parts[1], box.keyId);
  t.match(box.keyId, /^[0-9a-f]{16}$/);
  t.equal(Buffer.from(parts[2] ?? '', 'base64url').length, 12, 'iv');
  t.equal(Buffer.from(parts[3] ?? '', 'base64url').length, Buffer.byteLength(PLAINTEXT), 'ciphertext');
  t.equal(Buffer.from(parts[4] ?? '', 'base64url').length, 16, 'tag');
  t.notOk(sealed.includes(PLAINTEXT));
  t.equal(new SecretBox(Buffer.from(key)).keyId, box.keyId, 'key id is deterministic');
});

t.test('two seals of the same plaintext differ', async (t) => {
  const a = box.seal(PLAINTEXT);
  const b = box.seal(PLAINTEXT);
  t.not(a, b);
  t.not(a.split('.')[2], b.split('.')[2], 'fresh iv');
});

t.test('key must be 32 bytes', async (t) => {
  t.throws(() => new SecretBox(randomBytes(31)));
  t.throws(() => new SecretBox(randomBytes(33)));
  t.throws(() => new SecretBox(Buffer.alloc(0)));
  t.throws(() => new SecretBox('x'.repeat(32) as unknown as Buffer));
});

t.test('tampering is refused', async (t) => {
  const sealed = box.seal(PLAINTEXT);
  const fields = { iv: 2, ciphertext: 3, tag: 4 } as const;
  for (const [name, field] of Object.entries(fields)) {
    const tampered = flipBit(sealed, field);
    t.not(tampered, sealed, `${name} changed`);
    const msg = refused(t, () => box.open(tampered), `flipped ${name}`);
    t.notOk(msg.includes(PLAINTEXT), `${name}: message has no plaintext`);
  }
  // Truncated / extended fields
  const parts = sealed.split('.');
  refused(t, () => box.open([...parts.slice(0, 4), Buffer.alloc(15).toString('base64url')].join('.')), 'short tag');
  refused(t, () => box.open([...parts.slice(0, 2), Buffer.alloc(16).toString('base64url'), ...parts.slice(3)].join('.')), 'long iv');
  refused(t, () => box.open([...parts.slice(0, 3), '', parts[4]].join('.')), 'ciphertext removed');
});

t.test('wrong key is refused, naming the other key id', async (t) => {
  const other = new SecretBox(randomBytes(32));
  const sealed = other.seal(PLAINTEXT);
  const msg = refused(t, () => box.open(sealed), 'wrong key');
  t.match(msg, `sealed under another master key (key id ${other.keyId})`);
  t.notOk(msg.includes(PLAINTEXT));
  // Forging the key id does not help: authentication still fails.
  const forged = sealed.replace(other.keyId, box.keyId);
  refused(t, () => box.open(forged), 'forged key id');
});

t.test('aad binds the ciphertext to its column', async (t) => {
  const sealed = box.seal(PLAINTEXT, 'pki_connectors.password');
  refused(t, () => box.open(sealed, 'pki_connectors.api_token'), 'wrong aad');
  refused(t, () => box.open(sealed), 'missing aad');
  refused(t, () => box.openString(sealed, ''), 'empty aad');
  const plain = box.seal(PLAINTEXT);
  refused(t, () => box.open(plain, 'pki_connectors.password'), 'aad given, none sealed');
});

t.test('garbage is always SecretDecryptError', async (t) => {
  const id = box.keyId;
  const garbage: unknown[] = [
    '',
    'cw1.',
    'cw2.a.b.c.d',
    'cw1.a.b.c.d',
    'cw1....',
    `cw1.${id}...`,
    `cw1.${id}.!!!.###.$$$`,
    `cw1.${id}.AAAA.AAAA.AAAA`,
    `cw1.${id}.${'A'.repeat(16)}.AA==.${'A'.repeat(22)}`,
    `cw1.${id.toUpperCase()}.a.b.c`,
    'hello world',
    'cw1.cw1.cw1.cw1.cw1.cw1',
    randomBytes(64).toString('base64'),
    randomBytes(64).toString('latin1'),
    '\u0000\uffff\ud800',
    null,
    undefined,
    42,
  ];
  for (let i = 0; i < 200; i++) {
    garbage.push(randomBytes(1 + (i % 80)).toString('base64url').replace(/[_-]/g, '.'));
  }
  for (const g of garbage) {
    refused(t, () => box.open(g as string), `garbage ${JSON.stringify(g)?.slice(0, 40)}`);
  }
});

t.test('openString refuses binary plaintext cleanly', async (t) => {
  const sealed = box.seal(Buffer.from([0xff, 0xfe, 0x00]));
  refused(t, () => box.openString(sealed), 'invalid utf-8');
});

t.test('error messages never contain plaintext or key bytes', async (t) => {
  const secretKey = randomBytes(32);
  const other = new SecretBox(secretKey);
  const sealed = other.seal(PLAINTEXT, 'col');
  const messages = [
    refused(t, () => other.open(flipBit(sealed, 3), 'col'), 'tampered'),
    refused(t, () => other.open(sealed, 'other'), 'wrong aad'),
    refused(t, () => box.open(sealed, 'col'), 'wrong key'),
  ];
  for (const m of messages) {
    t.ok(m.length > 0, 'has a message');
    for (const needle of [PLAINTEXT, secretKey.toString('hex'), secretKey.toString('base64'), secretKey.toString('base64url')]) {
      t.notOk(m.includes(needle), `"${m}" has no secret`);
    }
  }
});
