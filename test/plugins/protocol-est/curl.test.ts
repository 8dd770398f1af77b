/**
 * EST with curl and openssl, as an administrator would try it after `npm start`: the CA certificates, an
 * enrollment with HTTP Basic (a local account), one with a one-time challenge from the request API, a
 * re-enrollment over mutual TLS with the certificate being renewed, one authenticated by a CSR signed by the
 * current certificate's key, and a profile whose requests wait for an
 * approver (202 + Retry-After, then the same CSR gets its certificate). Every certificate verifies with
 * `openssl verify` against the profile's chain. Runs on SQLite and MariaDB.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { estKernel, opensslVerifies, run } from './est-kernel.js';

const est = await estKernel(t);
const admin = caller(est.kernel, { ...ADMIN_HEADERS, host: '127.0.0.1' });
const device = await createPrincipal(est.kernel, 'device-enroller', { secret: 'Device-Enroller-Secret-1!' });
const approver = await createPrincipal(est.kernel, 'approver', { permissions: [{ value: 'lifecycle:*:gated:*:approve' } as never] });
const created = await admin('POST', '/api/v1/certificate/profiles/', { name: 'gated', pkiConnector: 'local-ca', validityDays: 30, protocols: { est: { enabled: true, requireApproval: true } } });
if (created.statusCode !== 201) throw new Error(created.body);
let n = 0;

/** A fresh P-256 key and CSR (DER, and its single-line base64) in the scratch folder. */
async function newCsr(cn: string): Promise<{ key: string; der: string; b64: string }> {
  const base = join(est.dir, `csr-${++n}`);
  await run('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${base}.key`, '-subj', `/CN=${cn}`, '-outform', 'DER', '-out', `${base}.der`]);
  writeFileSync(`${base}.b64`, readFileSync(`${base}.der`).toString('base64'));
  return { key: `${base}.key`, der: `${base}.der`, b64: `${base}.b64` };
}

interface CurlAnswer {
  status: number;
  headers: string;
  body: string;
  /** The first certificate of a PKCS#7 answer, as a PEM file. */
  certFile?: string;
}

/** curl over HTTPS trusting only the local CA's root; a 200 PKCS#7 body is decoded with `base64 -di | openssl pkcs7`. */
async function curl(path: string, args: string[] = []): Promise<CurlAnswer> {
  const base = join(est.dir, `curl-${++n}`);
  const { stdout } = await run('curl', ['-sS', '--cacert', est.rootFile, '-D', `${base}.headers`, '-o', `${base}.body`, '-w', '%{http_code}', ...args, `${est.https}${path}`]);
  const answer: CurlAnswer = { status: Number(stdout), headers: readFileSync(`${base}.headers`, 'utf8'), body: readFileSync(`${base}.body`, 'utf8') };
  if (answer.status === 200 && /pkcs7-mime/i.test(answer.headers)) {
    await run('bash', ['-c', `base64 -di < ${base}.body | openssl pkcs7 -inform DER -print_certs -out ${base}.pem`]);
    answer.certFile = `${base}.pem`;
  }
  return answer;
}

const enrollArgs = (b64: string, user?: string) => [...(user ? ['-u', user] : []), '-H', 'Content-Type: application/pkcs10', '-H', 'Content-Transfer-Encoding: base64', '--data-binary', `@${b64}`];

async function subjectOf(file: string): Promise<string> {
  return (await run('openssl', ['x509', '-in', file, '-noout', '-subject', '-nameopt', 'RFC2253'])).stdout.trim();
}

t.test('cacerts: the profile chain as single-line base64 PKCS#7, labeled and unlabeled', async (t) => {
  for (const path of ['/.well-known/est/default/cacerts', '/.well-known/est/cacerts']) {
    const answer = await curl(path);
    t.equal(answer.status, 200, path);
    t.match(answer.headers, /content-type: application\/pkcs7-mime; smime-type=certs-only/i);
    t.match(answer.headers, /content-length: \d+/i, 'a Content-Length, no chunks');
    t.notMatch(answer.body, /\n/, 'one line of base64');
    const printed = readFileSync(answer.certFile!, 'utf8');
    t.equal(printed.match(/BEGIN CERTIFICATE/g)?.length, 2, 'issuing CA and root');
  }
});

let basicCert = '';
let basicKey = '';
t.test('simpleenroll with HTTP Basic (a local account)', async (t) => {
  const csr = await newCsr('device1.example');
  const answer = await curl('/.well-known/est/default/simpleenroll', enrollArgs(csr.b64, `${device.identifier}:${device.secret}`));
  t.equal(answer.status, 200, answer.body);
  t.notMatch(answer.body, /\n/, 'one line of base64');
  t.ok(await opensslVerifies(est, answer.certFile!), 'openssl verify: OK against the profile chain');
  t.equal(await subjectOf(answer.certFile!), 'subject=CN=device1.example');
  const found = (await admin('POST', '/api/v1/requests/search', { query: 'module equals "est"' })).json();
  t.match(found.results, [{ requester: device.identifier, status: 'completed', module: 'est' }], 'the request is the local account\'s');
  basicCert = answer.certFile!;
  basicKey = csr.key;
  const unlabeled = await curl('/.well-known/est/simpleenroll', enrollArgs((await newCsr('device2.example')).b64, `${device.identifier}:${device.secret}`));
  t.equal(unlabeled.status, 200, 'the unlabeled form enrolls on the default EST profile');
});

t.test('simpleenroll with a one-time challenge from the request API', async (t) => {
  const submitted = await admin('POST', '/api/v1/requests/submit', { module: 'est', workflow: 'enroll', profile: 'default', template: {} });
  t.equal(submitted.statusCode, 201, submitted.body);
  const challenge = submitted.json().password?.value as string;
  t.ok(challenge, 'the challenge is answered once, in password.value');
  t.equal(submitted.json().status, 'approved');
  const csr = await newCsr('challenged.example');
  const answer = await curl('/.well-known/est/default/simpleenroll', enrollArgs(csr.b64, `device:${challenge}`));
  t.equal(answer.status, 200, answer.body);
  t.ok(await opensslVerifies(est, answer.certFile!));
  const request = (await admin('GET', `/api/v1/requests/${submitted.json()._id}`)).json();
  t.equal(request.status, 'completed', 'the challenge request is completed by the enrollment');
  const again = await curl('/.well-known/est/default/simpleenroll', enrollArgs((await newCsr('replay.example')).b64, `device:${challenge}`));
  t.equal(again.status, 401, 'a spent challenge: 401');
  t.match(again.body, /^EST-006: /);
  t.match(again.headers, /www-authenticate: Basic/i);
  const webra = await admin('POST', '/api/v1/challenge/submit', { challenge, csr: readFileSync(csr.der).toString('base64') });
  t.equal(webra.statusCode, 403, 'an EST challenge is not spent on the WebRA challenge API');
});

t.test('simplereenroll over mutual TLS with the current certificate', async (t) => {
  const csr = await newCsr('device1.example');
  const answer = await curl('/.well-known/est/default/simplereenroll', [...enrollArgs(csr.b64), '--cert', basicCert, '--key', basicKey]);
  t.equal(answer.status, 200, answer.body);
  t.ok(await opensslVerifies(est, answer.certFile!));
  t.equal(await subjectOf(answer.certFile!), 'subject=CN=device1.example', 'the subject is kept');
  const renewed = (await admin('POST', '/api/v1/requests/search', { query: 'workflow equals "renew"' })).json();
  t.match(renewed.results, [{ module: 'est', workflow: 'renew', status: 'completed' }], 'a renew request of the workflow');
  const changed = await curl('/.well-known/est/default/simplereenroll', [...enrollArgs((await newCsr('other.example')).b64), '--cert', basicCert, '--key', basicKey]);
  t.equal(changed.status, 400, 'a new subject is refused');
  t.match(changed.body, /^EST-008: /);
  const noCert = await curl('/.well-known/est/default/simplereenroll', enrollArgs((await newCsr('device1.example')).b64, `${device.identifier}:${device.secret}`));
  t.equal(noCert.status, 403, 'Basic alone (a new key) does not re-enroll');
  t.match(noCert.body, /^EST-007: /);
});

t.test('simplereenroll without a client certificate: a CSR signed by the current certificate\'s key', async (t) => {
  const sameKey = join(est.dir, 'same-key');
  await run('openssl', ['req', '-new', '-key', basicKey, '-subj', '/CN=device1.example', '-outform', 'DER', '-out', `${sameKey}.der`]);
  writeFileSync(`${sameKey}.b64`, readFileSync(`${sameKey}.der`).toString('base64'));
  const answer = await curl('/.well-known/est/default/simplereenroll', enrollArgs(`${sameKey}.b64`));
  t.equal(answer.status, 200, answer.body);
  t.ok(await opensslVerifies(est, answer.certFile!));
  t.equal(await subjectOf(answer.certFile!), 'subject=CN=device1.example');
  const tampered = readFileSync(`${sameKey}.der`);
  tampered.writeUInt8(tampered[tampered.length - 3]! ^ 0xff, tampered.length - 3);
  writeFileSync(`${sameKey}-bad.b64`, tampered.toString('base64'));
  const before = (await admin('POST', '/api/v1/requests/search', { query: 'workflow equals "renew"', withCount: true })).json().count;
  const refused = await curl('/.well-known/est/default/simplereenroll', enrollArgs(`${sameKey}-bad.b64`));
  t.equal(refused.status, 400, 'the same key with a signature that does not verify: refused');
  t.match(refused.body, /^EST-009: WEBRA-ENROLL-006/);
  t.equal((await admin('POST', '/api/v1/requests/search', { query: 'workflow equals "renew"', withCount: true })).json().count, before, 'no request written');
});

t.test('a profile that needs approval: 202 + Retry-After, then the same CSR gets its certificate', async (t) => {
  const csr = await newCsr('gated.example');
  const first = await curl('/.well-known/est/gated/simpleenroll', enrollArgs(csr.b64, `${device.identifier}:${device.secret}`));
  t.equal(first.status, 202, first.body);
  t.match(first.headers, /retry-after: 60/i);
  const again = await curl('/.well-known/est/gated/simpleenroll', enrollArgs(csr.b64, `${device.identifier}:${device.secret}`));
  t.equal(again.status, 202, 'still waiting');
  const pending = (await admin('POST', '/api/v1/requests/search', { query: 'status equals "pending"' })).json().results as { _id: string; profile: string }[];
  t.equal(pending.filter((r) => r.profile === 'gated').length, 1, 'one request for the polled CSR, not one per poll');
  const approved = await caller(est.kernel, { ...approver.headers, host: '127.0.0.1' })('POST', '/api/v1/requests/approve', { _id: pending[0]!._id });
  t.equal(approved.statusCode, 200, approved.body);
  const polled = await curl('/.well-known/est/gated/simpleenroll', enrollArgs(csr.b64, `${device.identifier}:${device.secret}`));
  t.equal(polled.status, 200, polled.body);
  t.ok(await opensslVerifies(est, polled.certFile!));
});
