/**
 * Single-DES interoperability with node-forge's PKCS#7 (scepclient's cipher): forge opens our des-cbc
 * CertRep envelope, and openEnvelope opens forge's des-cbc EnvelopedData.
 */
import t from 'tap';
import forge from 'node-forge';
import { buildCertRep, openEnvelope, readCertRep } from '@certwright/sdk/scep';
import { parseSignedData } from '../../../sdk/src/scep/signed-data.js';
import { fixtures, hex } from './fixtures.js';

const { ra, client, issued, csr } = fixtures();
const binary = (b: Uint8Array) => Buffer.from(b).toString('binary');

t.test('openEnvelope opens node-forge EnvelopedData (des-CBC, 3DES, AES)', async (t) => {
  for (const [name, cipher] of [['desCBC', 'des-cbc'], ['des-EDE3-CBC', 'des-ede3-cbc'], ['aes256-CBC', 'aes-256-cbc']] as const) {
    const p7 = forge.pkcs7.createEnvelopedData();
    p7.addRecipient(forge.pki.certificateFromPem(ra.pem));
    if (name === 'desCBC') {
      // forge's pkcs7.encrypt() has no single DES (its decrypt has): encrypt the content with forge's DES
      // and let forge do the CMS structure and the key transport.
      const key = forge.random.getBytesSync(8);
      const iv = forge.random.getBytesSync(8);
      const c = forge.cipher.createCipher('DES-CBC', key);
      c.start({ iv });
      c.update(forge.util.createBuffer(binary(csr)));
      c.finish();
      (p7 as unknown as { encryptedContent: object }).encryptedContent = {
        algorithm: forge.pki.oids.desCBC,
        parameter: forge.util.createBuffer(iv),
        key: forge.util.createBuffer(key),
        content: c.output,
      };
      p7.encrypt();
    } else {
      p7.content = forge.util.createBuffer(binary(csr));
      p7.encrypt(undefined, forge.pki.oids[name]);
    }
    const der = new Uint8Array(Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary'));
    t.equal(hex(openEnvelope(der, { raPrivateKey: ra.key, raCertificateDer: ra.der, allowedCiphers: [cipher] })), hex(csr), `forge ${name} → openEnvelope`);
  }
});

t.test('node-forge decrypts a des-cbc CertRep envelope and reads the certificates', async (t) => {
  const rep = buildCertRep({
    pkiStatus: 'SUCCESS',
    transactionId: 'forge',
    recipientNonce: Uint8Array.of(1, 2),
    digest: 'sha1',
    signerCertificatePem: ra.pem,
    signerPrivateKey: ra.key,
    recipientCertificateDer: client.der,
    cipher: 'des-cbc',
    certificatesDer: [issued.der, ra.der],
  });
  const envelope = parseSignedData(rep).eContent!;
  // @types/node-forge does not describe a parsed EnvelopedData's decrypt API.
  const msg = forge.pkcs7.messageFromAsn1(forge.asn1.fromDer(binary(envelope))) as unknown as {
    findRecipient(cert: forge.pki.Certificate): unknown;
    decrypt(recipient: unknown, key: forge.pki.rsa.PrivateKey): void;
    encryptedContent: { algorithm: string };
    content: forge.util.ByteStringBuffer;
  };
  t.equal(msg.encryptedContent.algorithm, forge.pki.oids.desCBC);
  const recipient = msg.findRecipient(forge.pki.certificateFromPem(client.pem));
  t.ok(recipient, 'forge finds itself among the recipients (issuer and serial)');
  msg.decrypt(recipient, forge.pki.privateKeyFromPem(client.keyPem) as forge.pki.rsa.PrivateKey);
  const inner = forge.pkcs7.messageFromAsn1(forge.asn1.fromDer(msg.content.getBytes())) as forge.pkcs7.PkcsSignedData;
  t.same(
    inner.certificates.map((c) => c.subject.getField('CN').value),
    ['scep-client issued', 'Certwright SCEP RA'],
    'the degenerate SignedData carries the issued certificate first',
  );
  t.same(readCertRep(rep, { privateKey: client.key }).certificatesDer!.map(hex), [hex(issued.der), hex(ra.der)]);
});
