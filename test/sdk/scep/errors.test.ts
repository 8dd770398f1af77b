/**
 * Bad input to the SCEP codec: malformed and truncated DER, wrong message types, envelopes for another
 * recipient, refused or unknown algorithms, tampering. Each must end in a ScepError with the right
 * failInfo (or signatureValid false), never another exception type; fast-check mutates valid messages.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import {
  buildCertRep,
  buildPkiMessage,
  challengePasswordOf,
  csrSubjectOf,
  openEnvelope,
  parsePkiMessage,
  readCertRep,
  readIssuerAndSerial,
  readIssuerAndSubject,
  ScepError,
  type FailInfo,
  type PkiMessageOptions,
} from '@certwright/sdk/scep';
import { fixtures, hex, thrown } from './fixtures.js';

const { ra, otherRa, client, issued, csr } = fixtures();
const options = { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: ['aes-128-cbc', 'aes-256-cbc', 'des-ede3-cbc', 'des-cbc'] };
const base: PkiMessageOptions = {
  messageType: 'PKCSReq',
  transactionId: 'tx-err',
  inner: csr,
  signerCertificatePem: client.pem,
  signerPrivateKey: client.key,
  recipientCertificatesDer: [ra.der],
  cipher: 'aes-256-cbc',
  digest: 'sha256',
};
const valid = buildPkiMessage(base);

function failsWith(t: Test, fn: () => unknown, failInfo: FailInfo, label: string, message?: RegExp) {
  const err = thrown(fn);
  t.ok(err instanceof ScepError, `${label}: a ScepError (got ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)})`);
  if (err instanceof ScepError) {
    t.equal(err.failInfo, failInfo, `${label}: ${failInfo}`);
    if (message) t.match(err.message, message, `${label}: message`);
  }
}

/** Replaces every occurrence of `from` by `to` (same length) in a copy of `der`. */
function patch(der: Uint8Array, from: string, to: string): Uint8Array {
  const h = hex(der);
  if (!h.includes(from)) throw new Error(`pattern ${from} not in the message`);
  return new Uint8Array(Buffer.from(h.split(from).join(to), 'hex'));
}

t.test('malformed DER', async (t) => {
  const inputs: Record<string, Uint8Array> = {
    empty: new Uint8Array(0),
    'one byte': Uint8Array.of(0x30),
    'indefinite without end': Uint8Array.of(0x30, 0x80, 0x02, 0x01, 0x00),
    'length beyond the data': Uint8Array.of(0x30, 0x82, 0xff, 0xff, 0x00),
    'five-byte length': Uint8Array.of(0x30, 0x85, 1, 1, 1, 1, 1),
    'high tag number': Uint8Array.of(0x1f, 0x81, 0x01, 0x00),
    'not a ContentInfo': issued.der,
    'trailing garbage': Uint8Array.from([...valid, 0, 0]),
    'text': new TextEncoder().encode('-----BEGIN PKCS7-----'),
    'deep nesting': Uint8Array.from([...Array(60).fill([0x30, 0x80]).flat(), ...Array(60).fill([0, 0]).flat()]),
  };
  for (const [name, der] of Object.entries(inputs)) failsWith(t, () => parsePkiMessage(der), 'badRequest', name);
  failsWith(t, () => parsePkiMessage('nope' as unknown as Uint8Array), 'badRequest', 'a string');
  failsWith(t, () => parsePkiMessage(undefined as unknown as Uint8Array), 'badRequest', 'undefined');
  for (const fn of [challengePasswordOf, csrSubjectOf, readIssuerAndSerial, readIssuerAndSubject]) {
    failsWith(t, () => fn(Uint8Array.of(0x30, 0x03, 0x02, 0x01)), 'badRequest', `${fn.name} on truncated DER`);
    failsWith(t, () => fn(Uint8Array.of(0x04, 0x00)), 'badRequest', `${fn.name} on an OCTET STRING`);
  }
  failsWith(t, () => openEnvelope(csr, options), 'badRequest', 'openEnvelope on a CSR');
});

t.test('a truncated message, at every length', async (t) => {
  let failures = 0;
  for (let n = 0; n < valid.length; n += 7) {
    const err = thrown(() => parsePkiMessage(valid.subarray(0, n)));
    if (err instanceof ScepError && err.failInfo === 'badRequest') failures++;
    else t.fail(`truncated to ${n}: ${String(err)}`);
  }
  t.equal(failures, Math.ceil(valid.length / 7));
});

t.test('wrong messageType', async (t) => {
  failsWith(t, () => parsePkiMessage(buildPkiMessage({ ...base, messageType: 3 })), 'badRequest', 'CertRep as a request', /CertRep is not a request/);
  failsWith(t, () => parsePkiMessage(buildPkiMessage({ ...base, messageType: 99 })), 'badRequest', 'unknown type 99', /Unknown messageType 99/);
  const certRep = buildCertRep({ pkiStatus: 'PENDING', transactionId: 'x', recipientNonce: Uint8Array.of(1), digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, cipher: 'aes-256-cbc' });
  failsWith(t, () => parsePkiMessage(certRep), 'badRequest', 'a real CertRep');
  failsWith(t, () => readCertRep(valid, { privateKey: client.key }), 'badRequest', 'readCertRep on a PKCSReq', /not CertRep/);
});

t.test('an envelope for another recipient', async (t) => {
  const m = parsePkiMessage(buildPkiMessage({ ...base, recipientCertificatesDer: [otherRa.der] }));
  t.ok(m.signatureValid, 'the message itself is fine');
  failsWith(t, () => openEnvelope(m, options), 'badCertId', 'not encrypted to us', /not encrypted to this RA certificate/);
});

