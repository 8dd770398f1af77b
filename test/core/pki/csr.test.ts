import { generateKeyPairSync } from 'node:crypto';
import t, { type Test } from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { buildCsr } from '../../../core/pki/csr/build.js';
import { parseCsr, parseCsrPem } from '../../../core/pki/csr/parse.js';
import { toPem } from '../../../core/pki/input.js';
import { extensionTexts, openssl, renderExtensions, type OpenSsl } from '../../helpers/openssl.js';

const CONFIG = (cn: string) => `
[req]
distinguished_name = dn
attributes = attrs
req_extensions = ext
prompt = no
utf8 = yes
string_mask = utf8only
[dn]
C = FR
O = Certwright, Ltd
OU = Équipe PKI
CN = ${cn}
emailAddress = pki@example.com
[attrs]
challengePassword = s3cret-Challenge
unstructuredName = Unstructured Co
[ext]
subjectAltName = DNS:${cn}, DNS:www.${cn}, IP:192.0.2.7, IP:2001:db8::7, email:csr@example.com, URI:spiffe://example.com/svc, otherName:1.3.6.1.4.1.311.20.2.3;UTF8:csr@corp.example.com
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = clientAuth, serverAuth
basicConstraints = critical, CA:FALSE
`;

/** What `openssl req -text` says of a CSR: subject, attributes, requested extensions, key, signature check. */
function opensslView(ssl: OpenSsl, file: string) {
  const text = ssl.run(['req', '-in', file, '-noout', '-text']);
  const requested = text.split('Requested Extensions:')[1]?.split(/\n {4}Signature Algorithm/)[0] ?? '';
  // Dedent the extension block so extensionTexts reads it like `x509 -ext` output.
  const extensions = extensionTexts(requested.split('\n').map((l) => l.slice(16)).join('\n'));
  return {
    subject: /^subject=(.*)$/m.exec(ssl.run(['req', '-in', file, '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb']))![1],
    challengePassword: /challengePassword\s+:(.*)$/m.exec(text)?.[1],
    unstructuredName: /unstructuredName\s+:(.*)$/m.exec(text)?.[1],
    signingAlgorithm: /Signature Algorithm: (\S+)/.exec(text)?.[1],
    publicKeyThumbprint: ssl.shell(`openssl req -in ${file} -pubkey -noout | openssl pkey -pubin -outform DER | sha256sum`).split(' ')[0],
    verified: (() => {
      try {
        ssl.run(['req', '-in', file, '-noout', '-verify']);
        return true;
      } catch {
        return false;
      }
    })(),
    extensions,
  };
}

