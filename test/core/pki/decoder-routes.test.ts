import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { seq } from '../../../core/pki/der/writer.js';
import { parseCsrPem } from '../../../core/pki/csr/parse.js';
import { parseCertificatePem } from '../../../core/pki/x509/parse.js';
import { certificateView } from '../../../core/pki/views/x509.js';
import { csrView } from '../../../core/pki/views/csr.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { openssl, type OpenSsl } from '../../helpers/openssl.js';

const AUTH = { host: 'localhost', ...ADMIN_HEADERS };

/** Go's url.PathEscape, as horizon-go builds GET /rfc5280/pkcs10/{pem}: '+', '=', ':' stay, '/' and spaces do not. */
const pathEscape = (s: string): string => encodeURIComponent(s).replace(/%2B/g, '+').replace(/%3D/g, '=').replace(/%3A/g, ':');

function fixtures(ssl: OpenSsl) {
  ssl.write('req.cnf', '[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=DNS:api.example.com,IP:192.0.2.1\nextendedKeyUsage=serverAuth\n');
  ssl.run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'k.pem', '-subj', '/C=FR/O=Certwright/CN=api.example.com', '-config', 'req.cnf', '-extensions', 'ext', '-days', '30', '-out', 'c.pem']);
  ssl.run(['req', '-new', '-key', 'k.pem', '-subj', '/O=Certwright/CN=csr.example.com', '-config', 'req.cnf', '-reqexts', 'ext', '-out', 'r.csr']);
  ssl.write('crl.cnf', '[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\ndefault_md=sha256\ndefault_crl_days=1\n');
  ssl.write('index.txt', '');
  ssl.run(['ca', '-gencrl', '-config', 'crl.cnf', '-keyfile', 'k.pem', '-cert', 'c.pem', '-out', 'crl.pem']);
  return {
    pem: ssl.read('c.pem').toString(),
    der: ssl.der('c.pem'),
    csrPem: ssl.read('r.csr').toString(),
    csrDer: ssl.der('r.csr', 'req'),
    crlPem: ssl.read('crl.pem').toString(),
    sha1: /Fingerprint=(.*)$/m.exec(ssl.run(['x509', '-in', 'c.pem', '-noout', '-fingerprint', '-sha1']))![1]!.replace(/:/g, '').toLowerCase(),
  };
}

async function get(kernel: Kernel, url: string, headers: Record<string, string> = AUTH) {
  return kernel.app.inject({ method: 'GET', url, headers });
}
async function post(kernel: Kernel, url: string, contentType: string, payload: string | Buffer | object, headers: Record<string, string> = AUTH) {
  return kernel.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload: payload as string });
}

t.test('x509 decoder: GET with the PEM in the path, POST with it in the body', async (t) => {
  const kernel = await bootKernel(t);
  const f = fixtures(openssl(t));
  const expected = JSON.parse(JSON.stringify(certificateView(parseCertificatePem(f.pem)))) as Record<string, unknown>;
  const base64 = f.der.toString('base64');
  const answers = {
    'GET, PEM fully percent-encoded': await get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(f.pem)}`),
    "GET, PEM escaped as Go's url.PathEscape does": await get(kernel, `/api/v1/rfc5280/x509/${pathEscape(f.pem)}`),
    'GET, PEM with its slashes left raw': await get(kernel, `/api/v1/rfc5280/x509/${f.pem.replace(/\n/g, '%0A').replace(/ /g, '%20').replace(/\+/g, '%2B')}`),
    'GET, bare base64': await get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(base64)}`),
    'POST {"pem"}': await post(kernel, '/api/v1/rfc5280/x509', 'application/json', { pem: f.pem }),
    'POST {"certificate"}': await post(kernel, '/api/v1/rfc5280/x509', 'application/json', { certificate: f.pem }),
    'POST a bare JSON string': await post(kernel, '/api/v1/rfc5280/x509', 'application/json', JSON.stringify(f.pem)),
    'POST DER as application/pkix-cert': await post(kernel, '/api/v1/rfc5280/x509', 'application/pkix-cert', f.der),
    'POST DER as application/octet-stream': await post(kernel, '/api/v1/rfc5280/x509', 'application/octet-stream', f.der),
    'POST PEM as text/plain': await post(kernel, '/api/v1/rfc5280/x509', 'text/plain', f.pem),
    'POST PEM as application/x-pem-file': await post(kernel, '/api/v1/rfc5280/x509', 'application/x-pem-file', f.pem),
  };
  for (const [how, res] of Object.entries(answers)) {
    t.equal(res.statusCode, 200, `${how}: 200`);
    t.equal(res.headers['content-type'], 'application/json', `${how}: exactly application/json`);
    t.same(res.json(), expected, `${how}: the decoded certificate`);
  }
  const body = answers['POST {"pem"}'].json() as Record<string, unknown>;
  t.match(body, {
    dn: 'CN=api.example.com,O=Certwright,C=FR',
    issuerDn: 'CN=api.example.com,O=Certwright,C=FR',
    certificateSHAOneThumbprint: f.sha1,
    certificateThumbprint: /^[0-9a-f]{64}$/,
    keyType: 'rsa-2048',
    signingAlgorithm: 'sha256WithRSAEncryption',
    selfSigned: true,
    sans: [
      { sanType: 'DNSNAME', value: 'api.example.com' },
      { sanType: 'IPADDRESS', value: '192.0.2.1' },
    ],
    extendedKeyUsages: ['serverAuth'],
    isExtendedKeyUsagesCritical: false,
    decodedExtensions: { extendedKeyUsage: { critical: false, usages: ['serverAuth'] } },
  });
  for (const gone of ['issuer', 'thumbprint', 'thumbprints', 'subjectAlternateNames', 'extensions']) t.notOk(gone in body, `${gone} is answered under Horizon's name instead`);
  t.type(body.notBefore, 'number', 'dates are epoch ms');
});

