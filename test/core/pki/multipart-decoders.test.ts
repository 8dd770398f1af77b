import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { parseCsrPem } from '../../../core/pki/csr/parse.js';
import { decodeOcsp } from '../../../core/pki/ocsp/decode.js';
import { decodeTsp } from '../../../core/pki/tsp/decode.js';
import { crlView } from '../../../core/pki/views/crl.js';
import { csrView } from '../../../core/pki/views/csr.js';
import { ocspView } from '../../../core/pki/views/ocsp.js';
import { tspView } from '../../../core/pki/views/tsp.js';
import { certificateView } from '../../../core/pki/views/x509.js';
import { parseCertificatePem } from '../../../core/pki/x509/parse.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { LEAF_EXT } from '../../helpers/openssl-pki.js';
import { importCa } from '../../helpers/pki-api.js';
import { ocspTool, openssl, serialOf, smallCa, tsa } from '../../helpers/pki-tools.js';

/*
 * The uploads of EVERTRUST Horizon's MCP server (horizon-mcp src/tools/assist/crypto.ts): its client
 * builds an undici FormData with one Blob part per call,
 *   formData.append(fieldName, new Blob([data], { type: mimeType }), filename)
 * where data is the PEM text, or the base64 text of the DER for OCSP and time-stamp replies. The bodies
 * here are built the same way (Node's global FormData / Blob, serialized by `new Response(formData)`), so
 * the boundary, part headers and line breaks are undici's own. Each answer must carry the keys the MCP
 * tool descriptions say the client reads.
 */

// Fixtures: a small openssl CA (EC P-256) with a good and a revoked certificate, a leaf with every
// extension the x509 view renames, a CSR, a CRL, an OCSP response and a TSA reply.
const ca = smallCa(t);
const dir = tsa(ca);
const file = (name: string) => readFileSync(join(dir, name));
const leaf = ca.pki.issue('mcp-leaf', '/C=FR/O=Certwright Test/CN=mcp.example.com', ca.ca, {
  ext: [
    ...LEAF_EXT,
    'subjectAltName=DNS:mcp.example.com,IP:192.0.2.7,email:ops@example.com',
    'crlDistributionPoints=URI:http://crl.example.com/ca.crl',
    'authorityInfoAccess=OCSP;URI:http://ocsp.example.com/,caIssuers;URI:http://ca.example.com/ca.crt',
    'certificatePolicies=1.3.6.1.4.1.99999.42',
    '1.3.6.1.4.1.99999.7=ASN1:UTF8String:certwright',
  ],
});
const leafDer = new X509Certificate(leaf.pem).raw;
const fingerprint = (alg: 'sha1' | 'sha256') =>
  /Fingerprint=(\S+)/.exec(openssl(dir, 'x509', '-in', leaf.certPath, '-noout', '-fingerprint', `-${alg}`))![1]!.replace(/:/g, '').toLowerCase();
openssl(dir, 'req', '-new', '-key', leaf.keyPath, '-subj', '/O=Certwright Test/CN=csr.example.com', '-addext', 'subjectAltName=DNS:csr.example.com,DNS:www.csr.example.com', '-out', 'mcp.csr');
const csrPem = file('mcp.csr').toString();
const crl = ca.pki.crl(ca.ca);
ocspTool(ca, 'mcp.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-cert', 'revoked.pem');
const ocspResponse = ocspTool(ca, 'mcp.resp', '-reqin', 'mcp.req', '-index', 'ca-db/index.txt', '-CA', 'ca.pem', '-rsigner', 'ca.pem', '-rkey', 'ca.key');
openssl(dir, 'ts', '-query', '-data', 'ca.pem', '-sha256', '-cert', '-out', 'mcp.tsq');
openssl(dir, 'ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'mcp.tsq', '-out', 'mcp.tsr');
const tspReply = file('mcp.tsr');
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const kernel = await bootKernel(t);
await importCa(kernel, { name: 'mcp-test-ca', certificate: ca.ca.pem, trusted: true });

interface Part {
  name: string;
  data: string | Uint8Array;
  type: string;
  filename: string;
}

/** The body of the MCP client: an undici FormData of Blob parts, as fetch would send it. */
async function formData(parts: Part[]): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const p of parts) form.append(p.name, new Blob([p.data], { type: p.type }), p.filename);
  const response = new Response(form);
  return { payload: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type')! };
}

