import { createHash, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { bitString, explicit, octets, oid, seq, smallInt, time, unsignedInt, utf8String, setOf } from '../../../core/pki/der/writer.js';
import { signerFor } from '../../../core/pki/issue/signer.js';
import { toPem } from '../../../core/pki/input.js';
import { parseCertificate, parseCertificatePem } from '../../../core/pki/x509/parse.js';
import type { CertificateInfo } from '../../../core/pki/x509/model.js';
import { extensionTexts, openssl, renderExtensions, type OpenSsl } from '../../helpers/openssl.js';

const KEY_SPECS = ['rsa:2048', 'rsa:3072', 'rsa:4096', 'ec:P-256', 'ec:P-384', 'ec:P-521', 'ed25519'] as const;
const EXPECTED_KEY_TYPE: Record<string, string> = {
  'rsa:2048': 'rsa-2048',
  'rsa:3072': 'rsa-3072',
  'rsa:4096': 'rsa-4096',
  'ec:P-256': 'ec-secp256r1',
  'ec:P-384': 'ec-secp384r1',
  'ec:P-521': 'ec-secp521r1',
  ed25519: 'ed-25519',
};

const CONFIG = `
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE, pathlen:1
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
nameConstraints = critical, permitted;DNS:example.com, permitted;IP:10.0.0.0/255.0.0.0, permitted;IP:2001:db8::/ffff:ffff::, excluded;DNS:bad.example.com, excluded;email:.example.org
certificatePolicies = 2.5.29.32.0
[leaf]
subjectAltName = @alt
keyUsage = critical, digitalSignature, keyEncipherment, nonRepudiation
extendedKeyUsage = serverAuth, clientAuth, codeSigning, emailProtection, timeStamping, OCSPSigning, 1.2.3.4.5
basicConstraints = critical, CA:FALSE
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
crlDistributionPoints = URI:http://crl.example.com/ca.crl, URI:ldap://ldap.example.com/cn=ca?certificateRevocationList
authorityInfoAccess = OCSP;URI:http://ocsp.example.com/, caIssuers;URI:http://ca.example.com/ca.crt
certificatePolicies = 2.23.140.1.2.1, @policy
[policy]
policyIdentifier = 1.3.6.1.4.1.99999.1.2
CPS.1 = https://cps.example.com/
userNotice.1 = @notice
[notice]
explicitText = "Relying parties read the CPS"
[alt]
DNS.1 = host.example.com
DNS.2 = *.wild.example.com
IP.1 = 10.1.2.3
IP.2 = 2001:db8::42
IP.3 = fe80::1:0:0:1
email.1 = holder@example.com
URI.1 = https://example.com/path?q=1&r=%20
otherName.1 = 1.3.6.1.4.1.311.20.2.3;UTF8:holder@corp.example.com
otherName.2 = 1.2.3.4;UTF8:custom value
RID.1 = 1.2.3.4.5.6
dirName.1 = dir
[dir]
CN = Directory Name
O = Org, Inc.
`;

/** Each subject exercises escaping, non-ASCII text and attribute names. */
const SUBJECTS = [
  '/C=FR/ST=Île-de-France/L=Paris/O=Certwright, Inc./OU=PKI/OU=Ops/CN=host.example.com',
  '/C=DE/O=Müller & Söhne "GmbH"/CN=weird+name;<x>\\=y',
  '/DC=com/DC=example/UID=jdoe/CN=John Doe/emailAddress=jdoe@example.com/serialNumber=12345',
  '/O=日本語の組織/CN=# leading hash',
  '/C=US/O=Org/CN=multi valued+OU=Unit',
];

/** `openssl x509` one-line fields of a certificate file. */
function opensslFields(ssl: OpenSsl, file: string) {
  const field = (args: string[], re: RegExp): string => re.exec(ssl.run(['x509', '-in', file, '-noout', ...args]))?.[1] ?? '';
  const text = ssl.run(['x509', '-in', file, '-noout', '-text']);
  const curve = /NIST CURVE: (\S+)|ASN1 OID: (\S+)/.exec(text);
  return {
    subject: field(['-subject', '-nameopt', 'RFC2253,-esc_msb'], /^subject=(.*)$/m),
    issuer: field(['-issuer', '-nameopt', 'RFC2253,-esc_msb'], /^issuer=(.*)$/m),
    serial: field(['-serial'], /^serial=(.*)$/m).toLowerCase(),
    notBefore: Date.parse(field(['-startdate', '-dateopt', 'iso_8601'], /^notBefore=(.*)$/m).replace(' ', 'T')),
    notAfter: Date.parse(field(['-enddate', '-dateopt', 'iso_8601'], /^notAfter=(.*)$/m).replace(' ', 'T')),
    sha1: field(['-fingerprint', '-sha1'], /Fingerprint=(.*)$/m).replace(/:/g, '').toLowerCase(),
    sha256: field(['-fingerprint', '-sha256'], /Fingerprint=(.*)$/m).replace(/:/g, '').toLowerCase(),
    publicKeyThumbprint: ssl.shell(`openssl x509 -in ${file} -pubkey -noout | openssl pkey -pubin -outform DER | sha256sum`).split(' ')[0],
    signingAlgorithm: /Signature Algorithm: (\S+)/.exec(text)?.[1],
    keyBits: /Public-Key: \((\d+) bit\)/.exec(text)?.[1],
    keyAlgorithm: /Public Key Algorithm: (\S+)/.exec(text)?.[1],
    curve: curve?.[1] ?? curve?.[2],
    extensions: extensionTexts(
      ssl.run(['x509', '-in', file, '-noout', '-ext', 'subjectAltName,keyUsage,extendedKeyUsage,basicConstraints,subjectKeyIdentifier,authorityKeyIdentifier,crlDistributionPoints,authorityInfoAccess,certificatePolicies,nameConstraints']),
    ),
  };
}

/** openssl prints the AVAs of a multi-valued RDN in reverse order of the DER SET; compare RDNs as sets. */
const rdnSets = (dn: string): string => dn.split(/(?<!\\),/).map((rdn) => rdn.split(/(?<!\\)\+/).sort().join('+')).join(',');

const KEY_NAMES: Record<string, string> = { prime256v1: 'secp256r1', 'P-256': 'secp256r1', secp384r1: 'secp384r1', 'P-384': 'secp384r1', secp521r1: 'secp521r1', 'P-521': 'secp521r1' };
function keyTypeFromOpenssl(f: ReturnType<typeof opensslFields>): string {
  if (f.keyAlgorithm === 'rsaEncryption') return `rsa-${f.keyBits}`;
  if (f.keyAlgorithm === 'id-ecPublicKey') return `ec-${KEY_NAMES[f.curve ?? ''] ?? f.curve}`;
  if (f.keyAlgorithm === 'ED25519') return 'ed-25519';
  return String(f.keyAlgorithm);
}

function compareWithOpenssl(t: Test, ssl: OpenSsl, file: string, info: CertificateInfo, label: string): void {
  const f = opensslFields(ssl, file);
  t.equal(rdnSets(info.dn), rdnSets(f.subject), `${label}: subject`);
  t.equal(rdnSets(info.issuer), rdnSets(f.issuer), `${label}: issuer`);
  t.equal(info.serial, f.serial, `${label}: serial`);
  t.equal(info.notBefore, f.notBefore, `${label}: notBefore`);
  t.equal(info.notAfter, f.notAfter, `${label}: notAfter`);
  t.equal(info.thumbprint, f.sha1, `${label}: SHA-1 thumbprint`);
  t.equal(info.thumbprints.sha256, f.sha256, `${label}: SHA-256 thumbprint`);
  t.equal(info.publicKeyThumbprint, f.publicKeyThumbprint, `${label}: public key thumbprint`);
  t.equal(info.signingAlgorithm, f.signingAlgorithm, `${label}: signature algorithm`);
  t.equal(info.keyType, keyTypeFromOpenssl(f), `${label}: key type`);
  const ours = renderExtensions(info.extensions, info.subjectAlternateNames);
  const policies = f.extensions['X509v3 Certificate Policies'];
  // User notices are not decoded: compare the Policy and CPS lines.
  if (policies) policies.text = policies.text.split('\n').filter((l) => /^(Policy: |  CPS: )/.test(l)).join('\n');
  t.same(ours, f.extensions, `${label}: extensions as openssl prints them`);
}

t.test('certificates made by openssl decode to what openssl prints', async (t) => {
  const ssl = openssl(t);
  ssl.write('openssl.cnf', CONFIG);
  ssl.key('ca.key', 'ec:P-384');
  ssl.run(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/C=FR/O=Certwright Test/CN=Test Root CA', '-config', 'openssl.cnf', '-extensions', 'ca', '-days', '3650', '-utf8', '-out', 'ca.pem']);
  const ca = parseCertificatePem(ssl.read('ca.pem').toString());
  compareWithOpenssl(t, ssl, 'ca.pem', ca, 'root CA');
  t.equal(ca.selfSigned, true, 'the root is self-signed');
  t.same(ca.extensions.basicConstraints, { critical: true, ca: true, pathLength: 1 }, 'CA basic constraints');
  t.same(
    ca.extensions.nameConstraints?.permitted.map((n) => n.value),
    ['example.com', '10.0.0.0/8', '2001:db8::/32'],
    'permitted subtrees (IP ranges as CIDR)',
  );

  for (const [i, spec] of KEY_SPECS.entries()) {
    const name = spec.replace(':', '-');
    ssl.key(`${name}.key`, spec);
    ssl.run(['req', '-new', '-key', `${name}.key`, '-subj', SUBJECTS[i % SUBJECTS.length]!, '-multivalue-rdn', '-utf8', '-config', 'openssl.cnf', '-out', `${name}.csr`]);
    // Serials: one with the top bit set (DER adds a sign byte), one tiny, the rest 20 bytes.
    const serial = i === 0 ? '0x80a1b2c3d4e5f60718293a4b5c6d7e8f' : i === 1 ? '0x01' : `0x${createHash('sha1').update(spec).digest('hex').replace(/^./, '5')}`;
    // One certificate valid past 2049 (GeneralizedTime).
    const days = i === 2 ? '12000' : String(30 + i);
    ssl.run(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', serial, '-days', days, '-extfile', 'openssl.cnf', '-extensions', 'leaf', '-out', `${name}.pem`]);
    const info = parseCertificate(ssl.der(`${name}.pem`));
    compareWithOpenssl(t, ssl, `${name}.pem`, info, spec);
    t.equal(info.keyType, EXPECTED_KEY_TYPE[spec], `${spec}: keyType name`);
    t.equal(info.selfSigned, false, `${spec}: issued by the CA, not self-signed`);
    t.equal(info.version, 3, `${spec}: v3`);
    t.equal(info.pem, ssl.read(`${name}.pem`).toString(), `${spec}: pem is the certificate, as openssl writes it`);
  }
});

t.test('SAN, subject elements and extension values as a CLM user reads them', async (t) => {
  const ssl = openssl(t);
  ssl.write('openssl.cnf', CONFIG);
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', SUBJECTS[0]!, '-utf8', '-config', 'openssl.cnf', '-extensions', 'leaf', '-days', '10', '-out', 'c.pem']);
  const info = parseCertificatePem(ssl.read('c.pem'));
  t.same(info.subjectAlternateNames, [
    { sanType: 'DNSNAME', value: 'host.example.com' },
    { sanType: 'DNSNAME', value: '*.wild.example.com' },
    { sanType: 'IPADDRESS', value: '10.1.2.3' },
    { sanType: 'IPADDRESS', value: '2001:db8::42' },
    { sanType: 'IPADDRESS', value: 'fe80::1:0:0:1' },
    { sanType: 'RFC822NAME', value: 'holder@example.com' },
    { sanType: 'URI', value: 'https://example.com/path?q=1&r=%20' },
    { sanType: 'OTHERNAME_UPN', value: 'holder@corp.example.com' },
    { sanType: 'OTHERNAME', value: '1.2.3.4:custom value' },
    { sanType: 'REGISTERED_ID', value: '1.2.3.4.5.6' },
    { sanType: 'DIRECTORYNAME', value: 'O=Org\\, Inc.,CN=Directory Name' },
  ]);
  t.same(
    info.dnElements.map((e) => [e.element, e.value]),
    [
      ['c.1', 'FR'],
      ['st.1', 'Île-de-France'],
      ['l.1', 'Paris'],
      ['o.1', 'Certwright, Inc.'],
      ['ou.1', 'PKI'],
      ['ou.2', 'Ops'],
      ['cn.1', 'host.example.com'],
    ],
    'dnElements in certificate order, numbered per attribute',
  );
  t.same(info.extensions.keyUsage, { critical: true, usages: ['digitalSignature', 'nonRepudiation', 'keyEncipherment'] });
  t.same(info.extensions.extendedKeyUsage?.usages, ['serverAuth', 'clientAuth', 'codeSigning', 'emailProtection', 'timeStamping', 'OCSPSigning', '1.2.3.4.5']);
  t.same(info.extensions.authorityInfoAccess, { ocsp: ['http://ocsp.example.com/'], caIssuers: ['http://ca.example.com/ca.crt'] });
  t.same(info.extensions.certificatePolicies, [{ oid: '2.23.140.1.2.1' }, { oid: '1.3.6.1.4.1.99999.1.2', cps: ['https://cps.example.com/'] }]);
  t.equal(info.selfSigned, true, 'self-signed: same name, signature verifies with its own key');
  t.match(info.serial, /^[0-9a-f]+$/, 'serial is lower-case hex');
});

t.test('signature schemes: RSA-PSS and Ed25519 self-signed certificates verify; a foreign signature does not', async (t) => {
  const ssl = openssl(t);
  ssl.run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'pss.key', '-subj', '/CN=pss', '-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:32', '-sha384', '-days', '5', '-out', 'pss.pem']);
  const pss = parseCertificatePem(ssl.read('pss.pem'));
  t.equal(pss.signingAlgorithm, 'rsassaPss');
  t.equal(pss.selfSigned, true, 'RSA-PSS (SHA-384, salt 32) verifies');
  ssl.run(['req', '-x509', '-newkey', 'ed25519', '-nodes', '-keyout', 'ed.key', '-subj', '/CN=ed', '-days', '5', '-out', 'ed.pem']);
  const ed = parseCertificatePem(ssl.read('ed.pem'));
  t.equal(ed.signingAlgorithm, 'ED25519');
  t.equal(ed.keyType, 'ed-25519');
  t.equal(ed.selfSigned, true);
  // Same subject and issuer, but signed by another key: not self-signed.
  ssl.run(['req', '-new', '-key', 'ed.key', '-subj', '/CN=same', '-out', 'same.csr']);
  ssl.run(['req', '-x509', '-newkey', 'ed25519', '-nodes', '-keyout', 'other.key', '-subj', '/CN=same', '-days', '5', '-out', 'other.pem']);
  ssl.run(['x509', '-req', '-in', 'same.csr', '-CA', 'other.pem', '-CAkey', 'other.key', '-days', '5', '-out', 'forged.pem']);
  const forged = parseCertificatePem(ssl.read('forged.pem'));
  t.equal(forged.dn, forged.issuer, 'subject equals issuer');
  t.equal(forged.selfSigned, false, 'but the signature is not its own');
});

t.test('input forms: PEM, percent-encoded PEM, base64, DER, TRUSTED CERTIFICATE', async (t) => {
  const ssl = openssl(t);
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', '/CN=forms', '-days', '5', '-out', 'c.pem']);
  const pem = ssl.read('c.pem').toString();
  const der = ssl.der('c.pem');
  const expected = parseCertificate(der).thumbprint;
  t.equal(parseCertificatePem(pem).thumbprint, expected, 'PEM');
  t.equal(parseCertificatePem(encodeURIComponent(pem)).thumbprint, expected, 'percent-encoded PEM');
  t.equal(parseCertificatePem(pem.replace(/\n/g, '\\n')).thumbprint, expected, 'PEM with literal \\n escapes');
  t.equal(parseCertificatePem(der.toString('base64')).thumbprint, expected, 'bare base64');
  t.equal(parseCertificatePem(der).thumbprint, expected, 'DER bytes');
  t.equal(parseCertificatePem(Buffer.from(pem)).thumbprint, expected, 'PEM bytes');
  ssl.run(['x509', '-in', 'c.pem', '-trustout', '-addtrust', 'serverAuth', '-out', 'trusted.pem']);
  t.match(ssl.read('trusted.pem').toString(), /BEGIN TRUSTED CERTIFICATE/);
  t.equal(parseCertificatePem(ssl.read('trusted.pem').toString()).thumbprint, expected, 'TRUSTED CERTIFICATE: the certificate without its trust settings');
});

/** Expects a ProblemError with this code from `fn`. */
function problem(t: Test, fn: () => unknown, code: string, what: string): void {
  try {
    fn();
    t.fail(`${what}: decoded instead of failing`);
  } catch (err) {
    t.ok(err instanceof ProblemError, `${what}: a ProblemError`);
    t.equal((err as ProblemError).code, code, `${what}: ${code} (${(err as ProblemError).detail ?? ''})`);
  }
}

t.test('bad input: a specific PKI problem, never another exception', async (t) => {
  const ssl = openssl(t);
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', '/CN=bad', '-days', '5', '-out', 'c.pem']);
  const der = ssl.der('c.pem');
  ssl.run(['req', '-new', '-key', 'k.pem', '-subj', '/CN=csr', '-out', 'r.csr']);
  ssl.write('crl.cnf', '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\ndefault_md=sha256\ndefault_crl_days=1\n');
  ssl.write('index.txt', '');
  ssl.run(['ca', '-gencrl', '-config', 'crl.cnf', '-keyfile', 'k.pem', '-cert', 'c.pem', '-out', 'crl.pem']);

  problem(t, () => parseCertificatePem('hello world'), 'PKI-001', 'text that is neither PEM nor base64');
  problem(t, () => parseCertificate(der.subarray(0, der.length - 10)), 'PKI-001', 'truncated DER');
  problem(t, () => parseCertificate(Buffer.concat([der, Buffer.from([0, 0])])), 'PKI-001', 'bytes after the certificate');
  problem(t, () => parseCertificatePem(ssl.read('crl.pem').toString()), 'PKI-002', 'a CRL in PEM');
  problem(t, () => parseCertificate(ssl.der('crl.pem', 'crl')), 'PKI-002', 'a CRL in DER');
  problem(t, () => parseCertificate(ssl.der('r.csr', 'req')), 'PKI-002', 'a CSR in DER');
  problem(t, () => parseCertificate(Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x30, 0x00])), 'PKI-004', 'a length claiming 2 GiB');
  const deep = Buffer.alloc(4000);
  for (let i = 0; i < 2000; i++) deep.set([0x30, 0x80], 2 * i);
  problem(t, () => parseCertificate(deep), 'PKI-001', 'indefinite lengths (BER, not DER)');
  // Definite lengths, 3000 levels deep.
  let nested: Uint8Array = Buffer.from([0x05, 0x00]);
  for (let i = 0; i < 3000; i++) nested = seq(nested);
  const started = performance.now();
  problem(t, () => parseCertificate(nested), 'PKI-005', '3000 nested SEQUENCEs');
  t.ok(performance.now() - started < 1000, 'refused in bounded time');
  const pemOfCsr = ssl.read('r.csr').toString();
  problem(t, () => parseCertificatePem(pemOfCsr), 'PKI-002', 'a CSR in PEM');
  problem(t, () => parseCertificatePem('-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----'), 'PKI-001', 'PEM with a non-base64 body');
});

