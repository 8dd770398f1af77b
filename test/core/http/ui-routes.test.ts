/**
 * The UI routes common to every interface (core/ui): GET /api/v1/ui/ (public, for the login page) and
 * POST /api/v1/ui/cr/format (a pasted certificate request, normalized). Runs on SQLite and, with
 * TEST_DATABASE_URL, on MariaDB.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { selfSignedCertificate } from '../../../core/pki/issue/self-signed.js';
import { toPem } from '../../../core/pki/input.js';
import { PRODUCT_VERSION } from '../../../core/version.js';
import { csrFor } from '../../helpers/csr.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';

const kernel = await bootKernel(t);
const admin = caller(kernel, ADMIN_HEADERS);
const anonymous = caller(kernel, {});

t.test('GET /api/v1/ui/: version, customization and terms, without authentication', async (t) => {
  const first = await anonymous('GET', '/api/v1/ui/');
  t.equal(first.statusCode, 200);
  t.equal(first.headers['content-type'], 'application/json');
  t.same(first.json(), { version: PRODUCT_VERSION, interfaceCustomization: { logo: null, headerStart: null, headerEnd: null, announcements: [] }, termsOfServices: [] }, 'first start: nothing customized');

  const announcements = [{ level: 'info', content: [{ lang: 'en', value: 'hi' }] }];
  const put = await admin('PUT', '/api/v1/system/configuration/', { type: 'interface_customization', headerStart: '#fcba03', announcements });
  t.equal(put.statusCode, 200, put.body);
  const tos = await admin('POST', '/api/v1/system/terms-of-services/', { name: 'tos-1', contents: [{ lang: 'en', value: '# Terms' }] });
  t.equal(tos.statusCode, 201, tos.body);

  const after = await anonymous('GET', '/api/v1/ui/');
  t.equal(after.statusCode, 200);
  t.same(after.json(), { version: PRODUCT_VERSION, interfaceCustomization: { logo: null, headerStart: '#fcba03', headerEnd: null, announcements }, termsOfServices: ['tos-1'] }, 'a change applies at once');
  t.notMatch(after.body, /webra|acme|scep|est"|allowedHosts|host/, 'nothing about hosts or capabilities');

  const wrongHost = await kernel.app.inject({ method: 'GET', url: '/api/v1/ui/', headers: { host: 'evil.example' } });
  t.equal(wrongHost.statusCode, 404, 'wrong host → 404');
});

t.test('POST /api/v1/ui/cr/format', async (t) => {
  // One openssl run: the reference request, made by another implementation than the decoders'.
  const dir = tempDir(t, 'cw-ui-');
  const pem = execFileSync('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-subj', '/CN=ui.example', '-addext', 'subjectAltName=DNS:ui.example'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
  const lines = pem.trim().split('\n');
  const base64 = lines.slice(1, -1).join('');
  const format = (csr: unknown) => admin('POST', '/api/v1/ui/cr/format', { csr });

  const reference = await format(pem);
  t.equal(reference.statusCode, 200, reference.body);
  const answer = reference.json();
  t.equal(answer.pem, `${lines.join('\n')}\n`, 'openssl\'s PEM is already normal');
  t.match(answer, { subject: 'CN=ui.example', keyType: 'RSA', keySize: 2048, sans: [{ sanType: 'DNSNAME', value: 'ui.example' }], signatureValid: true });
  t.same(answer.dnElements, [{ element: 'cn.1', type: 'CN', value: 'ui.example' }]);

  const variants: Record<string, string> = {
    'CRLF line ends': pem.replace(/\n/g, '\r\n'),
    'indented (YAML, mail)': pem.split('\n').map((l) => `    ${l}`).join('\n'),
    'tabs and trailing spaces': pem.split('\n').map((l) => `\t${l}  `).join('\n'),
    'one line, newlines turned into spaces': pem.replace(/\n/g, ' '),
    'no END line': lines.slice(0, -1).join('\n'),
    'no BEGIN line': lines.slice(1).join('\n'),
    'no armor at all (base64 lines)': lines.slice(1, -1).join('\n'),
    'bare base64 of the DER': base64,
    'surrounded by text': `Here is my request:\n${pem}\nThanks`,
  };
  for (const [what, csr] of Object.entries(variants)) {
    const res = await format(csr);
    t.equal(res.statusCode, 200, `${what}: ${res.body.slice(0, 200)}`);
    t.equal(res.json().pem, answer.pem, `${what}: the same PEM`);
    t.equal(res.json().subject, 'CN=ui.example', `${what}: the same subject`);
  }

  const ec = await format(csrFor('ec.example', ['ec.example', 'www.ec.example']));
  t.match(ec.json(), { subject: 'CN=ec.example', keyType: 'EC', keySize: 256, curve: 'secp256r1', sans: [{ value: 'ec.example' }, { value: 'www.ec.example' }] }, 'an EC request');

  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const certificate = toPem(selfSignedCertificate(key.privateKey, { subject: 'CN=not-a-csr' }), 'CERTIFICATE');
  const refused: [string, unknown, RegExp][] = [
    ['garbage', 'this is not a request', /^PKI-00[12]$/],
    ['base64 of garbage', Buffer.from('garbage bytes here').toString('base64'), /^PKI-00[12]$/],
    ['a certificate', certificate, /^PKI-002$/],
    ['a certificate as bare base64', certificate.split('\n').filter((l) => l && !l.startsWith('-----')).join(''), /^PKI-002$/],
    ['a truncated request', base64.slice(0, 200), /^PKI-00[12]$/],
    ['an empty string', '', /^PKI-001$/],
    ['a number', 12345, /^(PKI-00[12]|HTTP-003)$/],
    ['an object', { pem }, /^HTTP-003$/],
  ];
  for (const [what, csr, code] of refused) {
    const res = await format(csr);
    t.equal(res.statusCode, 400, `${what}: 400 (${res.body.slice(0, 160)})`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${what}: problem+json`);
    t.match(res.json().error, code, `${what}: ${res.json().error}`);
  }
  const missing = await admin('POST', '/api/v1/ui/cr/format', {});
  t.equal(missing.statusCode, 400, 'no csr field');
  t.match(missing.json(), { error: 'HTTP-003' });

  const huge = await admin('POST', '/api/v1/ui/cr/format', { csr: 'A'.repeat(kernel.config.server.bodyLimit) });
  t.equal(huge.statusCode, 413, 'a body over the configured limit');
  t.match(huge.json(), { error: 'HTTP-005' });

  const unauthenticated = await anonymous('POST', '/api/v1/ui/cr/format', { csr: pem });
  t.equal(unauthenticated.statusCode, 401, 'no credentials → 401');
  t.match(unauthenticated.json(), { error: /^SEC-AUTH-00/ });

  const wrongHost = await kernel.app.inject({ method: 'POST', url: '/api/v1/ui/cr/format', headers: { host: 'evil.example', ...ADMIN_HEADERS, 'content-type': 'application/json' }, payload: JSON.stringify({ csr: pem }) });
  t.equal(wrongHost.statusCode, 404, 'wrong host → 404');
});

t.test('the OpenAPI document describes both routes', async (t) => {
  const doc = (await anonymous('GET', '/api/v1/openapi.json')).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  t.ok(doc.paths['/api/v1/ui/']?.get?.responses['200'], 'GET /api/v1/ui/');
  t.ok(doc.paths['/api/v1/ui/cr/format']?.post?.responses['200'], 'POST /api/v1/ui/cr/format');
});