function send(url: string, payload: Buffer, contentType: string): Promise<LightMyRequestResponse> {
  return kernel.app.inject({ method: 'POST', url, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': contentType }, payload });
}

async function upload(url: string, ...parts: Part[]): Promise<LightMyRequestResponse> {
  const { payload, contentType } = await formData(parts);
  return send(url, payload, contentType);
}

/** The route's answer as JSON carries it. */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

function ok(t: Test, res: LightMyRequestResponse, what: string): Record<string, unknown> {
  t.equal(res.statusCode, 200, `${what}: 200 ${res.statusCode === 200 ? '' : res.body.slice(0, 300)}`);
  t.equal(res.headers['content-type'], 'application/json', `${what}: exactly application/json`);
  return res.json() as Record<string, unknown>;
}

function hasKeys(t: Test, body: Record<string, unknown>, keys: readonly string[], what: string): void {
  for (const key of keys) t.ok(key in body && body[key] !== undefined, `${what}: ${key}`);
}

const PEM_FILE = 'application/x-pem-file';
const OCTETS = 'application/octet-stream';

const X509_KEYS = [
  'dn', 'dnElements', 'issuerDn', 'serial', 'notBefore', 'notAfter', 'keyType', 'signingAlgorithm', 'pem', 'subjectKeyIdentifier', 'certificateThumbprint',
  'certificateSHAOneThumbprint', 'publicKeyThumbprint', 'keyUsages', 'isKeyUsagesCritical', 'extendedKeyUsages', 'isExtendedKeyUsagesCritical', 'selfSigned',
  'sans', 'basicConstraints',
] as const;
const CSR_KEYS = ['dn', 'dnElements', 'keyType', 'pem', 'sans'] as const;
const CRL_KEYS = ['issuerDn', 'thisUpdate', 'nextUpdate', 'number', 'version'] as const;
const OCSP_STATUSES = ['successful', 'malformedRequest', 'internalError', 'tryLater', 'sigRequired', 'unauthorized'];

t.test('decode_x509 — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const expected = asJson(certificateView(parseCertificatePem(leaf.pem)));
  const pem = ok(t, await upload('/api/v1/rfc5280/x509', { name: 'x509', data: leaf.pem, type: PEM_FILE, filename: 'certificate.pem' }), 'PEM part');
  t.same(pem, expected, 'the whole certificate view');
  hasKeys(t, pem, X509_KEYS, 'keys the MCP client reads');
  const x = new X509Certificate(leaf.pem);
  t.match(pem, {
    dn: 'CN=mcp.example.com,O=Certwright Test,C=FR',
    dnElements: [{ element: 'c.1', type: 'C', value: 'FR' }, { element: 'o.1', type: 'O', value: 'Certwright Test' }, { element: 'cn.1', type: 'CN', value: 'mcp.example.com' }],
    issuerDn: 'CN=Test CA,O=Certwright Test,C=FR',
    serial: serialOf(leaf),
    notBefore: Date.parse(x.validFrom),
    notAfter: Date.parse(x.validTo),
    keyType: 'ec-secp256r1',
    signingAlgorithm: 'ecdsa-with-SHA256',
    pem: leaf.pem,
    subjectKeyIdentifier: /^[0-9a-f]{40}$/,
    certificateThumbprint: fingerprint('sha256'),
    certificateSHAOneThumbprint: fingerprint('sha1'),
    publicKeyThumbprint: /^[0-9a-f]{64}$/,
    keyUsages: ['digitalSignature'],
    isKeyUsagesCritical: true,
    extendedKeyUsages: ['serverAuth', 'clientAuth'],
    isExtendedKeyUsagesCritical: false,
    selfSigned: false,
    basicConstraints: { isCa: false },
    crldps: ['http://crl.example.com/ca.crl'],
    aias: { crt: ['http://ca.example.com/ca.crt'], ocsp: ['http://ocsp.example.com/'] },
    policies: [{ oid: '1.3.6.1.4.1.99999.42' }],
    unsupportedExtensions: [{ oid: '1.3.6.1.4.1.99999.7', hex: Buffer.concat([Buffer.from([0x0c, 10]), Buffer.from('certwright')]).toString('hex') }],
  });
  t.same(pem.sans, [
    { sanType: 'DNSNAME', value: 'mcp.example.com' },
    { sanType: 'IPADDRESS', value: '192.0.2.7' },
    { sanType: 'RFC822NAME', value: 'ops@example.com' },
  ], 'sans [{sanType, value}]');
  for (const gone of ['issuer', 'thumbprint', 'thumbprints', 'subjectAlternateNames', 'extensions']) t.notOk(gone in pem, `no ${gone}: Horizon's name instead`);

  const der = ok(t, await upload('/api/v1/rfc5280/x509', { name: 'x509', data: leafDer, type: OCTETS, filename: 'certificate.der' }), 'raw DER part');
  t.same(der, expected, 'raw DER in the part: the same answer');
  const base64 = ok(t, await upload('/api/v1/rfc5280/x509', { name: 'x509', data: b64(leafDer), type: OCTETS, filename: 'certificate.der' }), 'base64 part');
  t.same(base64, expected, 'base64 text in the part: the same answer');
  const root = ok(t, await upload('/api/v1/rfc5280/x509', { name: 'x509', data: ca.ca.pem, type: PEM_FILE, filename: 'certificate.pem' }), 'the CA');
  t.match(root, { selfSigned: true, basicConstraints: { isCa: true }, keyUsages: ['keyCertSign', 'cRLSign'], isKeyUsagesCritical: true, extendedKeyUsages: [] });
});

t.test('decode_csr — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const expected = asJson(csrView(parseCsrPem(csrPem)));
  const body = ok(t, await upload('/api/v1/rfc5280/pkcs10', { name: 'pkcs10', data: csrPem, type: PEM_FILE, filename: 'request.pem' }), 'PEM part');
  t.same(body, expected, 'the whole CSR view');
  hasKeys(t, body, CSR_KEYS, 'keys the MCP client reads');
  t.match(body, {
    dn: 'CN=csr.example.com,O=Certwright Test',
    dnElements: [{ element: 'o.1', type: 'O', value: 'Certwright Test' }, { element: 'cn.1', type: 'CN', value: 'csr.example.com' }],
    keyType: 'ec-secp256r1',
    pem: csrPem,
    sans: [{ sanType: 'DNSNAME', value: 'csr.example.com' }, { sanType: 'DNSNAME', value: 'www.csr.example.com' }],
  });
  const der = Buffer.from(csrPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  t.same(ok(t, await upload('/api/v1/rfc5280/pkcs10', { name: 'pkcs10', data: der, type: OCTETS, filename: 'request.der' }), 'raw DER part'), expected, 'raw DER in the part');
});

t.test('decode_crl — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const expected = asJson(crlView(decodeCrl(crl.der)));
  const body = ok(t, await upload('/api/v1/rfc5280/crl', { name: 'crl', data: crl.pem, type: PEM_FILE, filename: 'revocation.crl' }), 'PEM part');
  t.same(body, expected, 'the whole CRL view');
  hasKeys(t, body, CRL_KEYS, 'keys the MCP client reads');
  const text = openssl(dir, 'crl', '-in', join(dir, 'ca-1.crl.pem'), '-noout', '-lastupdate', '-nextupdate', '-crlnumber');
  const field = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(text)![1]!;
  t.match(body, {
    issuerDn: 'CN=Test CA,O=Certwright Test,C=FR',
    thisUpdate: Date.parse(field('lastUpdate')),
    nextUpdate: Date.parse(field('nextUpdate')),
    number: Number.parseInt(field('crlNumber'), 16),
    version: 2,
  });
  t.type(body.number, 'number', 'number is a JSON integer');
  t.notOk('issuer' in body, "no issuer: Horizon's issuerDn instead");
  t.match(body.entries, [{ serial: serialOf(ca.revoked), reason: 'KEYCOMPROMISE', revocationDate: Number }], 'the revoked certificate');
  t.same(ok(t, await upload('/api/v1/rfc5280/crl', { name: 'crl', data: crl.der, type: OCTETS, filename: 'revocation.crl' }), 'raw DER part'), expected, 'raw DER in the part');
});

