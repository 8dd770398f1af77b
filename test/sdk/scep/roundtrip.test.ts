/**
 * Round trips through the SCEP codec with real RSA-2048 keys: every request type × cipher × digest,
 * client → parsePkiMessage → openEnvelope → buildCertRep → readCertRep, plus FAILURE/PENDING answers,
 * AES-GCM, CRLs and the inner-content helpers.
 */
import t from 'tap';
import {
  buildCertRep,
  buildPkiMessage,
  challengePasswordOf,
  csrForScep,
  csrSubjectOf,
  degenerateCertsOnly,
  degenerateSignedData,
  encodeIssuerAndSerial,
  encodeIssuerAndSubject,
  issuerAndSerialOf,
  openEnvelope,
  parsePkiMessage,
  readCertRep,
  readDegenerateSignedData,
  readIssuerAndSerial,
  readIssuerAndSubject,
  type ContentCipher,
  type FailInfo,
  type ScepMessageType,
} from '@certwright/sdk/scep';
import { certificateFields } from '../../../sdk/src/scep/certificate-fields.js';
import { fixtures, hex } from './fixtures.js';

const { ra, client, issued, csr, crl } = fixtures();
const ciphers: ContentCipher[] = ['des-cbc', 'des-ede3-cbc', 'aes-128-cbc', 'aes-256-cbc'];
const digests = ['sha1', 'sha256', 'sha512'] as const;
const allowed = ['des-cbc', 'des-ede3-cbc', 'aes-128-cbc', 'aes-192-cbc', 'aes-256-cbc', 'aes-128-gcm', 'aes-256-gcm'];
const raFields = certificateFields(ra.der);
const issuedFields = certificateFields(issued.der);

const innerFor: Record<ScepMessageType, Uint8Array> = {
  PKCSReq: csr,
  RenewalReq: csr,
  CertPoll: encodeIssuerAndSubject(raFields.subjectDer, csrSubjectOf(csr)),
  GetCert: issuerAndSerialOf(issued.der),
  GetCRL: encodeIssuerAndSerial(raFields.subjectDer, raFields.serial),
};

t.test('every message type, cipher and digest round-trips', async (t) => {
  let n = 0;
  for (const messageType of Object.keys(innerFor) as ScepMessageType[]) {
    for (const cipher of ciphers) {
      for (const digest of digests) {
        const senderNonce = new Uint8Array(16).fill(n + 1);
        const transactionId = `tx-${messageType}-${cipher}-${digest}`;
        const der = buildPkiMessage({
          messageType,
          transactionId,
          senderNonce,
          inner: innerFor[messageType],
          signerCertificatePem: client.pem,
          signerPrivateKey: client.key,
          recipientCertificatesDer: [ra.der],
          cipher,
          digest,
        });
        const m = parsePkiMessage(der);
        const label = `${messageType} ${cipher} ${digest}`;
        t.equal(m.messageType, messageType, label);
        t.equal(m.transactionId, transactionId);
        t.equal(hex(m.senderNonce), hex(senderNonce));
        t.equal(m.digestAlgorithm, digest);
        t.equal(m.contentEncryption, cipher);
        t.ok(m.signatureValid, `${label}: signature verifies`);
        t.equal(hex(m.signerCertificateDer), hex(client.der));
        t.ok(m.signingTime && Math.abs(m.signingTime.getTime() - Date.now()) < 120_000, 'signingTime is now');
        t.equal(m.envelope.recipients.length, 1);
        const inner = openEnvelope(m, { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: allowed });
        t.equal(hex(inner), hex(innerFor[messageType]), `${label}: inner content`);

        const answer =
          messageType === 'GetCRL'
            ? { crlDer: crl }
            : { certificatesDer: [issued.der, ra.der] };
        const rep = buildCertRep({
          pkiStatus: 'SUCCESS',
          transactionId: m.transactionId,
          recipientNonce: m.senderNonce,
          digest,
          signerCertificatePem: ra.pem,
          signerPrivateKey: ra.key,
          recipientCertificateDer: m.signerCertificateDer,
          cipher,
          ...answer,
        });
        const r = readCertRep(rep, { privateKey: client.key, certificateDer: client.der, digest });
        t.equal(r.pkiStatus, 'SUCCESS');
        t.ok(r.signatureValid, `${label}: CertRep signature verifies`);
        t.equal(r.transactionId, transactionId);
        t.equal(hex(r.recipientNonce), hex(senderNonce), 'recipientNonce is the request senderNonce');
        t.equal(r.senderNonce.length, 16, 'a fresh senderNonce');
        t.equal(r.contentEncryption, cipher);
        t.equal(hex(r.signerCertificateDer), hex(ra.der));
        if (messageType === 'GetCRL') {
          t.equal(hex(r.crlDer!), hex(crl));
          t.notOk(r.certificatesDer);
        } else {
          t.same(r.certificatesDer!.map(hex), [hex(issued.der), hex(ra.der)], 'issued certificate first');
        }
        n++;
      }
    }
  }
  t.equal(n, 60);
});

