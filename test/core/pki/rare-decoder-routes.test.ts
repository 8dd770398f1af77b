import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { decodeCrl } from '../../../core/pki/crl/decode.js';
import { crlView } from '../../../core/pki/views/crl.js';
import { ADMIN_HEADERS, bootKernel, LogCapture } from '../../helpers/kernel.js';
import { OPENSSL_REASONS, opensslCrlEntries, rareTools, type RareTools } from '../../helpers/openssl-rare.js';

const AUTH = { host: 'localhost', ...ADMIN_HEADERS };
const PASSWORD = 'Route-Pässwörd-42';

async function get(kernel: Kernel, url: string, headers: Record<string, string> = AUTH) {
  return kernel.app.inject({ method: 'GET', url, headers });
}
async function post(kernel: Kernel, url: string, contentType: string, payload: string | Buffer | object, headers: Record<string, string> = AUTH) {
  const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  return kernel.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload: body });
}

function fixtures(tools: RareTools) {
  tools.ca();
  tools.revoke(tools.issue('revoked'), { reason: 'keyCompromise' });
  tools.revoke(tools.issue('old'), { reason: 'superseded' });
  tools.issue('leaf');
  tools.gencrl();
  tools.run(['pkcs12', '-export', '-legacy', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-certfile', 'ca.pem', '-name', 'Leaf', '-passout', `pass:${PASSWORD}`, '-out', 'legacy.p12']);
  tools.run(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-certpbe', 'AES-256-CBC', '-keypbe', 'AES-256-CBC', '-macalg', 'sha256', '-passout', `pass:${PASSWORD}`, '-out', 'modern.p12']);
  return { crlPem: tools.text('crl.pem'), crlDer: tools.der('crl.pem', 'crl'), crlText: tools.run(['crl', '-in', 'crl.pem', '-noout', '-text']) };
}

t.test('CRL decoder: GET with the PEM in the path, POST as JSON and raw bodies', async (t) => {
  const kernel = await bootKernel(t);
  const tools = rareTools(t);
  const f = fixtures(tools);
  const expected = JSON.parse(JSON.stringify(crlView(decodeCrl(f.crlDer)))) as Record<string, unknown>;
  const answers = {
    'GET, PEM percent-encoded': await get(kernel, `/api/v1/rfc5280/crl/${encodeURIComponent(f.crlPem)}`),
    'GET, PEM with raw slashes': await get(kernel, `/api/v1/rfc5280/crl/${f.crlPem.replace(/\n/g, '%0A').replace(/ /g, '%20').replace(/\+/g, '%2B')}`),
    'GET, base64': await get(kernel, `/api/v1/rfc5280/crl/${encodeURIComponent(f.crlDer.toString('base64'))}`),
    'POST a JSON string': await post(kernel, '/api/v1/rfc5280/crl', 'application/json', JSON.stringify(f.crlPem)),
    'POST {crl}': await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { crl: f.crlPem }),
    'POST {pem}': await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { pem: f.crlPem }),
    'POST {value: base64}': await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { value: f.crlDer.toString('base64') }),
    'POST DER as application/pkix-crl': await post(kernel, '/api/v1/rfc5280/crl', 'application/pkix-crl', f.crlDer),
    'POST DER as application/octet-stream': await post(kernel, '/api/v1/rfc5280/crl', 'application/octet-stream', f.crlDer),
    'POST PEM as text/plain': await post(kernel, '/api/v1/rfc5280/crl', 'text/plain', f.crlPem),
    'POST PEM as application/x-pem-file': await post(kernel, '/api/v1/rfc5280/crl', 'application/x-pem-file', f.crlPem),
  };
  for (const [how, res] of Object.entries(answers)) {
    t.equal(res.statusCode, 200, `${how}: 200 ${res.statusCode === 200 ? '' : res.body}`);
    t.equal(res.headers['content-type'], 'application/json', `${how}: exactly application/json`);
    t.same(res.json(), expected, `${how}: the decoded CRL`);
  }
  const body = answers['POST {crl}'].json() as { issuerDn: string; number: number; entries: { serial: string; reason: string; revocationDate: number }[] };
  t.equal(body.issuerDn, 'CN=Rare Test CA,O=Certwright Test,C=FR');
  t.notOk('issuer' in body, 'the old name is gone');
  t.equal(body.number, 1, 'the CRL number as a JSON integer');
  t.same(
    body.entries.map((e) => [e.serial, e.revocationDate, e.reason]),
    opensslCrlEntries(f.crlText).map((e) => [e.serial, e.revocationDate, OPENSSL_REASONS[e.reason!]]),
    'entries as openssl prints them',
  );
});

