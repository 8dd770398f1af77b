import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import t from 'tap';
import { decodeOcsp } from '../../../core/pki/ocsp/decode.js';
import { decodeOpenSsh } from '../../../core/pki/openssh/decode.js';
import { decodeTsp } from '../../../core/pki/tsp/decode.js';
import { ocspView } from '../../../core/pki/views/ocsp.js';
import { tspView } from '../../../core/pki/views/tsp.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { ocspTool, openssl, smallCa, tool, tsa } from '../../helpers/pki-tools.js';

// Real objects from the tools; the decoders' own tests compare them with the tools' output field by
// field, these check that every route form reaches the decoder and returns its answer whole.
const ca = smallCa(t);
const dir = tsa(ca);
const file = (name: string) => readFileSync(join(dir, name));
const ocspRequest = ocspTool(ca, 'r.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-cert', 'revoked.pem');
const signedRequest = ocspTool(ca, 's.req', '-issuer', 'ca.pem', '-cert', 'good.pem', '-signer', 'good.pem', '-signkey', 'good.key');
const ocspResponse = ocspTool(ca, 'r.resp', '-reqin', 'r.req', '-index', 'ca-db/index.txt', '-CA', 'ca.pem', '-rsigner', 'ca.pem', '-rkey', 'ca.key');
openssl(dir, 'ts', '-query', '-data', 'ca.pem', '-sha256', '-cert', '-out', 'q.tsq');
openssl(dir, 'ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'q.tsq', '-out', 'r.tsr');
openssl(dir, 'ts', '-query', '-data', 'ca.pem', '-sha256', '-tspolicy', '1.2.9.9', '-out', 'refused.tsq');
openssl(dir, 'ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'refused.tsq', '-out', 'refused.tsr');
const tspQuery = file('q.tsq');
const tspReply = file('r.tsr');
const tspRejection = file('refused.tsr');
tool(dir, 'ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@example', '-f', 'id_ed25519']);
tool(dir, 'ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-C', 'ssh ca', '-f', 'ssh_ca']);
tool(dir, 'ssh-keygen', ['-q', '-s', 'ssh_ca', '-I', 'alice', '-n', 'alice,bob', '-V', '+1d', 'id_ed25519.pub']);
tool(dir, 'ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', 'a passphrase', '-C', 'robot', '-f', 'id_rsa']);
tool(dir, 'ssh-keygen', ['-q', '-s', 'ssh_ca', '-I', 'robot', '-O', 'force-command=/bin/true', '-O', 'source-address=10.0.0.0/8', 'id_rsa.pub']);
const sshKey = file('id_ed25519.pub').toString();
const sshCert = file('id_ed25519-cert.pub').toString();
const sshPrivate = file('id_ed25519').toString();
const sshOptionsCert = file('id_rsa-cert.pub').toString();
const sshEncrypted = file('id_rsa').toString();

const kernel = await bootKernel(t);
const headers = { host: 'localhost', ...ADMIN_HEADERS };
const inject = (options: InjectOptions) => kernel.app.inject({ ...options, headers: { ...headers, ...options.headers } });
/** The decoder's answer, through the route's view, as JSON would carry it (the route's response schema must keep every field). */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const OBJECTS = [
  { route: 'rfc6960', name: 'OCSP request', bytes: ocspRequest, type: 'application/ocsp-request', expected: asJson(ocspView(decodeOcsp(ocspRequest))) },
  { route: 'rfc6960', name: 'signed OCSP request', bytes: signedRequest, type: 'application/ocsp-request', expected: asJson(ocspView(decodeOcsp(signedRequest))) },
  { route: 'rfc6960', name: 'OCSP response', bytes: ocspResponse, type: 'application/ocsp-response', expected: asJson(ocspView(decodeOcsp(ocspResponse))) },
  { route: 'rfc3161', name: 'TSP query', bytes: tspQuery, type: 'application/timestamp-query', expected: asJson(tspView(decodeTsp(tspQuery))) },
  { route: 'rfc3161', name: 'TSP reply', bytes: tspReply, type: 'application/timestamp-reply', expected: asJson(tspView(decodeTsp(tspReply))) },
  { route: 'rfc3161', name: 'TSP rejection', bytes: tspRejection, type: 'application/timestamp-reply', expected: asJson(tspView(decodeTsp(tspRejection))) },
];