t.test('decode_ocsp — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const expected = asJson(ocspView(decodeOcsp(ocspResponse)));
  // No trailing slash: the MCP client posts to /api/v1/rfc6960.
  const body = ok(t, await upload('/api/v1/rfc6960', { name: 'ocsp-response', data: b64(ocspResponse), type: OCTETS, filename: 'response.der' }), 'base64 part');
  t.same(body, expected, 'the whole OCSP view');
  t.ok(OCSP_STATUSES.includes(body.status as string), `status is one of the RFC 6960 names (${String(body.status)})`);
  t.match(body, { status: 'successful', respID: 'CN=Test CA,O=Certwright Test,C=FR' });
  t.notOk('responseStatus' in body, "no responseStatus: Horizon's status instead");
  const responses = body.responses as Record<string, unknown>[];
  t.equal(responses.length, 2, 'one single response per certificate asked');
  const hashes = { hashAlg: 'sha1', issuerKeyHash: /^[0-9a-f]{40}$/, issuerNameHash: /^[0-9a-f]{40}$/ };
  t.match(responses, [
    { certID: { serial: serialOf(ca.good), ...hashes }, status: 'good', thisUpdate: Number },
    { certID: { serial: serialOf(ca.revoked), ...hashes }, status: 'revoked', revocationReason: 'keyCompromise', revocationTime: Number, thisUpdate: Number },
  ]);
  for (const r of responses) {
    hasKeys(t, r, ['certID', 'status', 'thisUpdate'], 'single response');
    t.ok('nextUpdate' in r || !('nextUpdate' in expected), 'nextUpdate as decoded');
    for (const gone of ['certStatus', 'hashAlgorithm', 'serial']) t.notOk(gone in r, `single response: no ${gone}`);
  }
  const der = ok(t, await upload('/api/v1/rfc6960', { name: 'ocsp-response', data: ocspResponse, type: OCTETS, filename: 'response.der' }), 'raw DER part');
  t.same(der, expected, 'raw DER in the part');
  const slash = ok(t, await upload('/api/v1/rfc6960/', { name: 'ocsp-response', data: b64(ocspResponse), type: OCTETS, filename: 'response.der' }), 'with the trailing slash');
  t.same(slash, expected, 'with the trailing slash too');
});