const KEYS = [
  { spec: 'rsa:2048', args: ['-newkey', 'rsa:2048'], keyType: 'rsa-2048' },
  { spec: 'ec:P-256', args: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], keyType: 'ec-secp256r1' },
  { spec: 'ec:P-384', args: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'], keyType: 'ec-secp384r1' },
  { spec: 'ec:P-521', args: ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-521'], keyType: 'ec-secp521r1' },
  { spec: 'ed25519', args: ['-newkey', 'ed25519'], keyType: 'ed-25519' },
];

t.test('CSRs made by openssl decode to what openssl prints', async (t) => {
  const ssl = openssl(t);
  for (const { spec, args, keyType } of KEYS) {
    const name = spec.replace(':', '-');
    ssl.write(`${name}.cnf`, CONFIG(`${name}.example.com`));
    ssl.run(['req', '-new', ...args, '-nodes', '-keyout', `${name}.key`, '-config', `${name}.cnf`, '-out', `${name}.csr`]);
    const csr = parseCsrPem(ssl.read(`${name}.csr`).toString());
    const view = opensslView(ssl, `${name}.csr`);
    t.equal(csr.dn, view.subject, `${spec}: dn`);
    t.equal(csr.keyType, keyType, `${spec}: keyType`);
    t.equal(csr.publicKeyThumbprint, view.publicKeyThumbprint, `${spec}: public key thumbprint`);
    t.equal(csr.signingAlgorithm, view.signingAlgorithm, `${spec}: signature algorithm`);
    t.equal(csr.signatureValid, true, `${spec}: signature verifies`);
    t.equal(view.verified, true, `${spec}: openssl agrees`);
    t.equal(csr.attributes.challengePassword, view.challengePassword, `${spec}: challengePassword`);
    t.equal(csr.attributes.unstructuredName, view.unstructuredName, `${spec}: unstructuredName`);
    t.same(renderExtensions(csr.attributes.extensionRequest!, csr.sans), view.extensions, `${spec}: requested extensions as openssl prints them`);
    t.same(csr.sans, [
      { sanType: 'DNSNAME', value: `${name}.example.com` },
      { sanType: 'DNSNAME', value: `www.${name}.example.com` },
      { sanType: 'IPADDRESS', value: '192.0.2.7' },
      { sanType: 'IPADDRESS', value: '2001:db8::7' },
      { sanType: 'RFC822NAME', value: 'csr@example.com' },
      { sanType: 'URI', value: 'spiffe://example.com/svc' },
      { sanType: 'OTHERNAME_UPN', value: 'csr@corp.example.com' },
    ], `${spec}: sans`);
    t.same(
      csr.dnElements.map((e) => e.element),
      ['c.1', 'o.1', 'ou.1', 'cn.1', 'e.1'],
      `${spec}: dnElements`,
    );
    t.equal(csr.pem, ssl.read(`${name}.csr`).toString(), `${spec}: pem`);
  }
});

t.test("the vendor's SDK test CSR (horizon-go rfc5280_test.go) decodes to the compat shape", async (t) => {
  const pem = `-----BEGIN CERTIFICATE REQUEST-----
MIICvjCCAaYCAQAweTELMAkGA1UEBhMCRlIxDjAMBgNVBAgMBVBhcmlzMQ4wDAYD
VQQHDAVQYXJpczESMBAGA1UECgwJRXZlclRydXN0MRUwEwYDVQQDDAxldmVydHJ1
c3QuZnIxHzAdBgkqhkiG9w0BCQEWEGFndUBldmVydHJ1c3QuZnIwggEiMA0GCSqG
SIb3DQEBAQUAA4IBDwAwggEKAoIBAQDnnU9tevu5RWQTC1l0/FHurwS/QBzDnIqx
1VbDwMt+sFPaI1e02nvKP6iEzDU34Ub2x/SNh/jWslmpve3yNDCjJkR9TNS9YUqi
YAdARxh452njqSO1Cb9cZYBXxSbEscEWbVCFQzjXm41vChnLqjNgNKf/X+kOTrXO
jnodSehfAW4YsZ1PYgEWGX0T1BBfccQF3wJ6HunLk8/EftzDIvQge8gi1N1KtpLm
g7SMdeVnw+G8QRdl8W3J2KnSxXGX2Ip4oeIKp0Q/ItkVJ/dPktQDtguLeWP/lAXX
OY0I8BirZFVYBspkN6oz2DVG6sSplXOKWmBL0Z5Nm+g6Im5+Aj0ZAgMBAAGgADAN
BgkqhkiG9w0BAQsFAAOCAQEAcVieL6T8Nud4S71Hx3aC8Jhel1R1dDrm842Cgj0V
rYeKubzYJVWW9Eype4Q/Ydb8tNZokFRlPjej5D04Jz7eUoT+KnBbMnGTvCaPlR9/
p15duhuN9EJ1DaEfEvPiGrc38waOejJdrGXopFtTeojyi1KVwcU8EVYdaqbtuMvz
9k8zSJ1lnLB5CyPXW/TYl1pgqFd5XyQK/AgYifYDBbqdJ97xea1nN9cnyJ4NQ62F
vTvxBgHwMuplYhU1m0/KIJbhe4RTrA74wOPGS6OOZzLghcKZfQYhF6SPTeXPmGrm
VUqN/gOTLaBgj9fvEiJJFJUga4d6K+LHFW9rMhgva4GA+Q==
-----END CERTIFICATE REQUEST-----`;
  const csr = parseCsrPem(pem);
  t.match(csr, { dn: 'emailAddress=agu@evertrust.fr,CN=evertrust.fr,O=EverTrust,L=Paris,ST=Paris,C=FR', sans: [], keyType: 'rsa-2048', signatureValid: true });
  t.same(csr.dnElements.find((e) => e.element === 'cn.1'), { element: 'cn.1', type: 'CN', value: 'evertrust.fr' });
  t.equal(csr.pem, `${pem}\n`);
});

function problem(t: Test, fn: () => unknown, code: string, what: string): void {
  t.throws(fn, { code }, `${what}: ${code}`);
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof ProblemError, `${what}: a ProblemError`);
  }
}