t.test('the six routes: common capability, any authenticated principal', async (t) => {
  for (const path of ['openssh', 'rfc3161', 'rfc6960']) {
    for (const [method, url] of [['GET', `/api/v1/${path}/:base64`], ['POST', `/api/v1/${path}/`]]) {
      const entry = kernel.app.routeTable.find((r) => r.method === method && r.url === url);
      t.same(entry && { capability: entry.capability, access: entry.access }, { capability: 'common', access: 'authenticated' }, `${method} ${url}`);
    }
    const anonymous = await kernel.app.inject({ method: 'POST', url: `/api/v1/${path}/`, headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { data: 'AAAA' } });
    t.equal(anonymous.statusCode, 401, `${path}: credentials required`);
  }
});

t.test('OCSP and TSP: GET and every POST form answer the decoded object', async (t) => {
  for (const o of OBJECTS) {
    const forms: [string, InjectOptions][] = [
      ['GET, percent-encoded base64', { method: 'GET', url: `/api/v1/${o.route}/${encodeURIComponent(b64(o.bytes))}` }],
      ['GET, base64 with raw slashes', { method: 'GET', url: `/api/v1/${o.route}/${b64(o.bytes)}` }],
      ['GET, base64url', { method: 'GET', url: `/api/v1/${o.route}/${Buffer.from(o.bytes).toString('base64url')}` }],
      ['POST {data}', { method: 'POST', url: `/api/v1/${o.route}/`, payload: { data: b64(o.bytes) } }],
      ['POST {base64}', { method: 'POST', url: `/api/v1/${o.route}/`, payload: { base64: b64(o.bytes) } }],
      ['POST {value}', { method: 'POST', url: `/api/v1/${o.route}/`, payload: { value: b64(o.bytes) } }],
      ['POST a bare JSON string', { method: 'POST', url: `/api/v1/${o.route}/`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(b64(o.bytes)) }],
      [`POST raw DER as ${o.type}`, { method: 'POST', url: `/api/v1/${o.route}/`, headers: { 'content-type': o.type }, payload: Buffer.from(o.bytes) }],
      ['POST raw DER as application/octet-stream', { method: 'POST', url: `/api/v1/${o.route}/`, headers: { 'content-type': 'application/octet-stream' }, payload: Buffer.from(o.bytes) }],
      ['POST without the trailing slash', { method: 'POST', url: `/api/v1/${o.route}`, payload: { data: b64(o.bytes) } }],
    ];
    for (const [form, request] of forms) {
      const res = await inject(request);
      t.equal(res.statusCode, 200, `${o.name}, ${form}: ${res.body.slice(0, 200)}`);
      t.equal(res.headers['content-type'], 'application/json', `${o.name}, ${form}: exactly application/json`);
      t.same(res.json(), o.expected, `${o.name}, ${form}: the whole decoded object`);
    }
  }
  // Raw base64 ending in "/" (the router would take it for a trailing slash): a query of 75 bytes ending in 0xff.
  const sha384 = Buffer.from('300d06096086480165030402020500', 'hex');
  const imprint = Buffer.concat([Buffer.from([0x30, 0x41]), sha384, Buffer.from([0x04, 0x30]), Buffer.alloc(48, 0xab)]);
  const query = Buffer.concat([Buffer.from([0x30, 0x49, 0x02, 0x01, 0x01]), imprint, Buffer.from([0x01, 0x01, 0xff])]);
  t.match(b64(query), /\/$/);
  const slash = await inject({ method: 'GET', url: `/api/v1/rfc3161/${b64(query)}` });
  t.same(slash.json(), { kind: 'query', version: 1, messageImprint: { hashAlgorithm: 'sha384', hash: 'ab'.repeat(48) }, certReq: true }, 'raw base64 ending in a slash');
  // Fields the answers must carry, beyond equality with the decoder (kind detection, embedded certificates):
  // the response schemas would drop a field they do not list.
  const reply = (await inject({ method: 'POST', url: '/api/v1/rfc3161/', payload: { data: b64(tspReply) } })).json();
  t.match(reply, { kind: 'reply', status: 'granted', policy: '1.3.6.1.4.1.99999.1', token: { signer: { dn: 'CN=Test TSA,O=Certwright Test,C=FR', certificate: { dn: 'CN=Test TSA,O=Certwright Test,C=FR' } }, signatureValid: true } });
  const response = (await inject({ method: 'POST', url: '/api/v1/rfc6960/', payload: { data: b64(ocspResponse) } })).json();
  t.match(response, { kind: 'response', status: 'successful', respID: 'CN=Test CA,O=Certwright Test,C=FR', responses: [{ status: 'good' }, { status: 'revoked', revocationReason: 'keyCompromise' }], signatureValid: true });
  t.notOk('responseStatus' in response, 'the old name is gone');
  t.match(response.responses[0].certID, { serial: /^[0-9a-f]+$/, hashAlg: 'sha1', issuerKeyHash: /^[0-9a-f]{40}$/, issuerNameHash: /^[0-9a-f]{40}$/ }, 'certID as Horizon names it');
  t.type(response.certificates[0].pem, 'string', 'embedded certificates in full');
  const signed = (await inject({ method: 'POST', url: '/api/v1/rfc6960/', payload: { data: b64(signedRequest) } })).json();
  t.match(signed, { kind: 'request', signed: true, requestor: 'CN=good.example', signingAlgorithm: 'ecdsa-with-SHA256', certificates: [{ dn: 'CN=good.example' }], signatureValid: true });
  const rejection = (await inject({ method: 'POST', url: '/api/v1/rfc3161/', payload: { data: b64(tspRejection) } })).json();
  t.same(rejection, { kind: 'reply', status: 'rejection', statusText: ['Requested policy is not supported.'], failInfo: ['unacceptedPolicy'] });
});