t.test('decode_tsa — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const expected = asJson(tspView(decodeTsp(tspReply)));
  const body = ok(t, await upload('/api/v1/rfc3161', { name: 'timestamping-response', data: b64(tspReply), type: OCTETS, filename: 'timestamp.der' }), 'base64 part');
  t.same(body, expected, 'the whole time-stamp reply view');
  hasKeys(t, body, ['policy', 'status'], 'keys the MCP client reads');
  t.match(body, { kind: 'reply', status: 'granted', policy: '1.3.6.1.4.1.99999.1', token: { policy: '1.3.6.1.4.1.99999.1', signatureValid: true } });
  t.notOk('failInfo' in body, 'a granted reply has no failInfo');
  const der = ok(t, await upload('/api/v1/rfc3161', { name: 'timestamping-response', data: tspReply, type: OCTETS, filename: 'timestamp.der' }), 'raw DER part');
  t.same(der, expected, 'raw DER in the part');
});

t.test('detect_file — horizon-mcp src/tools/assist/crypto.ts', async (t) => {
  const cert = ok(t, await upload('/api/v1/crypto/detect', { name: 'file', data: leaf.pem, type: OCTETS, filename: 'unknown.bin' }), 'a certificate PEM');
  t.match(cert, { type: 'certificate', encoding: 'pem', value: { issuerDn: 'CN=Test CA,O=Certwright Test,C=FR', dn: 'CN=mcp.example.com,O=Certwright Test,C=FR' } });
  t.same(cert.value, asJson(certificateView(parseCertificatePem(leaf.pem))), 'value: the certificate as the x509 decoder answers it');
  const list = ok(t, await upload('/api/v1/crypto/detect', { name: 'file', data: crl.pem, type: OCTETS, filename: 'unknown.bin' }), 'a CRL PEM');
  t.match(list, { type: 'crl', value: { issuerDn: 'CN=Test CA,O=Certwright Test,C=FR' } });
  t.same(list.value, asJson(crlView(decodeCrl(crl.der))), 'value: the CRL as the crl decoder answers it');
  const derCrl = ok(t, await upload('/api/v1/crypto/detect', { name: 'file', data: crl.der, type: OCTETS, filename: 'unknown.bin' }), 'a CRL as raw DER');
  t.match(derCrl, { type: 'crl', encoding: 'der', value: { issuerDn: 'CN=Test CA,O=Certwright Test,C=FR' } });
  const reply = ok(t, await upload('/api/v1/crypto/detect', { name: 'file', data: tspReply, type: OCTETS, filename: 'unknown.bin' }), 'a TSA reply');
  t.match(reply, { type: 'timestamping-response', value: { policy: '1.3.6.1.4.1.99999.1', status: 'granted' } }, "Horizon's type name");
  const ocsp = ok(t, await upload('/api/v1/crypto/detect', { name: 'file', data: b64(ocspResponse), type: OCTETS, filename: 'unknown.bin' }), 'an OCSP response as base64');
  t.match(ocsp, { type: 'ocsp-response', value: { status: 'successful' } });
});

