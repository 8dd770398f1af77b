/**
 * Enrollment end to end, as an operator would see it: a real server (kernel.listen on 127.0.0.1) on a fresh
 * database, driven by `curl` (a child process) with the administrator's API key, checked with the `openssl` CLI.
 *
 * The first start creates the local CA connector `local-ca` and the WebRA profile `default` bound to it. Then:
 * - centralized enroll (keyType, no CSR): the PKCS#12 answered opens with `openssl pkcs12 -info` and the password
 *   answered beside it, and its certificate chains to the local CA (`openssl verify`, the chain from GET
 *   /pki/local-ca/ca and /api/v1/rfc5280/tc);
 * - decentralized enroll with an openssl-made CSR, revoked through /requests/submit (workflow revoke): the CRL
 *   published at GET /pki/local-ca/crl lists its serial (`openssl crl`, verified against the CA) and `openssl ocsp`
 *   against /pki/local-ca/ocsp says revoked (POST and GET forms), while the centralized certificate is good.
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP, tempDir, testConfig } from '../helpers/kernel.js';
import { freePort } from '../connectors/acme-upstream/pebble.js';

const run = promisify(execFile);
const dir = tempDir(t, 'cw-e2e-enroll-');
const file = (name: string) => join(dir, name);

/** openssl in the work dir (asynchronous: the server answering curl runs in this very process). */
async function openssl(args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run('openssl', args, { cwd: dir, encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`openssl ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

// A concrete port (not 0): publicBaseUrl defaults to http://<server.host>:<server.port>, and the certificates the
// local CA issues carry that URL for their CRL and OCSP.
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = await testConfig(t, { ...ENROLLMENT_BOOTSTRAP, server: { host: '127.0.0.1', port } });
const kernel = await bootKernel(t, {}, { config });
await kernel.listen();

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  json<T = Record<string, unknown>>(): T;
}

let seq = 0;
/** One request with curl: JSON body (or a file's bytes), the admin API key unless `auth: false`. */
async function curl(method: string, path: string, options: { json?: unknown; dataFile?: string; contentType?: string; auth?: boolean } = {}): Promise<Answer> {
  const out = file(`curl-${++seq}.out`);
  const args = ['-sS', '-X', method, '-o', out, '-w', '%{http_code} %{content_type}'];
  if (options.auth !== false) for (const [k, v] of Object.entries(ADMIN_HEADERS)) args.push('-H', `${k}: ${v}`);
  if (options.json !== undefined) {
    const bodyFile = file(`curl-${seq}.json`);
    writeFileSync(bodyFile, JSON.stringify(options.json));
    args.push('-H', 'content-type: application/json', '--data-binary', `@${bodyFile}`);
  } else if (options.dataFile) {
    args.push('-H', `content-type: ${options.contentType ?? 'application/octet-stream'}`, '--data-binary', `@${options.dataFile}`);
  }
  args.push(`${base}${path}`);
  const { stdout } = await run('curl', args, { encoding: 'utf8' });
  const [code, ...type] = stdout.trim().split(' ');
  const body = readFileSync(out);
  return {
    status: Number(code),
    contentType: type.join(' '),
    body,
    json: <T,>() => JSON.parse(body.toString('utf8')) as T,
  };
}

const describe = (a: Answer) => `${a.status} ${a.contentType}: ${a.body.toString('utf8').slice(0, 600)}`;
const pemOf = (der: Buffer, label = 'CERTIFICATE') => `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
const serialOf = (pem: string) => new X509Certificate(pem).serialNumber.toUpperCase().replace(/^0+/, '');

interface RequestAnswer {
  _id: string;
  status: string;
  certificateId?: string;
  certificate?: { _id: string; certificate: string; serial: string; revoked: boolean; metadata: { key: string; value: string }[]; profile?: string; module?: string } | null;
  pkcs12?: { value: string };
  password?: { value: string };
}

/** The chain of the local CA, root last: root.pem (trust anchor) and issuing.pem (untrusted intermediates). */
let rootPem = '';
let issuingPem = '';
let centralizedPem = '';

t.test('first start: connector local-ca and profile default exist', async (t) => {
  const connectors = await curl('GET', '/api/v1/pki/connectors/');
  t.equal(connectors.status, 200, describe(connectors));
  const list = connectors.json<{ name: string; type: string; enabled: boolean }[]>();
  t.match(list.find((c) => c.name === 'local-ca'), { name: 'local-ca', type: 'local-ca', enabled: true }, 'connector local-ca');
  const profile = await curl('GET', '/api/v1/certificate/profiles/default');
  t.equal(profile.status, 200, describe(profile));
  t.match(profile.json(), { name: 'default', pkiConnector: 'local-ca', enabled: true }, 'profile default bound to local-ca');
});

t.test('the CA chain: GET /pki/local-ca/ca (DER) and the trust chain of an issued certificate', async (t) => {
  const ca = await curl('GET', '/pki/local-ca/ca', { auth: false });
  t.equal(ca.status, 200, describe(ca));
  t.equal(ca.contentType, 'application/pkix-cert');
  issuingPem = pemOf(ca.body);
  const issuing = new X509Certificate(issuingPem);
  t.ok(issuing.ca, 'the issuing CA is a CA');
  t.not(issuing.subject, issuing.issuer, 'the issuing CA is not the root');
  // The root: the connector's materials (also imported into /api/v1/cas so that trust chains build).
  const materials = await curl('PATCH', '/api/v1/pki/connectors/materials', { json: { name: 'local-ca' } });
  t.equal(materials.status, 200, describe(materials));
  const chain = materials.json<{ chain: string[] }>().chain;
  t.ok(chain.length >= 2, 'issuing CA and root');
  t.equal(new X509Certificate(chain[0]!).fingerprint256, issuing.fingerprint256, 'materials start with the issuing CA');
  rootPem = chain.at(-1)!;
  const root = new X509Certificate(rootPem);
  t.equal(root.subject, root.issuer, 'the last one is a self-signed root');
  t.ok(issuing.verify(root.publicKey), 'the root signed the issuing CA');
  writeFileSync(file('root.pem'), rootPem);
  writeFileSync(file('issuing.pem'), issuingPem);
  writeFileSync(file('ca-chain.pem'), issuingPem + rootPem);
});

t.test('centralized enroll through curl: the PKCS#12 opens with the returned password and chains to the local CA', async (t) => {
  const res = await curl('POST', '/api/v1/requests/submit', {
    json: {
      module: 'webra',
      workflow: 'enroll',
      profile: 'default',
      template: { subject: [{ element: 'cn.1', value: 'curl.example' }], sans: [{ type: 'DNSNAME', value: ['curl.example'] }], keyType: 'ec-secp256r1' },
    },
  });
  t.ok(res.status === 200 || res.status === 201, describe(res));
  t.equal(res.contentType, 'application/json', 'JSON answer');
  const request = res.json<RequestAnswer>();
  t.equal(request.status, 'completed', describe(res));
  t.type(request.pkcs12?.value, 'string', 'pkcs12.value');
  t.type(request.password?.value, 'string', 'password.value');
  if (!request.pkcs12 || !request.password) return;
  t.ok(request.password.value.length >= 8, 'a generated password of some length');
  writeFileSync(file('centralized.p12'), Buffer.from(request.pkcs12.value, 'base64'));

  const info = await openssl(['pkcs12', '-info', '-in', 'centralized.p12', '-passin', `pass:${request.password.value}`, '-nodes']);
  t.match(info.stdout, /-----BEGIN PRIVATE KEY-----/, 'the private key is in it');
  t.match(info.stdout, /-----BEGIN CERTIFICATE-----/, 'the certificate is in it');
  // OpenSSL 3 checks the MAC before anything else (exit 1 "Mac verify error" otherwise) and prints what it used.
  t.match(info.stderr, /MAC: sha256/, 'an HMAC-SHA256 MAC, verified with the returned password');
  t.match(info.stderr, /Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC/, 'the key is encrypted with PBES2 / AES-256-CBC');
  await t.rejects(openssl(['pkcs12', '-info', '-in', 'centralized.p12', '-passin', 'pass:not-the-password', '-nodes']), /Mac verify error/, 'a wrong password does not open it');

  const leaf = await openssl(['pkcs12', '-in', 'centralized.p12', '-passin', `pass:${request.password.value}`, '-clcerts', '-nokeys']);
  writeFileSync(file('centralized.pem'), leaf.stdout);
  centralizedPem = new X509Certificate(leaf.stdout).toString();
  const cert = new X509Certificate(centralizedPem);
  t.match(cert.subject, /CN=curl\.example/);
  t.match(cert.subjectAltName, /DNS:curl\.example/);
  t.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1', 'a P-256 key as asked');
  // The private key in the PKCS#12 is the certificate's.
  const key = await openssl(['pkcs12', '-in', 'centralized.p12', '-passin', `pass:${request.password.value}`, '-nocerts', '-nodes']);
  writeFileSync(file('centralized.key'), key.stdout);
  t.ok(cert.checkPrivateKey(createPrivateKey(key.stdout)), 'the key matches the certificate');
  if (request.certificate) t.equal(new X509Certificate(request.certificate.certificate).fingerprint256, cert.fingerprint256, 'the request carries the same certificate');
  t.match(request.certificate?.metadata, [{ key: 'pki_connector', value: 'local-ca' }], 'metadata pki_connector');

  const verify = await openssl(['verify', '-CAfile', 'root.pem', '-untrusted', 'issuing.pem', 'centralized.pem']);
  t.match(verify.stdout, /centralized\.pem: OK/, 'openssl verify: chains to the local CA root');

  // The same chain as the trust chain decoder builds it from the imported CAs.
  const tc = await curl('POST', '/api/v1/rfc5280/tc', { json: { pem: centralizedPem } });
  t.equal(tc.status, 200, describe(tc));
  const path = tc.json<{ pem: string; selfSigned: boolean }[]>();
  t.equal(path.length, 3, 'leaf → issuing CA → root');
  t.equal(new X509Certificate(path[2]!.pem).fingerprint256, new X509Certificate(rootPem).fingerprint256, 'the root is the local CA root');
  writeFileSync(file('tc-root.pem'), path[2]!.pem);
  writeFileSync(file('tc-issuing.pem'), path[1]!.pem);
  const verifyTc = await openssl(['verify', '-CAfile', 'tc-root.pem', '-untrusted', 'tc-issuing.pem', 'centralized.pem']);
  t.match(verifyTc.stdout, /OK/, 'openssl verify with the chain of /api/v1/rfc5280/tc');
});

t.test('decentralized enroll with an openssl CSR, revoke: CRL and OCSP say revoked, the other certificate is good', async (t) => {
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'dec.key', '-out', 'dec.csr', '-subj', '/CN=dec.example', '-addext', 'subjectAltName=DNS:dec.example']);
  const csr = readFileSync(file('dec.csr'), 'utf8');
  const res = await curl('POST', '/api/v1/requests/submit', {
    json: {
      module: 'webra',
      workflow: 'enroll',
      profile: 'default',
      template: { csr, subject: [{ element: 'cn.1', value: 'dec.example' }], sans: [{ type: 'DNSNAME', value: ['dec.example'] }] },
    },
  });
  t.ok(res.status === 200 || res.status === 201, describe(res));
  const request = res.json<RequestAnswer>();
  t.equal(request.status, 'completed', describe(res));
  t.equal(request.pkcs12, undefined, 'no PKCS#12 for a CSR enrollment');
  const pem = request.certificate?.certificate;
  t.type(pem, 'string', 'the certificate object');
  if (!pem || !request.certificate) return;
  writeFileSync(file('dec.pem'), pem);
  const cert = new X509Certificate(pem);
  t.match(cert.subject, /CN=dec\.example/);
  t.ok(cert.checkPrivateKey(createPrivateKey(readFileSync(file('dec.key')))), "issued for the CSR's key");
  t.match((await openssl(['verify', '-CAfile', 'root.pem', '-untrusted', 'issuing.pem', 'dec.pem'])).stdout, /dec\.pem: OK/, 'chains to the local CA');
  // The publication URLs the local CA wrote in the certificate are this server's.
  t.equal((await openssl(['x509', '-in', 'dec.pem', '-noout', '-ocsp_uri'])).stdout.trim(), `${base}/pki/local-ca/ocsp`, 'AIA OCSP URL');
  t.match((await openssl(['x509', '-in', 'dec.pem', '-noout', '-ext', 'crlDistributionPoints'])).stdout, `URI:${base}/pki/local-ca/crl`, 'CRL distribution point');

  const ocspStatus = async (certFile: string): Promise<string> => {
    const out = await openssl(['ocsp', '-url', `${base}/pki/local-ca/ocsp`, '-issuer', 'issuing.pem', '-cert', certFile, '-CAfile', 'ca-chain.pem']);
    t.match(out.stderr, /Response verify OK/, `the OCSP response for ${certFile} verifies`);
    return out.stdout;
  };
  t.match(await ocspStatus('dec.pem'), /dec\.pem: good/, 'OCSP: good before the revocation');

  const revoke = await curl('POST', '/api/v1/requests/submit', {
    json: { module: 'webra', workflow: 'revoke', certificateId: request.certificate._id, template: { revocationReason: 'KEYCOMPROMISE' } },
  });
  t.ok(revoke.status === 200 || revoke.status === 201, describe(revoke));
  t.match(revoke.json(), { workflow: 'revoke', status: 'completed' }, describe(revoke));
  const again = await curl('POST', '/api/v1/requests/submit', { json: { workflow: 'revoke', certificateId: request.certificate._id, template: { revocationReason: 'keycompromise' } } });
  t.ok(again.status >= 400 && again.status < 500, describe(again));
  t.match(again.json(), { error: 'WEBRA-REVOKE-005' }, 'revoking again: WEBRA-REVOKE-005');

  const crl = await curl('GET', '/pki/local-ca/crl', { auth: false });
  t.equal(crl.status, 200, describe(crl));
  t.equal(crl.contentType, 'application/pkix-crl');
  writeFileSync(file('local-ca.crl'), crl.body);
  const crlText = await openssl(['crl', '-inform', 'DER', '-in', 'local-ca.crl', '-noout', '-text', '-CAfile', 'ca-chain.pem']);
  t.match(crlText.stderr + crlText.stdout, /verify OK/, 'openssl crl: signed by the issuing CA');
  const listed = [...crlText.stdout.matchAll(/Serial Number: ([0-9A-F]+)/g)].map((m) => m[1]!.replace(/^0+/, ''));
  t.ok(listed.includes(serialOf(pem)), `the CRL lists ${serialOf(pem)} (lists ${listed.join(', ')})`);
  t.notOk(listed.includes(serialOf(centralizedPem)), 'and not the centralized certificate');
  t.match(crlText.stdout, /Key Compromise/, 'with its reason');
  writeFileSync(file('local-ca-crl.pem'), pemOf(crl.body, 'X509 CRL'));
  await t.rejects(openssl(['verify', '-crl_check', '-CRLfile', 'local-ca-crl.pem', '-CAfile', 'root.pem', '-untrusted', 'issuing.pem', 'dec.pem']), /certificate revoked/, 'openssl verify -crl_check: revoked');

  t.match(await ocspStatus('dec.pem'), /dec\.pem: revoked/, 'OCSP (POST): revoked');
  t.match(await ocspStatus('centralized.pem'), /centralized\.pem: good/, 'OCSP (POST): the other certificate is good');

  // The GET form of RFC 6960 appendix A.1: base64 of the DER request, URL-encoded, in the path.
  await openssl(['ocsp', '-issuer', 'issuing.pem', '-cert', 'dec.pem', '-no_nonce', '-reqout', 'dec-ocsp.req']);
  const encoded = encodeURIComponent(readFileSync(file('dec-ocsp.req')).toString('base64'));
  const viaGet = await curl('GET', `/pki/local-ca/ocsp/${encoded}`, { auth: false });
  t.equal(viaGet.status, 200, describe(viaGet));
  t.equal(viaGet.contentType, 'application/ocsp-response');
  writeFileSync(file('dec-ocsp.resp'), viaGet.body);
  const fromGet = await openssl(['ocsp', '-respin', 'dec-ocsp.resp', '-issuer', 'issuing.pem', '-cert', 'dec.pem', '-CAfile', 'ca-chain.pem']);
  t.match(fromGet.stdout, /dec\.pem: revoked/, 'OCSP (GET): revoked');
  t.match(fromGet.stderr, /Response verify OK/);

  const stored = await curl('GET', `/api/v1/certificates/${request.certificate._id}`);
  t.equal(stored.status, 200, describe(stored));
  t.match(stored.json(), { certificate: { revoked: true, revocationReason: /keycompromise/i, metadata: [{ key: 'pki_connector', value: 'local-ca' }] } }, 'the inventory has it revoked');
});