t.test('OpenSSH: GET and every POST form answer the decoded object', async (t) => {
  const objects = [
    ['public key', sshKey],
    ['certificate', sshCert],
    ['certificate with critical options', sshOptionsCert],
    ['private key', sshPrivate],
    ['encrypted private key', sshEncrypted],
  ] as const;
  for (const [name, text] of objects) {
    const expected = asJson(decodeOpenSsh(text));
    const forms: [string, InjectOptions][] = [
      ['GET, the line percent-encoded', { method: 'GET', url: `/api/v1/openssh/${encodeURIComponent(text)}` }],
      ['GET, base64 of the text', { method: 'GET', url: `/api/v1/openssh/${encodeURIComponent(Buffer.from(text).toString('base64'))}` }],
      ['POST {data}', { method: 'POST', url: '/api/v1/openssh/', payload: { data: text } }],
      ['POST a bare JSON string', { method: 'POST', url: '/api/v1/openssh/', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(text) }],
      ['POST text/plain', { method: 'POST', url: '/api/v1/openssh/', headers: { 'content-type': 'text/plain' }, payload: text }],
    ];
    for (const [form, request] of forms) {
      const res = await inject(request);
      t.equal(res.statusCode, 200, `${name}, ${form}: ${res.body.slice(0, 200)}`);
      t.equal(res.headers['content-type'], 'application/json');
      t.same(res.json(), expected, `${name}, ${form}`);
    }
  }
  const blob = Buffer.from(sshKey.split(' ')[1]!, 'base64');
  const raw = await inject({ method: 'POST', url: '/api/v1/openssh/', headers: { 'content-type': 'application/octet-stream' }, payload: blob });
  t.same(raw.json(), { ...(asJson(decodeOpenSsh(sshKey)) as object), comment: null }, 'a wire blob as application/octet-stream');
  const cert = (await inject({ method: 'POST', url: '/api/v1/openssh/', payload: { data: sshCert } })).json();
  t.match(cert, { kind: 'certificate', keyId: 'alice', principals: ['alice', 'bob'], certType: 'user', signatureValid: true, signatureKey: { keyType: 'ec-secp256r1' } });
  const options = (await inject({ method: 'POST', url: '/api/v1/openssh/', payload: { data: sshOptionsCert } })).json();
  t.same(options.criticalOptions, [{ name: 'force-command', value: '/bin/true' }, { name: 'source-address', value: '10.0.0.0/8' }]);
  t.match((await inject({ method: 'POST', url: '/api/v1/openssh/', payload: { data: sshEncrypted } })).json(), { encrypted: true, cipher: 'aes256-ctr', kdf: 'bcrypt', rounds: 16 });
  const secret = (await inject({ method: 'POST', url: '/api/v1/openssh/', payload: { data: sshPrivate } })).json();
  t.same(Object.keys(secret).sort(), ['bits', 'cipher', 'comment', 'encrypted', 'fingerprint', 'kdf', 'keyType', 'kind', 'md5Fingerprint', 'type'], 'a private key answers no key material');
});