t.test('PKCS#12: JSON with string or {value} fields, raw with the password header; wrong password is PKI-003', async (t) => {
  const capture = new LogCapture();
  const kernel = await bootKernel(t, { log: { level: 'debug' } }, { capture });
  const tools = rareTools(t);
  fixtures(tools);
  const legacy = tools.read('legacy.p12').toString('base64');
  const modern = tools.read('modern.p12').toString('base64');
  const leafSha1 = /Fingerprint=(\S+)/.exec(tools.run(['x509', '-in', 'leaf.pem', '-noout', '-fingerprint', '-sha1']))![1]!.replace(/:/g, '').toLowerCase();

  const asString = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: legacy, password: PASSWORD });
  t.equal(asString.statusCode, 200, asString.body);
  t.equal(asString.headers['content-type'], 'application/json');
  const decoded = asString.json() as {
    certificates: { certificateSHAOneThumbprint: string; dn: string; issuerDn: string; pem: string }[];
    keys: { keyType: string; matchesCertificate: string }[];
    friendlyNames: string[];
    macAlgorithm: string;
    encryption: string;
    encryptionAlgorithms: string[];
  };
  t.same(
    decoded.certificates.map((c) => c.dn),
    ['CN=leaf.example', 'CN=Rare Test CA,O=Certwright Test,C=FR'],
  );
  t.match(decoded.certificates[0], { issuerDn: 'CN=Rare Test CA,O=Certwright Test,C=FR', certificateSHAOneThumbprint: leafSha1 }, 'certificates as the x509 decoder answers them');
  t.notOk('issuer' in decoded.certificates[0]!, "under Horizon's names only");
  t.match(decoded, { encryption: 'legacy', macAlgorithm: 'sha1', friendlyNames: ['Leaf'], keys: [{ keyType: 'ec-secp256r1', matchesCertificate: leafSha1 }] });
  t.same(decoded.encryptionAlgorithms, ['pbeWithSHA1And40BitRC2-CBC', 'pbeWithSHA1And3-KeyTripleDES-CBC']);
  t.notOk(asString.body.includes('PRIVATE KEY'), 'no key material');
  t.notOk(asString.body.includes(PASSWORD), 'the password is not echoed');

  const asValues = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: { value: modern }, password: { value: PASSWORD } });
  t.equal(asValues.statusCode, 200, asValues.body);
  t.match(asValues.json(), { encryption: 'modern', macAlgorithm: 'sha256', keys: [{ matchesCertificate: leafSha1 }] });

  const raw = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/x-pkcs12', tools.read('legacy.p12'), { ...AUTH, 'x-pkcs12-password': PASSWORD });
  t.equal(raw.statusCode, 200, raw.body);
  t.same(raw.json(), asString.json(), 'raw body, same answer');

  for (const [how, res] of Object.entries({
    'wrong password': await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: legacy, password: 'wrong-password-123' }),
    'no password': await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: modern }),
    'raw, wrong header': await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/x-pkcs12', tools.read('modern.p12'), { ...AUTH, 'x-pkcs12-password': 'nope' }),
  })) {
    t.equal(res.statusCode, 400, how);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.match(res.json(), { error: 'PKI-003', message: 'The password does not open this object', status: 400 }, how);
  }
  const wrongKind = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: tools.text('ca.pem'), password: PASSWORD });
  t.match(wrongKind.json(), { error: 'PKI-002', status: 400 }, 'a certificate PEM is the wrong kind');
  const missing = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { password: PASSWORD });
  t.match(missing.json(), { error: 'PKI-001', status: 400 }, 'no file');
  const badPassword = await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: legacy, password: 42 });
  t.match(badPassword.json(), { error: 'PKI-003' }, 'a password that is not a string');

  t.notOk(capture.text.includes(PASSWORD), 'the password never reaches the log');
  t.notOk(capture.text.includes('wrong-password-123'), 'nor a wrong one');
});