t.test('FAILURE and PENDING CertReps carry no content', async (t) => {
  const failInfos: FailInfo[] = ['badAlg', 'badMessageCheck', 'badRequest', 'badTime', 'badCertId'];
  for (const digest of digests) {
    for (const failInfo of failInfos) {
      const rep = buildCertRep({
        pkiStatus: 'FAILURE',
        failInfo,
        failInfoText: `refused: ${failInfo} é`,
        transactionId: 'tx-failure',
        recipientNonce: Uint8Array.of(1, 2, 3),
        senderNonce: Uint8Array.of(9, 9),
        digest,
        signerCertificatePem: ra.pem,
        signerPrivateKey: ra.key,
        cipher: 'aes-256-cbc',
      });
      const r = readCertRep(rep, { privateKey: client.key });
      t.equal(r.pkiStatus, 'FAILURE');
      t.equal(r.failInfo, failInfo);
      t.equal(r.failInfoText, `refused: ${failInfo} é`);
      t.ok(r.signatureValid);
      t.equal(hex(r.senderNonce), '0909');
      t.equal(hex(r.recipientNonce), '010203');
      t.equal(r.certificatesDer, undefined);
    }
    const pending = readCertRep(
      buildCertRep({ pkiStatus: 'PENDING', transactionId: 'tx-p', recipientNonce: Uint8Array.of(7), digest, signerCertificatePem: ra.pem, signerPrivateKey: ra.key, cipher: 'des-cbc', signingTime: null }),
      { privateKey: client.key },
    );
    t.equal(pending.pkiStatus, 'PENDING');
    t.ok(pending.signatureValid);
    t.equal(pending.failInfo, undefined);
  }
});

t.test('AES-GCM envelopes (AuthEnvelopedData) round-trip', async (t) => {
  for (const cipher of ['aes-128-gcm', 'aes-256-gcm'] as const) {
    const m = parsePkiMessage(
      buildPkiMessage({ messageType: 'PKCSReq', transactionId: 'gcm', inner: csr, signerCertificatePem: client.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.der], cipher, digest: 'sha256' }),
    );
    t.equal(m.envelope.kind, 'authEnveloped');
    t.equal(hex(openEnvelope(m, { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: allowed })), hex(csr));
    const r = readCertRep(
      buildCertRep({ pkiStatus: 'SUCCESS', transactionId: 'gcm', recipientNonce: m.senderNonce, digest: 'sha256', signerCertificatePem: ra.pem, signerPrivateKey: ra.key, recipientCertificateDer: client.der, cipher, certificatesDer: [issued.der] }),
      { privateKey: client.key },
    );
    t.same(r.certificatesDer!.map(hex), [hex(issued.der)]);
  }
});

t.test('a request encrypted to several RA certificates opens with each', async (t) => {
  const { otherRa } = fixtures();
  const m = parsePkiMessage(
    buildPkiMessage({ messageType: 'PKCSReq', transactionId: 'multi', inner: csr, signerCertificatePem: client.pem, signerPrivateKey: client.key, recipientCertificatesDer: [otherRa.der, ra.der], cipher: 'aes-128-cbc', digest: 'sha256' }),
  );
  t.equal(m.envelope.recipients.length, 2);
  for (const p of [ra, otherRa]) t.equal(hex(openEnvelope(m, { raPrivateKey: p.key, raCertificateDer: p.der, allowedCiphers: allowed })), hex(csr));
});

t.test('inner contents: challengePassword, IssuerAndSubject, IssuerAndSerialNumber', async (t) => {
  t.equal(challengePasswordOf(csr), 'one-time-Ch4llenge');
  t.equal(challengePasswordOf(csrForScep({ privateKey: client.key, cn: 'x', challengePassword: 'pässwörd_ü' })), 'pässwörd_ü', 'UTF8String');
  t.equal(challengePasswordOf(csrForScep({ privateKey: client.key, cn: 'x' })), undefined, 'no challenge');
  const ias = readIssuerAndSubject(innerFor.CertPoll);
  t.equal(hex(ias.issuerDer), hex(raFields.subjectDer));
  t.equal(hex(ias.subjectDer), hex(csrSubjectOf(csr)));
  const isn = readIssuerAndSerial(innerFor.GetCert);
  t.equal(hex(isn.issuerDer), hex(issuedFields.issuerDer));
  t.equal(isn.serialHex, hex(issuedFields.serial).replace(/^00/, ''));
  t.equal(readIssuerAndSerial(encodeIssuerAndSerial(raFields.subjectDer, '0fff')).serialHex, '0fff');
  t.equal(readIssuerAndSerial(encodeIssuerAndSerial(raFields.subjectDer, Uint8Array.of(0x80, 1))).serialHex, '8001', 'no sign byte in the hex');
});

t.test('degenerate SignedData: same bytes as the shared certs-only builder, and readable back', async (t) => {
  const certs = [issued.der, ra.der, client.der];
  t.equal(hex(degenerateSignedData(certs)), hex(degenerateCertsOnly(certs)));
  const back = readDegenerateSignedData(degenerateSignedData(certs, [crl]));
  t.same(back.certificatesDer.map(hex), certs.map(hex));
  t.same(back.crlsDer.map(hex), [hex(crl)]);
});

t.test('the RA certificate PEM may carry its chain', async (t) => {
  const rep = buildCertRep({ pkiStatus: 'PENDING', transactionId: 'c', recipientNonce: Uint8Array.of(1), digest: 'sha256', signerCertificatePem: ra.pem + issued.pem, signerPrivateKey: ra.key, cipher: 'aes-256-cbc' });
  const r = readCertRep(rep, { privateKey: client.key });
  t.ok(r.signatureValid);
  t.equal(hex(r.signerCertificateDer), hex(ra.der), 'the first certificate signs');
});