t.test('bad input: 400 problem+json with a specific PKI code, in bounded time', async (t) => {
  const deep = Buffer.concat(Array.from({ length: 2000 }, (_, i) => Buffer.from([0x30, 0x82, ((2000 - i - 1) * 4) >> 8, ((2000 - i - 1) * 4) & 0xff])));
  const post = (route: string, payload: InjectOptions['payload'], type = 'application/json'): InjectOptions => ({ method: 'POST', url: `/api/v1/${route}/`, headers: { 'content-type': type }, payload });
  const cases: [string, InjectOptions, string][] = [
    ['OCSP: truncated', post('rfc6960', ocspResponse.subarray(0, 100), 'application/ocsp-response'), 'PKI-001'],
    ['OCSP: garbage base64', { method: 'GET', url: '/api/v1/rfc6960/bm90IERFUiBhdCBhbGw=' }, 'PKI-001'],
    ['OCSP: not base64', { method: 'GET', url: `/api/v1/rfc6960/${encodeURIComponent('<<not base64>>')}` }, 'PKI-001'],
    ['OCSP: a TSP query', post('rfc6960', { data: b64(tspQuery) }), 'PKI-002'],
    ['OCSP: a certificate PEM', post('rfc6960', { data: ca.ca.pem }), 'PKI-002'],
    ['OCSP: absurd length', post('rfc6960', Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x0a, 0x01, 0x00]), 'application/octet-stream'), 'PKI-004'],
    ['OCSP: nested 2000 deep', post('rfc6960', deep, 'application/octet-stream'), 'PKI-005'],
    ['TSP: an OCSP request', post('rfc3161', ocspRequest, 'application/timestamp-query'), 'PKI-002'],
    ['TSP: truncated', post('rfc3161', { data: b64(tspReply.subarray(0, 500)) }), 'PKI-001'],
    ['TSP: nested 2000 deep', post('rfc3161', { data: b64(deep) }), 'PKI-005'],
    ['OpenSSH: garbage', post('openssh', 'not a key at all', 'text/plain'), 'PKI-001'],
    ['OpenSSH: an X.509 certificate', post('openssh', { data: ca.ca.pem }), 'PKI-002'],
    ['OpenSSH: an unknown key type', post('openssh', { data: `ssh-foo ${Buffer.concat([Buffer.from([0, 0, 0, 7]), Buffer.from('ssh-foo')]).toString('base64')}` }), 'PKI-006'],
    ['OpenSSH: truncated certificate', post('openssh', { data: sshCert.slice(0, 200) }), 'PKI-001'],
    ['empty raw body', post('rfc6960', Buffer.alloc(0), 'application/octet-stream'), 'PKI-001'],
    ['JSON without a known field', post('rfc3161', { pemm: 'x' }), 'PKI-001'],
    ['JSON null', post('openssh', 'null'), 'PKI-001'],
  ];
  for (const [name, request, code] of cases) {
    const started = performance.now();
    const res = await inject(request);
    t.equal(res.statusCode, 400, `${name}: 400 (${res.body.slice(0, 160)})`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${name}: problem+json`);
    t.equal(res.json().error, code, `${name}: ${code}`);
    t.ok(performance.now() - started < 2000, `${name}: bounded time`);
  }
  const unsupported = await inject(post('rfc6960', '<xml/>', 'application/xml'));
  t.equal(unsupported.statusCode, 415, 'other media types are refused');
});