t.test('detect: JSON {data}, a bare JSON string, a JWK, raw bodies', async (t) => {
  const kernel = await bootKernel(t);
  const tools = rareTools(t);
  const f = fixtures(tools);
  tools.sshKeygen(['-q', '-t', 'ed25519', '-N', '', '-C', 'me@example', '-f', 'id_ed25519']);
  const cases: [string, string, string | Buffer | object, object][] = [
    ['{data: PEM}', 'application/json', { data: f.crlPem }, { type: 'crl', encoding: 'pem', label: 'X509 CRL', value: { issuerDn: 'CN=Rare Test CA,O=Certwright Test,C=FR' } }],
    ['a bare JSON string', 'application/json', JSON.stringify(tools.text('ca.pem')), { type: 'certificate', encoding: 'pem', value: { issuerDn: 'CN=Rare Test CA,O=Certwright Test,C=FR', selfSigned: true } }],
    ['{data: base64}', 'application/json', { data: tools.read('modern.p12').toString('base64') }, { type: 'pkcs12', encoding: 'base64' }],
    ['{data: OpenSSH line}', 'application/json', { data: tools.text('id_ed25519.pub') }, { type: 'openssh-public-key', encoding: 'openssh', details: { comment: 'me@example' } }],
    ['a JWK object', 'application/json', { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }, { type: 'jwk', encoding: 'json', details: { kty: 'OKP', private: false } }],
    ['{data: JWK}', 'application/json', { data: { kty: 'EC', crv: 'P-256' } }, { type: 'jwk', encoding: 'json' }],
    ['raw DER', 'application/octet-stream', f.crlDer, { type: 'crl', encoding: 'der' }],
    ['raw PKCS#12', 'application/x-pkcs12', tools.read('legacy.p12'), { type: 'pkcs12', encoding: 'der' }],
    ['raw PEM text', 'text/plain', tools.text('leaf.key'), { type: 'private-key-pkcs8', encoding: 'pem', label: 'PRIVATE KEY' }],
    ['raw OpenSSH key', 'text/plain', tools.text('id_ed25519'), { type: 'openssh-private-key', encoding: 'pem' }],
  ];
  for (const [how, type, payload, want] of cases) {
    const res = await post(kernel, '/api/v1/crypto/detect', type, payload);
    t.equal(res.statusCode, 200, `${how}: ${res.statusCode === 200 ? 'ok' : res.body}`);
    t.match(res.json(), want, how);
  }
  const key = await post(kernel, '/api/v1/crypto/detect', 'text/plain', tools.text('leaf.key'));
  t.notOk(key.body.includes('BEGIN'), 'details never carry key material');
});