t.test('refused and unknown algorithms', async (t) => {
  const des = parsePkiMessage(buildPkiMessage({ ...base, cipher: 'des-cbc' }));
  failsWith(t, () => openEnvelope(des, { ...options, allowedCiphers: ['aes-256-cbc'] }), 'badAlg', 'des-cbc not allowed', /des-cbc is not allowed/);
  // aes-256-cbc OID 2.16.840.1.101.3.4.1.42 → .127: unknown cipher, reported as null, refused at opening.
  const unknownCipher = parsePkiMessage(patch(valid, '060960864801650304012a', '060960864801650304017f'));
  t.equal(unknownCipher.contentEncryption, null);
  t.equal(unknownCipher.envelope.contentEncryptionOid, '2.16.840.1.101.3.4.1.127');
  failsWith(t, () => openEnvelope(unknownCipher, options), 'badAlg', 'unknown cipher', /Unsupported content encryption/);
  // sha256 OID 2.16.840.1.101.3.4.2.1 → .2.127 wherever it appears.
  failsWith(t, () => parsePkiMessage(patch(valid, '0609608648016503040201', '060960864801650304027f')), 'badAlg', 'unknown digest', /Unsupported digest/);
});

t.test('tampering: signature, content, signer certificate', async (t) => {
  const m = parsePkiMessage(valid);
  t.ok(m.signatureValid);
  const sig = Uint8Array.from(valid);
  sig[sig.length - 5]! ^= 0x01; // inside the signature value, the last field
  t.notOk(parsePkiMessage(sig).signatureValid, 'a flipped signature bit: signatureValid false');
  const content = Uint8Array.from(valid);
  const ek = m.envelope.encryptedContent;
  const inEnvelope = hex(valid).indexOf(hex(ek)) / 2;
  content[inEnvelope + 3]! ^= 0x80;
  const tampered = parsePkiMessage(content);
  t.notOk(tampered.signatureValid, 'a flipped content bit: messageDigest no longer matches');
  failsWith(t, () => openEnvelope(tampered, options), 'badMessageCheck', 'the tampered content does not decrypt');
  const cert = Uint8Array.from(valid);
  const at = hex(valid).indexOf(hex(client.der)) / 2;
  cert[at + 20]! ^= 0x01; // inside the certificate's serial number: no longer the SignerInfo's sid
  failsWith(t, () => parsePkiMessage(cert), 'badCertId', 'signer certificate missing', /matches its signer/);
});

t.test('readCertRep refuses what is not for it', async (t) => {
  const rep = buildCertRep({ pkiStatus: 'SUCCESS', transactionId: 'x', recipientNonce: Uint8Array.of(1), digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, recipientCertificateDer: client.der, cipher: 'aes-256-cbc', certificatesDer: [issued.der] });
  failsWith(t, () => readCertRep(rep, { privateKey: otherRa.key }), 'badMessageCheck', 'another key');
  failsWith(t, () => readCertRep(rep, { privateKey: client.key, certificateDer: otherRa.der }), 'badCertId', 'another certificate');
  failsWith(t, () => readCertRep(rep, { privateKey: client.key, digest: 'sha512' }), 'badAlg', 'another digest');
});

t.test('builders refuse incomplete answers with a TypeError', async (t) => {
  const common = { transactionId: 'x', recipientNonce: Uint8Array.of(1), digest: 'sha256' as const, signerCertificatePem: ra.pem, signerPrivateKey: ra.key, cipher: 'aes-256-cbc' as const };
  t.throws(() => buildCertRep({ ...common, pkiStatus: 'FAILURE' }), TypeError);
  t.throws(() => buildCertRep({ ...common, pkiStatus: 'SUCCESS', certificatesDer: [issued.der] }), TypeError);
  t.throws(() => buildCertRep({ ...common, pkiStatus: 'SUCCESS', recipientCertificateDer: client.der }), TypeError);
  t.throws(() => buildCertRep({ ...common, pkiStatus: 'PENDING', signerCertificatePem: 'no pem' }), TypeError);
});

t.test('fuzz: mutated pkiMessages only ever throw ScepError', async (t) => {
  const small = buildPkiMessage({ ...base, cipher: 'aes-128-cbc' });
  let parsed = 0;
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(small.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      fc.option(fc.nat(small.length), { nil: undefined }),
      (flips, cut) => {
        const der = Uint8Array.from(small);
        for (const [i, v] of flips) der[i] = v;
        const input = cut === undefined ? der : der.subarray(0, cut);
        try {
          const m = parsePkiMessage(input);
          parsed++;
          openEnvelope(m, options);
        } catch (err) {
          if (!(err instanceof ScepError)) throw err;
        }
      },
    ),
    { numRuns: 300, seed: 8894 },
  );
  t.pass(`300 mutations, ${parsed} still parsed`);
});

t.test('fuzz: mutated CertReps only ever throw ScepError', async (t) => {
  const rep = buildCertRep({ pkiStatus: 'SUCCESS', transactionId: 'f', recipientNonce: Uint8Array.of(1), digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, recipientCertificateDer: client.der, cipher: 'des-cbc', certificatesDer: [issued.der] });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(rep.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), (flips) => {
      const der = Uint8Array.from(rep);
      for (const [i, v] of flips) der[i] = v;
      try {
        readCertRep(der, { privateKey: client.key });
      } catch (err) {
        if (!(err instanceof ScepError)) throw err;
      }
    }),
    { numRuns: 150, seed: 5652 },
  );
  t.pass('150 mutations');
});