t.test('trust chain upload, part x509 (Horizon MCP server and v1 Go client)', async (t) => {
  const res = await upload('/api/v1/rfc5280/tc', { name: 'x509', data: leaf.pem, type: PEM_FILE, filename: 'certificate.pem' });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  t.equal(res.headers['content-type'], 'application/json', 'exactly application/json');
  const chain = res.json() as Record<string, unknown>[];
  t.same(chain.map((c) => c.dn), ['CN=mcp.example.com,O=Certwright Test,C=FR', 'CN=Test CA,O=Certwright Test,C=FR'], 'leaf → imported CA');
  t.same(chain[0], asJson(certificateView(parseCertificatePem(leaf.pem))), 'each entry is the x509 view');
  for (const entry of chain) hasKeys(t, entry, X509_KEYS, `${String(entry.dn)}`);
  const der = await upload('/api/v1/rfc5280/tc?order=rtl', { name: 'x509', data: leafDer, type: OCTETS, filename: 'certificate.der' });
  t.equal(der.statusCode, 200, der.body.slice(0, 300));
  t.same((der.json() as { dn: string }[]).map((c) => c.dn), ['CN=Test CA,O=Certwright Test,C=FR', 'CN=mcp.example.com,O=Certwright Test,C=FR'], 'raw DER part, root first');
});

t.test('the part is picked by name among other parts; a single file part of another name is taken', async (t) => {
  const named = await upload(
    '/api/v1/rfc5280/x509',
    { name: 'comment', data: 'not the certificate', type: 'text/plain', filename: 'readme.txt' },
    { name: 'x509', data: leaf.pem, type: PEM_FILE, filename: 'certificate.pem' },
  );
  t.match(ok(t, named, 'x509 after another part'), { dn: 'CN=mcp.example.com,O=Certwright Test,C=FR' });
  const only = await upload('/api/v1/rfc5280/crl', { name: 'upload', data: crl.pem, type: PEM_FILE, filename: 'revocation.crl' });
  t.match(ok(t, only, 'the only file part'), { issuerDn: 'CN=Test CA,O=Certwright Test,C=FR' });
});

