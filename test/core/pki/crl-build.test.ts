import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { buildCrl } from '../../../core/pki/crl/build.js';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { verifyCrl } from '../../../core/pki/crl/verify.js';
import { caIdentity } from '../../../core/pki/keys/ca-identity.js';
import { openssl, type OpenSsl } from '../../helpers/openssl.js';
import { verdict } from '../../helpers/pki-tools.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

/** A CA made by openssl (req -x509), so the CRL is checked against a certificate we did not write. */
function opensslCa(ssl: OpenSsl, name: string, spec: string) {
  const keyFile = ssl.key(`${name}.key`, spec);
  ssl.run(['req', '-x509', '-new', '-key', keyFile, '-subj', `/C=FR/O=Certwright Test/CN=${name}`, '-days', '30', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', `${name}.pem`]);
  const der = ssl.der(`${name}.pem`);
  return { file: `${name}.pem`, der: new Uint8Array(der), key: createPrivateKey(ssl.read(keyFile)) };
}

for (const [label, spec] of [['P-256', 'ec:P-256'], ['RSA 2048', 'rsa:2048'], ['Ed25519', 'ed25519']] as const) {
  t.test(`a CRL signed by a ${label} CA: openssl verifies it and reads every field`, async (t) => {
    const ssl = openssl(t);
    const ca = opensslCa(ssl, 'ca', spec);
    const identity = caIdentity(ca.der, ca.key);
    const entries = [
      { serial: '1a2b3c', revokedAt: NOW - 2 * HOUR },
      { serial: '7f' + 'ab'.repeat(19), revokedAt: NOW - HOUR, reason: 'keyCompromise' },
      { serial: '0e', revokedAt: NOW - 3 * HOUR, reason: 'AFFILIATIONCHANGED' },
      { serial: '00ff01', revokedAt: NOW - 4 * HOUR, reason: 'cessationOfOperation' },
    ];
    const der = buildCrl(identity, { entries, thisUpdate: NOW, nextUpdate: NOW + 24 * HOUR, crlNumber: 7 });
    ssl.write('ca.crl', der);

    const out = verdict(ssl.dir, 'openssl', ['crl', '-inform', 'DER', '-in', 'ca.crl', '-CAfile', ca.file, '-verify', '-noout', '-text']);
    t.match(out, /verify OK/);
    t.match(out, /Version 2 \(0x1\)/);
    t.match(out, /X509v3 CRL Number:\s*\n\s*7\n/);
    t.match(out, /X509v3 Authority Key Identifier:/);
    t.match(out, /Last Update: Nov 22 12:00:00 2026 GMT/);
    t.match(out, /Next Update: Nov 23 12:00:00 2026 GMT/);
    t.match(out, /Serial Number: 1A2B3C\n\s*Revocation Date: Nov 22 10:00:00 2026 GMT\n(?!\s*CRL entry extensions)/);
    t.match(out, /X509v3 CRL Reason Code:\s*\n\s*Key Compromise/);
    t.match(out, /X509v3 CRL Reason Code:\s*\n\s*Affiliation Changed/);
    t.match(out, /X509v3 CRL Reason Code:\s*\n\s*Cessation Of Operation/);
    // A stranger's key does not verify it.
    ssl.run(['req', '-x509', '-new', '-key', ssl.key('other.key', 'ec:P-256'), '-subj', '/CN=ca', '-days', '1', '-out', 'other.pem']);
    t.notMatch(verdict(ssl.dir, 'openssl', ['crl', '-inform', 'DER', '-in', 'ca.crl', '-CAfile', 'other.pem', '-verify', '-noout']), /verify OK/);

    const decoded = decodeCrl(der);
    t.equal(decoded.version, 2);
    t.equal(decoded.crlNumber, '7');
    t.equal(decoded.thisUpdate, NOW);
    t.equal(decoded.nextUpdate, NOW + 24 * HOUR);
    t.equal(decoded.issuer, 'CN=ca,O=Certwright Test,C=FR');
    t.same(
      decoded.entries.map((e) => [e.serial, e.revocationDate, e.reason]),
      [
        ['1a2b3c', NOW - 2 * HOUR, undefined],
        ['7f' + 'ab'.repeat(19), NOW - HOUR, 'KEYCOMPROMISE'],
        ['0e', NOW - 3 * HOUR, 'AFFILIATIONCHANGED'],
        ['ff01', NOW - 4 * HOUR, 'CESSATIONOFOPERATION'],
      ],
    );
    t.equal(decoded.authorityKeyIdentifier?.keyIdentifier, Buffer.from(identity.keyId).toString('hex'));
    t.equal(verifyCrl(der, createPublicKey(ca.key)), true);
    t.equal(verifyCrl(der, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey), false);
  });
}

t.test('an empty CRL has no revokedCertificates field and a large CRL number', async (t) => {
  const ssl = openssl(t);
  const ca = opensslCa(ssl, 'ca', 'ec:P-256');
  const der = buildCrl(caIdentity(ca.der, ca.key), { entries: [], thisUpdate: NOW, nextUpdate: NOW + HOUR, crlNumber: 2n ** 64n + 1n });
  ssl.write('empty.crl', der);
  const out = verdict(ssl.dir, 'openssl', ['crl', '-inform', 'DER', '-in', 'empty.crl', '-CAfile', ca.file, '-verify', '-noout', '-text']);
  t.match(out, /verify OK/);
  t.match(out, /No Revoked Certificates\./);
  t.match(out, /X509v3 CRL Number:\s*\n\s*18446744073709551617\n/);
  const decoded = decodeCrl(der);
  t.same(decoded.entries, []);
  t.equal(decoded.crlNumber, (2n ** 64n + 1n).toString());
});

t.test('bad input is a 400 problem, not a broken CRL', async (t) => {
  const ssl = openssl(t);
  const ca = opensslCa(ssl, 'ca', 'ec:P-256');
  const identity = caIdentity(ca.der, ca.key);
  const code = (fn: () => unknown): string | undefined => {
    try {
      fn();
      return undefined;
    } catch (err) {
      return err instanceof ProblemError ? err.code : String(err);
    }
  };
  t.equal(code(() => buildCrl(identity, { entries: [{ serial: '01', revokedAt: NOW, reason: 'stolen' }], thisUpdate: NOW, nextUpdate: NOW + HOUR, crlNumber: 1 })), 'HTTP-003');
  t.equal(code(() => buildCrl(identity, { entries: [{ serial: 'xyz', revokedAt: NOW }], thisUpdate: NOW, nextUpdate: NOW + HOUR, crlNumber: 1 })), 'HTTP-003');
  t.equal(code(() => buildCrl(identity, { entries: [], thisUpdate: NOW, nextUpdate: NOW, crlNumber: 1 })), 'HTTP-003');
  t.equal(code(() => buildCrl(identity, { entries: [], thisUpdate: NOW, nextUpdate: NOW + HOUR, crlNumber: -1 })), 'HTTP-003');
  // The key must be the CA's.
  t.equal(code(() => caIdentity(ca.der, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey)), 'CA-002');
});