t.test('pkcs10 decoder: {dn, sans, dnElements, keyType, pem} (client-compat §7)', async (t) => {
  const kernel = await bootKernel(t);
  const f = fixtures(openssl(t));
  const answers = [
    await get(kernel, `/api/v1/rfc5280/pkcs10/${pathEscape(f.csrPem)}`),
    await get(kernel, `/api/v1/rfc5280/pkcs10/${encodeURIComponent(f.csrPem)}`),
    await post(kernel, '/api/v1/rfc5280/pkcs10', 'application/json', { pem: f.csrPem }),
    await post(kernel, '/api/v1/rfc5280/pkcs10', 'application/json', { csr: f.csrPem }),
    await post(kernel, '/api/v1/rfc5280/pkcs10', 'application/pkcs10', f.csrDer),
    await post(kernel, '/api/v1/rfc5280/pkcs10', 'text/plain', f.csrPem),
  ];
  for (const res of answers) {
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    t.equal(res.headers['content-type'], 'application/json');
    t.match(res.json(), {
      dn: 'CN=csr.example.com,O=Certwright',
      sans: [
        { sanType: 'DNSNAME', value: 'api.example.com' },
        { sanType: 'IPADDRESS', value: '192.0.2.1' },
      ],
      dnElements: [
        { element: 'o.1', type: 'O', value: 'Certwright' },
        { element: 'cn.1', type: 'CN', value: 'csr.example.com' },
      ],
      keyType: 'rsa-2048',
      pem: f.csrPem,
      signatureValid: true,
    });
    t.same(res.json(), JSON.parse(JSON.stringify(csrView(parseCsrPem(f.csrPem)))), 'every decoded field is answered');
  }
});

