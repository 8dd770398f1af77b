import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as pkijs from 'pkijs';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { toPem } from '../../../core/pki/input.js';
import { CertificateIssuer } from '../../../core/pki/issue/issuer.js';
import { ipBytes } from '../../../core/pki/issue/names.js';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import type { CertificateTemplate } from '../../../core/pki/issue/template.js';
import { parseCertificate } from '../../../core/pki/x509/parse.js';
import { parseCsr } from '../../../core/pki/csr/parse.js';
import type { CertificateInfo, SubjectAlternateName } from '../../../core/pki/x509/model.js';
import { extensionTexts, openssl, renderExtensions, type OpenSsl } from '../../helpers/openssl.js';

const hex = (b: ArrayBuffer | Uint8Array): string => Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');
const KU_BITS = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly', 'decipherOnly'];

/** The fields a user compares, as pkijs reads them from the DER. */
function pkijsView(der: Uint8Array) {
  const c = pkijs.Certificate.fromBER(der);
  const ext = (id: string) => c.extensions?.find((e) => e.extnID === id);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const parsed = (id: string): any => ext(id)?.parsedValue;
  const ku = parsed('2.5.29.15');
  const kuBytes = ku ? new Uint8Array(ku.valueBlock.valueHexView) : new Uint8Array();
  const bc = parsed('2.5.29.19');
  return {
    subject: c.subject.typesAndValues.map((tv) => `${tv.type}=${(tv.value as { valueBlock: { value: string } }).valueBlock.value}`),
    issuer: c.issuer.typesAndValues.map((tv) => `${tv.type}=${(tv.value as { valueBlock: { value: string } }).valueBlock.value}`),
    serial: hex(c.serialNumber.valueBlock.valueHexView).replace(/^00(?=[89a-f])/, ''),
    notBefore: c.notBefore.value.getTime(),
    notAfter: c.notAfter.value.getTime(),
    keyUsage: KU_BITS.filter((_, i) => (kuBytes[i >> 3] ?? 0) & (0x80 >> (i & 7))),
    extendedKeyUsage: parsed('2.5.29.37')?.keyPurposes ?? [],
    basicConstraints: bc ? { ca: Boolean(bc.cA), pathLength: typeof bc.pathLenConstraint === 'number' ? bc.pathLenConstraint : undefined } : undefined,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    sans: (parsed('2.5.29.17')?.altNames ?? []).map((n: any) => (n.type === 7 ? `7:${hex(n.value.valueBlock.valueHexView)}` : n.type === 0 || n.type === 4 ? `${n.type}` : `${n.type}:${n.value}`)),
    ski: parsed('2.5.29.14') ? hex(parsed('2.5.29.14').valueBlock.valueHexView) : undefined,
    aki: parsed('2.5.29.35') ? hex(parsed('2.5.29.35').keyIdentifier.valueBlock.valueHexView) : undefined,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    cdp: (parsed('2.5.29.31')?.distributionPoints ?? []).flatMap((d: any) => d.distributionPoint.map((n: any) => n.value)),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    aia: (parsed('1.3.6.1.5.5.7.1.1')?.accessDescriptions ?? []).map((a: any) => `${a.accessMethod} ${a.accessLocation.value}`),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    policies: (parsed('2.5.29.32')?.certificatePolicies ?? []).map((p: any) => p.policyIdentifier),
  };
}

const SAN_TAG: Record<string, number> = { RFC822NAME: 1, DNSNAME: 2, URI: 6, IPADDRESS: 7, REGISTERED_ID: 8, OTHERNAME_UPN: 0, OTHERNAME_GUID: 0, DIRECTORYNAME: 4 };
const EKU_OID: Record<string, string> = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' };

/** The same fields from our own decoder, shaped like pkijsView. */
function ourView(info: CertificateInfo, elements = info.dnElements, issuerElements = info.issuerElements) {
  const oidOf: Record<string, string> = { CN: '2.5.4.3', O: '2.5.4.10', OU: '2.5.4.11', C: '2.5.4.6', L: '2.5.4.7', ST: '2.5.4.8', EMAILADDRESS: '1.2.840.113549.1.9.1', SERIALNUMBER: '2.5.4.5', DC: '0.9.2342.19200300.100.1.25' };
  const aia = info.extensions.authorityInfoAccess;
  return {
    subject: elements.map((e) => `${oidOf[e.type.toUpperCase()] ?? e.type}=${e.value}`),
    issuer: issuerElements.map((e) => `${oidOf[e.type.toUpperCase()] ?? e.type}=${e.value}`),
    serial: info.serial,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    keyUsage: info.extensions.keyUsage?.usages ?? [],
    extendedKeyUsage: (info.extensions.extendedKeyUsage?.usages ?? []).map((u) => EKU_OID[u] ?? u),
    basicConstraints: info.extensions.basicConstraints ? { ca: info.extensions.basicConstraints.ca, pathLength: info.extensions.basicConstraints.pathLength } : undefined,
    sans: info.subjectAlternateNames.map((s: SubjectAlternateName) =>
      s.sanType === 'IPADDRESS' ? `7:${hex(ipBytes(s.value))}` : SAN_TAG[s.sanType] === 0 || SAN_TAG[s.sanType] === 4 ? `${SAN_TAG[s.sanType]}` : `${SAN_TAG[s.sanType]}:${s.value}`,
    ),
    ski: info.extensions.subjectKeyIdentifier,
    aki: info.extensions.authorityKeyIdentifier?.keyIdentifier,
    cdp: info.extensions.crlDistributionPoints ?? [],
    aia: aia ? [...aia.ocsp.map((u) => `1.3.6.1.5.5.7.48.1 ${u}`), ...aia.caIssuers.map((u) => `1.3.6.1.5.5.7.48.2 ${u}`)] : [],
    policies: (info.extensions.certificatePolicies ?? []).map((p) => p.oid),
  };
}