t.test('a malformed extension is flagged, the rest of the certificate still decodes', async (t) => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer = signerFor(privateKey);
  const name = seq(setOf(seq(oid('2.5.4.3'), utf8String('odd'))));
  const garbageKu = seq(oid('2.5.29.15'), octets(Uint8Array.of(0x04, 0x01)));
  const tbs = seq(explicit(0, smallInt(2)), unsignedInt(Uint8Array.of(7)), signer.algorithm, name, seq(time(Date.UTC(2025, 0, 1)), time(Date.UTC(2026, 0, 1))), name, signer.spki, explicit(3, seq(garbageKu)));
  const info = parseCertificate(seq(tbs, signer.algorithm, bitString(signer.sign(tbs))));
  t.same(info.extensions.all, [{ oid: '2.5.29.15', critical: false, malformed: true }]);
  t.equal(info.extensions.keyUsage, undefined);
  t.equal(info.dn, 'CN=odd');
  t.equal(info.selfSigned, true);
  t.equal(info.serial, '07');
});

t.test('fuzz: random and mutated bytes end in a PKI problem or a decode, nothing else', async (t) => {
  const ssl = openssl(t);
  ssl.write('openssl.cnf', CONFIG);
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', '/CN=fuzz', '-config', 'openssl.cnf', '-extensions', 'leaf', '-days', '5', '-out', 'c.pem']);
  const der = ssl.der('c.pem');
  const acceptable = (fn: () => unknown): boolean => {
    try {
      fn();
      return true;
    } catch (err) {
      return err instanceof ProblemError && /^PKI-00\d$/.test(err.code);
    }
  };
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => acceptable(() => parseCertificate(bytes))), { numRuns: 2000 });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(der.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.nat(der.length), (edits, cut) => {
      const copy = Buffer.from(der.subarray(0, Math.max(cut, der.length - 40)));
      for (const [at, v] of edits) if (at < copy.length) copy[at] = v;
      return acceptable(() => parseCertificate(copy));
    }),
    { numRuns: 3000 },
  );
  t.pass('no other exception in 5000 runs');
  t.equal(parseCertificate(der).pem, toPem(der), 'the unmodified certificate still decodes');
});

t.test('a v1 certificate (no version field, no extensions) decodes as openssl reads it', async (t) => {
  const ssl = openssl(t);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signer = signerFor(privateKey);
  const name = seq(setOf(seq(oid('2.5.4.6'), Buffer.from('1302555a', 'hex'))), setOf(seq(oid('2.5.4.3'), utf8String('legacy v1'))));
  const tbs = seq(unsignedInt(Uint8Array.of(0x01, 0x00)), signer.algorithm, name, seq(time(Date.UTC(2024, 1, 29)), time(Date.UTC(2034, 1, 28))), name, signer.spki);
  const der = seq(tbs, signer.algorithm, bitString(signer.sign(tbs)));
  ssl.write('v1.pem', toPem(der));
  t.match(ssl.run(['x509', '-in', 'v1.pem', '-noout', '-text']), /Version: 1 \(0x0\)/, 'openssl reads a v1 certificate');
  const info = parseCertificate(der);
  compareWithOpenssl(t, ssl, 'v1.pem', info, 'v1');
  t.match(info, { version: 1, dn: 'CN=legacy v1,C=UZ', serial: '0100', selfSigned: true, subjectAlternateNames: [], extensions: { all: [] } });
});