t.test('bad input answers 400 with a specific code, never 500; strangers are refused', async (t) => {
  const kernel = await bootKernel(t);
  const tools = rareTools(t);
  const f = fixtures(tools);
  const nested = Buffer.concat([Buffer.alloc(4000).map((_, i) => (i % 2 ? 0x80 : 0x30)), Buffer.alloc(4000, 0)]);
  const cases: [string, () => ReturnType<typeof post>, string][] = [
    ['CRL: truncated DER', () => post(kernel, '/api/v1/rfc5280/crl', 'application/pkix-crl', f.crlDer.subarray(0, 100)), 'PKI-001'],
    ['CRL: garbage text', () => post(kernel, '/api/v1/rfc5280/crl', 'application/json', { crl: 'not a crl!' }), 'PKI-001'],
    ['CRL: a certificate PEM', () => post(kernel, '/api/v1/rfc5280/crl', 'application/json', { pem: tools.text('ca.pem') }), 'PKI-002'],
    ['CRL: a certificate DER', () => post(kernel, '/api/v1/rfc5280/crl', 'application/octet-stream', tools.der('ca.pem', 'x509')), 'PKI-002'],
    ['CRL: absurd length', () => post(kernel, '/api/v1/rfc5280/crl', 'application/octet-stream', Buffer.from([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x30, 0x00])), 'PKI-004'],
    ['CRL: deep nesting', () => post(kernel, '/api/v1/rfc5280/crl', 'application/octet-stream', nested), 'PKI-005'],
    ['CRL: empty JSON object', () => post(kernel, '/api/v1/rfc5280/crl', 'application/json', {}), 'PKI-001'],
    ['CRL GET: garbage', () => get(kernel, '/api/v1/rfc5280/crl/garbage%21'), 'PKI-001'],
    ['PKCS#12: truncated', () => post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: tools.read('modern.p12').subarray(0, 200).toString('base64'), password: PASSWORD }), 'PKI-001'],
    ['PKCS#12: deep nesting', () => post(kernel, '/api/v1/rfc5280/pkcs12', 'application/x-pkcs12', nested), 'PKI-005'],
    ['detect: garbage', () => post(kernel, '/api/v1/crypto/detect', 'application/json', { data: '%%% not anything %%%' }), 'PKI-001'],
    ['detect: deep nesting', () => post(kernel, '/api/v1/crypto/detect', 'application/octet-stream', nested), 'PKI-005'],
    ['detect: a number', () => post(kernel, '/api/v1/crypto/detect', 'application/json', '42'), 'PKI-001'],
    ['detect: empty raw body', () => post(kernel, '/api/v1/crypto/detect', 'text/plain', ''), 'PKI-001'],
  ];
  for (const [how, send, code] of cases) {
    const started = performance.now();
    const res = await send();
    t.equal(res.statusCode, 400, `${how}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${how}: problem+json`);
    t.match(res.json(), { error: code, status: 400 }, `${how}: ${code}`);
    t.ok(performance.now() - started < 2000, `${how}: in bounded time`);
  }

  const stranger = { host: 'localhost' };
  for (const res of [
    await get(kernel, `/api/v1/rfc5280/crl/${encodeURIComponent(f.crlPem)}`, stranger),
    await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { crl: f.crlPem }, stranger),
    await post(kernel, '/api/v1/rfc5280/pkcs12', 'application/json', { pkcs12: 'x', password: 'y' }, stranger),
    await post(kernel, '/api/v1/crypto/detect', 'application/json', { data: f.crlPem }, stranger),
  ]) {
    t.equal(res.statusCode, 401, 'unauthenticated callers are refused');
  }

  const routes = kernel.app.routeTable.filter((r) => /rfc5280\/(crl|pkcs12)|crypto\/detect/.test(r.url));
  t.ok(routes.length >= 4);
  for (const r of routes) t.match(r, { capability: 'common', access: 'authenticated' }, `${r.method} ${r.url}`);
});

t.test('a CRL of several megabytes goes through POST (above the default 1 MiB body limit)', async (t) => {
  const kernel = await bootKernel(t);
  const tools = rareTools(t);
  tools.ca();
  const lines: string[] = [];
  for (let i = 0; i < 60_000; i++) lines.push(`R\t300101000000Z\t240102030405Z,keyCompromise\t${(0x200000 + i).toString(16).toUpperCase()}\tunknown\t/CN=n${i}`);
  tools.write('index.txt', `${lines.join('\n')}\n`);
  tools.gencrl();
  const der = tools.der('crl.pem', 'crl');
  t.ok(der.length > 1024 * 1024, `${der.length} bytes`);
  const raw = await post(kernel, '/api/v1/rfc5280/crl', 'application/pkix-crl', der);
  t.equal(raw.statusCode, 200);
  t.equal((raw.json() as { entries: unknown[] }).entries.length, 60_000);
  const json = await post(kernel, '/api/v1/rfc5280/crl', 'application/json', { crl: tools.text('crl.pem') });
  t.equal(json.statusCode, 200);
  t.equal((json.json() as { entries: unknown[] }).entries.length, 60_000);
});