const ROUTES = [
  { url: '/api/v1/rfc5280/x509', part: 'x509', filename: 'certificate.pem' },
  { url: '/api/v1/rfc5280/pkcs10', part: 'pkcs10', filename: 'request.pem' },
  { url: '/api/v1/rfc5280/crl', part: 'crl', filename: 'revocation.crl' },
  { url: '/api/v1/rfc6960', part: 'ocsp-response', filename: 'response.der' },
  { url: '/api/v1/rfc3161', part: 'timestamping-response', filename: 'timestamp.der' },
  { url: '/api/v1/crypto/detect', part: 'file', filename: 'unknown.bin' },
  { url: '/api/v1/rfc5280/tc', part: 'x509', filename: 'certificate.pem' },
] as const;

function problem(t: Test, res: LightMyRequestResponse, code: string, what: string): void {
  t.equal(res.statusCode, 400, `${what}: 400 (${res.statusCode} ${res.body.slice(0, 200)})`);
  t.equal(res.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
  if (res.headers['content-type'] === 'application/problem+json') t.match(res.json(), { error: code, status: 400 }, `${what}: ${code}`);
}

t.test('bad multipart bodies: 400 problem+json with a stable code, never 500', async (t) => {
  for (const r of ROUTES) {
    const part = (data: string | Uint8Array, name: string = r.part, filename: string = r.filename): Part => ({ name, data, type: OCTETS, filename });
    const good = await formData([part(leaf.pem)]);

    const noBoundary = await send(r.url, good.payload, 'multipart/form-data');
    problem(t, noBoundary, 'HTTP-002', `${r.url}: no boundary in the content type`);

    // Cut inside the part's headers: the body ends before any part is complete.
    const headersEnd = good.payload.indexOf('\r\n\r\n');
    problem(t, await send(r.url, good.payload.subarray(0, headersEnd - 5), good.contentType), 'HTTP-002', `${r.url}: body truncated in the part headers`);

    problem(t, await upload(r.url, part(leaf.pem, 'first', 'a.pem'), part(crl.pem, 'second', 'b.pem')), 'HTTP-003', `${r.url}: no ${r.part} part and several files`);
    problem(t, await upload(r.url, part(new Uint8Array(0))), 'PKI-001', `${r.url}: an empty part`);
    problem(t, await upload(r.url, part('%%% not anything %%%')), 'PKI-001', `${r.url}: garbage in the part`);
    problem(t, await upload(r.url, ...Array.from({ length: 9 }, () => part(leaf.pem))), 'HTTP-003', `${r.url}: more than 8 parts`);
  }
});

t.test('a body truncated inside the file part: 400 HTTP-002, and the process survives', async (t) => {
  // busboy emits "Part terminated early" on the part's stream after rejecting the body; an 'error' event
  // nobody listens to is an uncaught exception, which would end the server.
  const uncaught: Error[] = [];
  const listener = (err: Error) => uncaught.push(err);
  const previous = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  process.on('uncaughtException', listener);
  try {
    for (const r of ROUTES) {
      const good = await formData([{ name: r.part, data: leaf.pem, type: OCTETS, filename: r.filename }]);
      const inPart = good.payload.indexOf('\r\n\r\n') + 4 + 30;
      problem(t, await send(r.url, good.payload.subarray(0, inPart), good.contentType), 'HTTP-002', `${r.url}: body truncated inside the part`);
      // The whole part, without the closing delimiter: the part is never known to end.
      const closing = good.payload.lastIndexOf(Buffer.from('\r\n--'));
      problem(t, await send(r.url, good.payload.subarray(0, closing + 2), good.contentType), 'HTTP-002', `${r.url}: body truncated before its closing delimiter`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    process.removeListener('uncaughtException', listener);
    for (const l of previous) process.on('uncaughtException', l);
  }
  t.same(uncaught.map((e) => e.message), [], 'no uncaught exception');
});