t.test('CSRs built here verify with openssl; tampering and wrong kinds are caught', async (t) => {
  const ssl = openssl(t);
  for (const [type, options] of [
    ['ec', { namedCurve: 'P-384' }],
    ['rsa', { modulusLength: 2048 }],
    ['ed25519', {}],
  ] as const) {
    const { privateKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
    const der = buildCsr(privateKey, {
      subject: 'CN=built.example.com,O=Certwright',
      sans: [
        { sanType: 'DNSNAME', value: 'built.example.com' },
        { sanType: 'IPADDRESS', value: '::1' },
      ],
      challengePassword: 'pw',
    });
    ssl.write(`${type}.csr`, toPem(der, 'CERTIFICATE REQUEST'));
    const view = opensslView(ssl, `${type}.csr`);
    t.equal(view.verified, true, `${type}: openssl verifies the CSR built here`);
    t.equal(view.subject, 'CN=built.example.com,O=Certwright', `${type}: subject as written`);
    t.equal(view.challengePassword, 'pw');
    t.equal(view.extensions['X509v3 Subject Alternative Name']?.text, 'DNS:built.example.com, IP Address:0:0:0:0:0:0:0:1');
    const tampered = Buffer.from(der);
    const at = tampered.indexOf(Buffer.from('built'));
    tampered[at] = tampered[at]! ^ 0x01;
    t.equal(parseCsr(tampered).signatureValid, false, `${type}: a changed subject breaks the signature`);
  }
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'k.pem', '-subj', '/CN=x', '-days', '1', '-out', 'c.pem']);
  problem(t, () => parseCsrPem(ssl.read('c.pem').toString()), 'PKI-002', 'a certificate PEM');
  problem(t, () => parseCsr(ssl.der('c.pem')), 'PKI-002', 'a certificate DER');
  problem(t, () => parseCsr(Buffer.from('30030201', 'hex')), 'PKI-001', 'truncated');
  problem(t, () => parseCsrPem('not a csr'), 'PKI-001', 'text');
});

t.test('a signature that verified once is remembered only for the exact bytes it covered', async (t) => {
  for (const [type, options] of [
    ['ec', { namedCurve: 'P-256' }],
    ['ed25519', {}],
    ['rsa', { modulusLength: 2048 }],
  ] as const) {
    const { privateKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
    const der = buildCsr(privateKey, { subject: `CN=memo-${type}.example.com` });
    t.equal(parseCsr(der).signatureValid, true, `${type}: verifies`);
    t.equal(parseCsr(der).signatureValid, true, `${type}: verifies again (remembered)`);
    // The same key and signature over a changed subject, and the same data with a changed signature byte.
    const subject = Buffer.from(der);
    const at = subject.indexOf(Buffer.from('memo'));
    subject[at] = subject[at]! ^ 0x01;
    t.equal(parseCsr(subject).signatureValid, false, `${type}: other data with the remembered signature fails`);
    const signature = Buffer.from(der);
    signature[signature.length - 3] = signature[signature.length - 3]! ^ 0x01;
    t.equal(parseCsr(signature).signatureValid, false, `${type}: a changed signature fails`);
    t.equal(parseCsr(signature).signatureValid, false, `${type}: a failure is not remembered as a success`);
  }
});