const CSR_CONFIG = `
[req]
distinguished_name = dn
req_extensions = ext
prompt = no
utf8 = yes
string_mask = utf8only
[dn]
C = FR
O = Certwright
CN = leaf.example.com
[ext]
subjectAltName = DNS:leaf.example.com, DNS:*.leaf.example.com, IP:192.0.2.10, IP:2001:db8::10, email:leaf@example.com, URI:https://leaf.example.com/, otherName:1.3.6.1.4.1.311.20.2.3;UTF8:leaf@corp.example.com
`;

const CAS = [
  { name: 'RSA-3072 CA', key: ['-newkey', 'rsa:3072'], leaf: 'ec:P-256', signingAlgorithm: 'sha256WithRSAEncryption' },
  { name: 'P-256 CA', key: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], leaf: 'rsa:2048', signingAlgorithm: 'ecdsa-with-SHA256' },
  { name: 'P-384 CA', key: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'], leaf: 'ed25519', signingAlgorithm: 'ecdsa-with-SHA384' },
  { name: 'Ed25519 CA', key: ['-newkey', 'ed25519'], leaf: 'ec:P-384', signingAlgorithm: 'ED25519' },
];

const TEMPLATE: CertificateTemplate = {
  notBefore: Date.UTC(2025, 0, 1, 12, 0, 0, 789),
  notAfter: Date.UTC(2055, 5, 30, 23, 59, 59),
  keyUsage: ['digitalSignature', 'keyEncipherment'],
  extendedKeyUsage: ['serverAuth', 'clientAuth'],
  crlDistributionPoints: ['http://crl.example.com/ca.crl'],
  ocsp: ['http://ocsp.example.com/'],
  caIssuers: ['http://ca.example.com/ca.crt'],
  policies: ['2.23.140.1.2.1'],
};

