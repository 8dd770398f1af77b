/**
 * Bad EST input answers EST's own error form (a status, a plain-text body starting with a stable EST code),
 * leaves an EST-REQUEST-FAILED event and writes no request: wrong content type, bad base64, a CSR whose
 * signature does not verify, no credentials, wrong ones, an oversized body, an unknown profile, a profile
 * that allows only some methods, and a host without the est capability. Runs on SQLite and MariaDB.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import t from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';

const kernel = await bootKernel(t, {
  ...ENROLLMENT_BOOTSTRAP,
  certwright: { endpoints: [{ host: 'localhost', configuration: true, est: true, webra: true }, { host: 'other.example', acme: true }] as never },
});
const admin = caller(kernel, ADMIN_HEADERS);
const device = await createPrincipal(kernel, 'device', { secret: 'Device-Secret-1234!' });
const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
const deviceAuth = basic(device.identifier, device.secret);
const created = await admin('POST', '/api/v1/certificate/profiles/', { name: 'certonly', pkiConnector: 'local-ca', protocols: { est: { enabled: true, authentication: ['certificate'] } } });
if (created.statusCode !== 201) throw new Error(created.body);
const restricted = await admin('POST', '/api/v1/certificate/profiles/', { name: 'listed', pkiConnector: 'local-ca', protocols: { est: { enabled: true, accounts: ['someone-else'] } } });
if (restricted.statusCode !== 201) throw new Error(restricted.body);

/** A P-256 CSR (DER) for `cn`, built with pkijs and signed by its key. */
async function csrDer(cn: string): Promise<Buffer> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const csr = new pkijs.CertificationRequest();
  csr.subject.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: cn }) }));
  await csr.subjectPublicKeyInfo.importKey(await crypto.subtle.importKey('spki', publicKey.export({ type: 'spki', format: 'der' }), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']));
  await csr.sign(await crypto.subtle.importKey('pkcs8', privateKey.export({ type: 'pkcs8', format: 'der' }), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']), 'SHA-256');
  return Buffer.from(csr.toSchema().toBER(false));
}

const good = (await csrDer('ok.example')).toString('base64');

async function post(path: string, payload: string | Buffer, headers: Record<string, string> = {}) {
  return kernel.app.inject({ method: 'POST', url: path, payload, headers: { host: 'localhost', 'content-type': 'application/pkcs10', ...headers } });
}

async function requestCount(): Promise<number> {
  return (await admin('POST', '/api/v1/requests/search', { query: 'module equals "est"', withCount: true })).json().count as number;
}

async function failedEvents(): Promise<{ payload: { code: string } }[]> {
  return (await kernel.db.knex('events').where({ code: 'EST-REQUEST-FAILED' }).orderBy('seq').select('payload')).map((r: { payload: string }) => ({ payload: JSON.parse(r.payload) }));
}

const cases: { name: string; path?: string; body: string | Buffer; headers?: Record<string, string>; status: number; code: string }[] = [
  { name: 'a wrong content type', body: good, headers: { 'content-type': 'text/plain', authorization: deviceAuth }, status: 415, code: 'EST-001' },
  { name: 'no content type', body: good, headers: { 'content-type': '', authorization: deviceAuth }, status: 415, code: 'EST-001' },
  { name: 'bad base64', body: 'MII%%%not*base64', headers: { authorization: deviceAuth }, status: 400, code: 'EST-002' },
  { name: 'base64 of something else', body: Buffer.from('hello world').toString('base64'), headers: { authorization: deviceAuth }, status: 400, code: 'EST-002' },
  { name: 'an empty body', body: '', headers: { authorization: deviceAuth }, status: 400, code: 'EST-002' },
  { name: 'an oversized body', body: 'A'.repeat(70_000), headers: { authorization: deviceAuth }, status: 413, code: 'EST-003' },
  { name: 'an unknown profile', path: '/.well-known/est/nope/simpleenroll', body: good, headers: { authorization: deviceAuth }, status: 404, code: 'EST-004' },
  { name: 'no credentials', body: good, status: 401, code: 'EST-005' },
  { name: 'a wrong password', body: good, headers: { authorization: basic(device.identifier, 'wrong-password') }, status: 401, code: 'EST-006' },
  { name: 'Basic on a certificate-only profile', path: '/.well-known/est/certonly/simpleenroll', body: good, headers: { authorization: deviceAuth }, status: 401, code: 'EST-006' },
  { name: 'an account the profile does not list', path: '/.well-known/est/listed/simpleenroll', body: good, headers: { authorization: deviceAuth }, status: 403, code: 'EST-012' },
];

t.test('each bad input: its status, a text body with its code, an event, no request', async (t) => {
  for (const c of cases) {
    const before = (await failedEvents()).length;
    const res = await post(c.path ?? '/.well-known/est/default/simpleenroll', c.body, c.headers);
    t.equal(res.statusCode, c.status, `${c.name}: ${c.status}`);
    t.match(res.headers['content-type'], /^text\/plain/, `${c.name}: text body`);
    t.match(res.body, new RegExp(`^${c.code}: `), `${c.name}: ${c.code}`);
    const events = await failedEvents();
    t.equal(events.length, before + 1, `${c.name}: one event`);
    t.equal(events.at(-1)?.payload.code, c.code);
    if (c.status === 401) t.match(res.headers['www-authenticate'], /^Basic realm="EST"/, `${c.name}: a Basic challenge`);
  }
  t.equal(await requestCount(), 0, 'no request was written');
  const leaked = JSON.stringify(await failedEvents());
  t.notMatch(leaked, /wrong-password|Device-Secret/, 'no secret in the events');
});

t.test('a CSR whose signature does not verify', async (t) => {
  const der = await csrDer('tampered.example');
  der.writeUInt8(der[der.length - 5]! ^ 0xff, der.length - 5);
  const res = await post('/.well-known/est/default/simpleenroll', der.toString('base64'), { authorization: deviceAuth });
  t.equal(res.statusCode, 400);
  t.match(res.body, /^EST-009: WEBRA-ENROLL-006: /, 'the workflow\'s refusal, in EST form');
  t.equal(await requestCount(), 0, 'no request');
});

t.test('DER bodies and line-broken base64 are accepted (RFC 8951)', async (t) => {
  const der = await csrDer('der.example');
  t.equal((await post('/.well-known/est/default/simpleenroll', der, { authorization: deviceAuth })).statusCode, 200, 'raw DER');
  const wrapped = (await csrDer('wrapped.example')).toString('base64').replace(/.{1,64}/g, '$&\r\n');
  t.equal((await post('/.well-known/est/default/simpleenroll', wrapped, { authorization: deviceAuth, 'content-transfer-encoding': 'base64' })).statusCode, 200, 'base64 with CRLF line breaks');
});

t.test('the est capability gates the routes; cacerts needs no credentials', async (t) => {
  const res = await kernel.app.inject({ method: 'GET', url: '/.well-known/est/default/cacerts', headers: { host: 'other.example' } });
  t.equal(res.statusCode, 404, 'a host without est: 404');
  const ok = await kernel.app.inject({ method: 'GET', url: '/.well-known/est/default/cacerts', headers: { host: 'localhost' } });
  t.equal(ok.statusCode, 200);
  const disabled = await kernel.app.inject({ method: 'GET', url: '/.well-known/est/nope/cacerts', headers: { host: 'localhost' } });
  t.equal(disabled.statusCode, 404);
  t.match(disabled.body, /^EST-004: /);
});

t.test('Basic is throttled as logins are: after the free attempts, even the right secret is refused for a while', async (t) => {
  const victim = await createPrincipal(kernel, 'victim', { secret: 'Victim-Secret-12345!' });
  const csr = (await csrDer('victim.example')).toString('base64');
  for (let i = 0; i < 6; i++) t.equal((await post('/.well-known/est/default/simpleenroll', csr, { authorization: basic(victim.identifier, `wrong-${i}`) })).statusCode, 401);
  const locked = await post('/.well-known/est/default/simpleenroll', csr, { authorization: basic(victim.identifier, victim.secret) });
  t.equal(locked.statusCode, 401, 'the right secret while locked: 401');
  t.equal((await post('/.well-known/est/default/simpleenroll', csr, { authorization: deviceAuth })).statusCode, 200, 'another account from the same address still enrolls');
});