t.test('bad input: 400 problem+json with a PKI code, quickly, never a 500', async (t) => {
  const kernel = await bootKernel(t);
  const f = fixtures(openssl(t));
  let nested: Uint8Array = Buffer.from([0x05, 0x00]);
  for (let i = 0; i < 5000; i++) nested = seq(nested);
  const shallowNest = (() => {
    let n: Uint8Array = Buffer.from([0x05, 0x00]);
    for (let i = 0; i < 200; i++) n = seq(n);
    return Buffer.from(n).toString('base64');
  })();
  const cases: [string, () => Promise<{ statusCode: number; headers: Record<string, unknown>; json(): unknown }>, string][] = [
    ['GET x509 garbage', () => get(kernel, '/api/v1/rfc5280/x509/hello%20world'), 'PKI-001'],
    ['GET x509 truncated PEM', () => get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(f.pem.slice(0, 400))}`), 'PKI-001'],
    ['GET x509 truncated base64 DER', () => get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(f.der.subarray(0, 300).toString('base64'))}`), 'PKI-001'],
    ['GET x509 with a CRL', () => get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(f.crlPem)}`), 'PKI-002'],
    ['GET x509 with a CSR', () => get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(f.csrPem)}`), 'PKI-002'],
    ['GET pkcs10 with a certificate', () => get(kernel, `/api/v1/rfc5280/pkcs10/${encodeURIComponent(f.pem)}`), 'PKI-002'],
    ['GET x509 200 levels deep', () => get(kernel, `/api/v1/rfc5280/x509/${encodeURIComponent(shallowNest)}`), 'PKI-005'],
    ['POST x509 DER 5000 levels deep', () => post(kernel, '/api/v1/rfc5280/x509', 'application/pkix-cert', Buffer.from(nested)), 'PKI-005'],
    ['POST x509 a length claiming 4 GiB', () => post(kernel, '/api/v1/rfc5280/x509', 'application/pkix-cert', Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x30, 0x00])), 'PKI-004'],
    ['POST pkcs10 a length claiming 4 GiB', () => post(kernel, '/api/v1/rfc5280/pkcs10', 'application/pkcs10', Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x30, 0x00])), 'PKI-004'],
    ['POST x509 random bytes', () => post(kernel, '/api/v1/rfc5280/x509', 'application/octet-stream', Buffer.from('30' + 'ab'.repeat(500), 'hex')), 'PKI-001'],
    ['POST x509 a CRL as text', () => post(kernel, '/api/v1/rfc5280/x509', 'text/plain', f.crlPem), 'PKI-002'],
    ['POST x509 {}', () => post(kernel, '/api/v1/rfc5280/x509', 'application/json', {}), 'PKI-001'],
    ['POST x509 {"pem": 42}', () => post(kernel, '/api/v1/rfc5280/x509', 'application/json', { pem: 42 }), 'PKI-001'],
    ['POST x509 an empty text body', () => post(kernel, '/api/v1/rfc5280/x509', 'text/plain', ''), 'PKI-001'],
    ['POST pkcs10 garbage', () => post(kernel, '/api/v1/rfc5280/pkcs10', 'application/json', { pem: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----' }), 'PKI-001'],
    ['POST x509 invalid JSON', () => post(kernel, '/api/v1/rfc5280/x509', 'application/json', '{"pem":'), 'HTTP-002'],
  ];
  for (const [what, call, code] of cases) {
    const started = performance.now();
    const res = await call();
    const elapsed = performance.now() - started;
    t.equal(res.statusCode, 400, `${what}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
    t.match(res.json(), { error: code, status: 400 }, `${what}: ${code}`);
    if (code === 'PKI-001') t.match(res.json(), { message: 'Could not parse provided PEM' }, `${what}: the message clients assert`);
    t.ok(elapsed < 1000, `${what}: answered in ${elapsed.toFixed(0)} ms`);
  }
  const huge = await post(kernel, '/api/v1/rfc5280/x509', 'text/plain', 'A'.repeat(2 * 1024 * 1024));
  t.equal(huge.statusCode, 413, 'a body over the limit: 413, not a 500');
});

t.test('the decoders need credentials, and any authenticated principal may call them', async (t) => {
  const kernel = await bootKernel(t);
  const f = fixtures(openssl(t));
  for (const [method, url] of [
    ['GET', `/api/v1/rfc5280/x509/${encodeURIComponent(f.pem)}`],
    ['GET', `/api/v1/rfc5280/pkcs10/${encodeURIComponent(f.csrPem)}`],
    ['POST', '/api/v1/rfc5280/x509'],
    ['POST', '/api/v1/rfc5280/pkcs10'],
  ] as const) {
    const res = await kernel.app.inject({ method, url, headers: { host: 'localhost', 'content-type': 'text/plain' }, ...(method === 'POST' ? { payload: f.pem } : {}) });
    t.equal(res.statusCode, 401, `${method} ${url.slice(0, 30)}…: 401 without credentials`);
  }
  const routes = kernel.app.routeTable.filter((r) => /rfc5280\/(x509|pkcs10)/.test(r.url));
  t.ok(routes.length >= 6, 'GET :pem, GET *, POST for both decoders');
  for (const r of routes) t.match(r, { capability: 'common', access: 'authenticated' }, `${r.method} ${r.url}: common, authenticated`);
});