/** `openssl verify -x509_strict` of a leaf against a CA file: "OK" or openssl's complaint. */
function verify(ssl: OpenSsl, ca: string, leaf: string): string {
  try {
    return ssl.run(['verify', '-x509_strict', '-CAfile', ca, leaf]).trim();
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}

function checkIssued(t: Test, ssl: OpenSsl, caFile: string, der: Uint8Array, label: string): CertificateInfo {
  ssl.write(`${label}.pem`, toPem(der));
  t.equal(verify(ssl, caFile, `${label}.pem`), `${label}.pem: OK`, `${label}: openssl verify -x509_strict -CAfile accepts it`);
  const info = parseCertificate(der);
  t.same(ourView(info), pkijsView(der), `${label}: subject, serial, validity and extensions equal what pkijs parses`);
  const printed = extensionTexts(ssl.run(['x509', '-in', `${label}.pem`, '-noout', '-ext', 'subjectAltName,keyUsage,extendedKeyUsage,basicConstraints,subjectKeyIdentifier,authorityKeyIdentifier,crlDistributionPoints,authorityInfoAccess,certificatePolicies']));
  t.same(renderExtensions(info.extensions, info.subjectAlternateNames), printed, `${label}: extensions as openssl prints them`);
  return info;
}

t.test('certificates issued from openssl CSRs verify with openssl and parse back equal', async (t) => {
  const ssl = openssl(t);
  ssl.write('csr.cnf', CSR_CONFIG);
  for (const [i, ca] of CAS.entries()) {
    const caFile = `ca${i}.pem`;
    ssl.run(['req', '-x509', ...ca.key, '-nodes', '-keyout', `ca${i}.key`, '-subj', `/C=FR/O=Certwright/CN=${ca.name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-days', '3650', '-out', caFile]);
    const caKey: KeyObject = createPrivateKey(ssl.read(`ca${i}.key`));
    const issuer = new CertificateIssuer({ caCertificateDer: ssl.der(caFile), caKey });
    t.equal(issuer.signatureAlgorithm, ca.signingAlgorithm, `${ca.name}: signs with ${ca.signingAlgorithm}`);

    const [alg, param] = ca.leaf.split(':');
    const keyArgs = alg === 'rsa' ? ['-newkey', `rsa:${param}`] : alg === 'ec' ? ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${param}`] : ['-newkey', 'ed25519'];
    ssl.run(['req', '-new', ...keyArgs, '-nodes', '-keyout', `leaf${i}.key`, '-config', 'csr.cnf', '-out', `leaf${i}.csr`]);
    const csrDer = ssl.der(`leaf${i}.csr`, 'req');
    const csr = parseCsr(csrDer);
    const der = issuer.issue(csrDer, TEMPLATE);
    const info = checkIssued(t, ssl, caFile, der, `leaf${i}`);
    const caInfo = parseCertificate(ssl.der(caFile));
    t.equal(info.dn, csr.dn, `${ca.name}: subject from the CSR`);
    t.same(info.subjectAlternateNames, csr.sans, `${ca.name}: SANs from the CSR`);
    t.equal(info.issuer, caInfo.dn, `${ca.name}: issuer is the CA subject`);
    t.equal(info.publicKeyThumbprint, csr.publicKeyThumbprint, `${ca.name}: the CSR's key is certified`);
    t.equal(info.notBefore, Date.UTC(2025, 0, 1, 12, 0, 0), 'notBefore in whole seconds');
    t.equal(info.notAfter, Date.UTC(2055, 5, 30, 23, 59, 59), 'notAfter past 2049 (GeneralizedTime)');
    t.equal(info.signingAlgorithm, ca.signingAlgorithm);
    t.same(info.extensions.basicConstraints, { critical: true, ca: false });
    t.equal(info.extensions.authorityKeyIdentifier?.keyIdentifier, caInfo.extensions.subjectKeyIdentifier, 'AKI is the CA SKI');
    t.match(info.serial, /^(0[1-9a-f]|[1-7][0-9a-f])[0-9a-f]{30}$/, 'serial: 16 random bytes, positive, no sign byte needed');
    t.equal(info.selfSigned, false);
  }
});

t.test('a root made here issues to a template subject and SANs; serials are unique', async (t) => {
  const ssl = openssl(t);
  const root = generateKeyPairSync('ec', { namedCurve: 'P-521' });
  const rootDer = selfSignedCertificate(root.privateKey, { subject: 'CN=Certwright Root,O=Certwright,C=FR', validityDays: 3650, basicConstraints: { ca: true, pathLength: 0 } });
  ssl.write('root.pem', toPem(rootDer));
  t.equal(verify(ssl, 'root.pem', 'root.pem'), 'root.pem: OK', 'the self-signed root verifies against itself');
  const rootInfo = parseCertificate(rootDer);
  t.match(rootInfo, { selfSigned: true, dn: 'CN=Certwright Root,O=Certwright,C=FR', keyType: 'ec-secp521r1', signingAlgorithm: 'ecdsa-with-SHA512' });
  t.same(rootInfo.extensions.basicConstraints, { critical: true, ca: true, pathLength: 0 });
  t.same(rootInfo.extensions.keyUsage?.usages, ['digitalSignature', 'keyCertSign', 'cRLSign']);

  const issuer = new CertificateIssuer({ caCertificateDer: rootDer, caKey: root.privateKey });
  ssl.write('csr.cnf', CSR_CONFIG);
  ssl.run(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-config', 'csr.cnf', '-out', 'leaf.csr']);
  const csrDer = ssl.der('leaf.csr', 'req');
  const sans: SubjectAlternateName[] = [
    { sanType: 'DNSNAME', value: 'api.example.com' },
    { sanType: 'DNSNAME', value: 'bücher.example' },
    { sanType: 'IPADDRESS', value: '198.51.100.1' },
    { sanType: 'IPADDRESS', value: '2001:db8:0:1::1' },
    { sanType: 'IPADDRESS', value: '::ffff:192.0.2.1' },
    { sanType: 'RFC822NAME', value: 'ops@example.com' },
    { sanType: 'URI', value: 'spiffe://example.com/ns/prod/sa/api' },
    { sanType: 'OTHERNAME_UPN', value: 'api@corp.example.com' },
    { sanType: 'REGISTERED_ID', value: '1.3.6.1.4.1.99999.7' },
    { sanType: 'DIRECTORYNAME', value: 'CN=Dir\\, Name,O=Org' },
  ];
  const der = issuer.issue(csrDer, {
    subject: [
      { type: 'C', value: 'FR' },
      { type: 'o.1', value: 'Certwright, Inc.' },
      { type: 'OU', value: 'Équipe' },
      { type: 'cn', value: 'api.example.com' },
      { type: 'emailAddress', value: 'ops@example.com' },
    ],
    sans,
    validityDays: 90,
    extendedKeyUsage: ['serverAuth'],
  });
  const info = checkIssued(t, ssl, 'root.pem', der, 'templated');
  t.equal(info.dn, 'emailAddress=ops@example.com,CN=api.example.com,OU=Équipe,O=Certwright\\, Inc.,C=FR', 'subject from the template');
  t.same(
    info.subjectAlternateNames,
    sans.map((s) => (s.value === 'bücher.example' ? { ...s, value: 'xn--bcher-kva.example' } : s.value === '::ffff:192.0.2.1' ? { ...s, value: '::ffff:c000:201' } : s)),
    'SANs from the template (IDN as its A-label)',
  );
  t.equal(info.notAfter - info.notBefore, 90 * 86_400_000, '90 days');
  t.same(info.extensions.keyUsage?.usages, ['digitalSignature', 'keyEncipherment'], 'RSA leaf default key usage');
  const subjectOnly = parseCertificate(issuer.issue(csrDer, { subject: 'CN=a\\+b,O=x+OU=y', sans: [] }));
  // A multi-valued RDN prints its values last first, as openssl's RFC 2253 output does.
  t.equal(subjectOnly.dn, 'CN=a\\+b,OU=y+O=x', 'an RFC 4514 subject, with an escape and a multi-valued RDN');
  t.same(subjectOnly.subjectAlternateNames, [], 'an empty SAN list issues none');

  const guid = parseCertificate(issuer.issueForKey(root.publicKey.export({ type: 'spki', format: 'der' }), { subject: 'CN=guid', sans: [{ sanType: 'OTHERNAME_GUID', value: '{6F9619FF-8B86-D011-B42D-00C04FC964FF}' }] }));
  t.same(guid.subjectAlternateNames, [{ sanType: 'OTHERNAME_GUID', value: '6f9619ff8b86d011b42d00c04fc964ff' }], 'otherName GUID round trip (issued for a bare key)');

  const serials = new Set<string>();
  for (let i = 0; i < 300; i++) serials.add(parseCertificate(issuer.issue(csrDer)).serial);
  t.equal(serials.size, 300, '300 issuances, 300 serials');
});

t.test('issuance refuses what it must', async (t) => {
  const ssl = openssl(t);
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caDer = selfSignedCertificate(ca.privateKey, { subject: 'CN=CA' });
  const issuer = new CertificateIssuer({ caCertificateDer: caDer, caKey: ca.privateKey });
  ssl.run(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', '/CN=victim', '-out', 'r.csr']);
  const csrDer = ssl.der('r.csr', 'req');
  const tampered = Buffer.from(csrDer);
  const at = tampered.indexOf(Buffer.from('victim'));
  tampered[at] = tampered[at]! ^ 0x20;
  t.throws(() => issuer.issue(tampered), { code: 'PKI-007' }, 'a CSR not signed by its key: PKI-007');
  t.ok(parseCertificate(issuer.issue(tampered, { verifyCsrSignature: false })), 'unless the template waives the check');
  t.throws(() => issuer.issue(caDer), { code: 'PKI-002' }, 'a certificate instead of a CSR: PKI-002');
  t.throws(() => issuer.issue(csrDer.subarray(0, 50)), { code: 'PKI-001' }, 'a truncated CSR: PKI-001');
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  t.throws(() => new CertificateIssuer({ caCertificateDer: caDer, caKey: other.privateKey }), { code: 'CA-002' }, 'a key that is not the CA key: CA-002');
  const dsa = generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 });
  t.throws(() => selfSignedCertificate(dsa.privateKey, { subject: 'CN=dsa' }), { code: 'PKI-006', message: 'Unknown algorithm' }, 'a DSA key: PKI-006 Unknown algorithm');
  t.throws(() => issuer.issue(csrDer, { sans: [{ sanType: 'IPADDRESS', value: '999.1.1.1' }] }), { code: 'HTTP-003' }, 'a bad IP in the template');
  t.throws(() => issuer.issue(csrDer, { subject: [{ type: 'nope', value: 'x' }] }), { code: 'HTTP-003' }, 'an unknown attribute type');
  t.throws(() => issuer.issue(csrDer, { subject: [], sans: [] }), { code: 'HTTP-003' }, 'neither subject nor SANs');
  t.throws(() => issuer.issue(csrDer, { notBefore: 2000, notAfter: 1000 }), { code: 'HTTP-003' }, 'notAfter before notBefore');
  t.throws(() => issuer.issue(csrDer, { extendedKeyUsage: ['flying'] }), { code: 'HTTP-003' }, 'an unknown EKU');
  try {
    issuer.issue(tampered);
  } catch (err) {
    t.ok(err instanceof ProblemError, 'failures are ProblemErrors (400s at the API)');
  }
});
