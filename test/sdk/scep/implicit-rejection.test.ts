/**
 * RSA PKCS#1 v1.5 key transport with implicit rejection: a ciphertext whose padding is wrong does not
 * throw, yields a deterministic pseudo-random key of the expected length, and the envelope then fails
 * exactly as with a wrong key (no padding oracle).
 */
import { constants, publicEncrypt, randomBytes, createPublicKey } from 'node:crypto';
import t from 'tap';
import { buildPkiMessage, openEnvelope, parsePkiMessage, ScepError, unwrapContentKey } from '@certwright/sdk/scep';
import { fixtures, hex, thrown } from './fixtures.js';

const { ra, otherRa, client, csr } = fixtures();
const raPublic = createPublicKey(ra.key);
const K = 256;

/** Raw RSA of a 256-byte encoded message (no padding added). */
const rawEncrypt = (em: Uint8Array) => new Uint8Array(publicEncrypt({ key: raPublic, padding: constants.RSA_NO_PADDING }, em));

/** 00 02 PS 00 M with a non-zero PS of the right length. */
function encoded(m: Uint8Array): Uint8Array {
  const em = new Uint8Array(K);
  em[1] = 2;
  const ps = K - 3 - m.length;
  for (let i = 0; i < ps; i++) em[2 + i] = 1 + (i % 255);
  em.set(m, K - m.length);
  return em;
}

const realKey = new Uint8Array(32).fill(0x5a);

t.test('a well-padded key comes back as is', async (t) => {
  t.equal(hex(unwrapContentKey(ra.key, rawEncrypt(encoded(realKey)), 32)), hex(realKey));
  const pkcs1 = new Uint8Array(publicEncrypt({ key: raPublic, padding: constants.RSA_PKCS1_PADDING }, realKey));
  t.equal(hex(unwrapContentKey(ra.key, pkcs1, 32)), hex(realKey), 'node/OpenSSL PKCS#1 v1.5 encryption');
  t.equal(hex(unwrapContentKey(ra.key, pkcs1.subarray(0), 32)), hex(realKey));
});

t.test('bad paddings give deterministic pseudo-random keys, never an exception', async (t) => {
  const bad: Record<string, Uint8Array> = {};
  let em = encoded(realKey);
  em[1] = 1;
  bad['block type 1'] = rawEncrypt(em);
  em = encoded(realKey);
  em[0] = 0;
  em[K - 33] = 7; // no zero separator anywhere
  bad['no separator'] = rawEncrypt(em);
  em = encoded(realKey);
  em[5] = 0; // PS of 3 bytes
  bad['short PS'] = rawEncrypt(em);
  bad['16-byte key where 32 are expected'] = rawEncrypt(encoded(new Uint8Array(16).fill(0x5a)));
  bad['all zero'] = new Uint8Array(K);
  bad['above the modulus'] = new Uint8Array(K).fill(0xff);
  bad['longer than the modulus'] = new Uint8Array(K + 1).fill(1);
  bad['empty'] = new Uint8Array(0);
  const seen = new Set<string>([hex(realKey)]);
  for (const [name, c] of Object.entries(bad)) {
    let first: Uint8Array | undefined;
    t.doesNotThrow(() => (first = unwrapContentKey(ra.key, c, 32)), `${name}: no exception`);
    t.equal(first!.length, 32, `${name}: the expected key length`);
    t.equal(hex(unwrapContentKey(ra.key, c, 32)), hex(first!), `${name}: the same key every time`);
    t.notOk(seen.has(hex(first!)), `${name}: a key of its own (not the real one, not another case's)`);
    seen.add(hex(first!));
    t.not(hex(unwrapContentKey(otherRa.key, c, 32)), hex(first!), `${name}: depends on the private key`);
    t.equal(unwrapContentKey(ra.key, c, 8).length, 8, `${name}: follows the cipher's key length`);
  }
});

t.test('in an envelope, a bad padding fails exactly like a wrong key', async (t) => {
  const m = parsePkiMessage(
    buildPkiMessage({ messageType: 'PKCSReq', transactionId: 'ir', inner: csr, signerCertificatePem: client.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.der], cipher: 'aes-256-cbc', digest: 'sha256' }),
  );
  const env = m.envelope;
  const ek = env.recipients[0]!.encryptedKey;
  const at = ek.byteOffset - env.der.byteOffset;
  const withKey = (c: Uint8Array) => {
    const copy = Uint8Array.from(env.der);
    copy.set(c, at);
    return copy;
  };
  const options = { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: ['aes-256-cbc'] };
  t.equal(hex(openEnvelope(withKey(ek), options)), hex(csr), 'unchanged, it opens');
  const badPadding = (() => {
    const em = encoded(randomBytes(32));
    em[1] = 3;
    return rawEncrypt(em);
  })();
  const failures = {
    'bad padding': thrown(() => openEnvelope(withKey(badPadding), options)),
    'bad padding, again': thrown(() => openEnvelope(withKey(badPadding), options)),
    'wrong length key': thrown(() => openEnvelope(withKey(rawEncrypt(encoded(randomBytes(16)))), options)),
    'another content key': thrown(() => openEnvelope(withKey(new Uint8Array(publicEncrypt({ key: raPublic, padding: constants.RSA_PKCS1_PADDING }, randomBytes(32)))), options)),
    'wrong RA private key': thrown(() => openEnvelope(m, { ...options, raPrivateKey: otherRa.key })),
  };
  for (const [name, err] of Object.entries(failures)) {
    t.ok(err instanceof ScepError, `${name}: a ScepError`);
    t.equal((err as ScepError).failInfo, 'badMessageCheck', `${name}: badMessageCheck`);
    t.equal((err as ScepError).message, (failures['wrong RA private key'] as ScepError).message, `${name}: the same message as a wrong key`);
  }
});
