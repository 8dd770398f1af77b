/**
 * The MDM flavours of SCEP against local fakes of their SaaS APIs (Intune and Jamf cannot run here):
 * - a FAKE Intune (Entra token endpoint, Graph service discovery, the SCEP validation service, written from
 *   Microsoft's public Intune-Resource-Access documentation): a valid challenge is validated, issued and
 *   reported with successNotification; an invalid one fails (CertRep FAILURE) and is reported with
 *   failureNotification; the fake checks the headers and tokens the real service requires;
 * - Jamf's dynamic challenges (Jamf itself is the caller here, played by the test): the SCEPChallenge webhook and
 *   the NDES-style mscep_admin page hand out one-time challenges that enroll once through /jamf/<profile>/mscep.
 * Runs on SQLite and MariaDB.
 */
import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { buildPkiMessage, challengePasswordOf, csrForScep, readCertRep, readDegenerateSignedData, selfSignedForScep, type CertRep } from '@certwright/sdk/scep';
import t from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { freePort } from '../../connectors/acme-upstream/pebble.js';

// ------------------------------------------------------------------ the fake Intune
const TENANT = 'contoso.onmicrosoft.com';
const APP = { id: '11111111-2222-3333-4444-555555555555', secret: 'Fake-Entra-App-Secret' };
const GOOD_CHALLENGES = new Set(['intune-challenge-valid-1', 'intune-challenge-valid-2']);
const fakePort = await freePort();
const fake = `http://127.0.0.1:${fakePort}`;
const calls: { path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }[] = [];
const read = (req: IncomingMessage): Promise<string> => new Promise((resolve) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => resolve(body));
});
const fakeIntune = createServer(async (req, res) => {
  const raw = await read(req);
  const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const path = (req.url ?? '').split('?')[0]!;
  if (req.method === 'POST' && path === `/${TENANT}/oauth2/v2.0/token`) {
    const form = new URLSearchParams(raw);
    if (form.get('client_id') !== APP.id || form.get('client_secret') !== APP.secret || form.get('grant_type') !== 'client_credentials') return json(401, { error: 'invalid_client' });
    return json(200, { token_type: 'Bearer', expires_in: 3599, access_token: `token-for:${form.get('scope')}` });
  }
  if (req.method === 'GET' && path === '/v1.0/servicePrincipals/appId=0000000a-0000-0000-c000-000000000000/endpoints') {
    if (req.headers.authorization !== 'Bearer token-for:https://graph.microsoft.com/.default') return json(401, {});
    return json(200, { value: [{ providerName: 'SomethingElse', uri: `${fake}/wrong` }, { providerName: 'scepRequestValidationFEService', uri: `${fake}/scep-validation/` }] });
  }
  const action = /^\/scep-validation\/ScepActions\/(validateRequest|successNotification|failureNotification)$/.exec(path)?.[1];
  if (req.method === 'POST' && action) {
    const ok = req.headers.authorization === 'Bearer token-for:https://api.manage.microsoft.com//.default' && req.headers['api-version'] === '2018-02-20' && /^[0-9a-f-]{36}$/.test(String(req.headers['client-request-id'])) && req.headers['content-type'] === 'application/json';
    if (!ok) return json(401, { code: 'Unauthorized' });
    const body = JSON.parse(raw) as Record<string, unknown>;
    calls.push({ path: action, headers: req.headers, body });
    if (action === 'validateRequest') {
      const request = body.request as { certificateRequest: string };
      const challenge = challengePasswordOf(new Uint8Array(Buffer.from(request.certificateRequest, 'base64')));
      return json(200, challenge && GOOD_CHALLENGES.has(challenge) ? { code: 'Success', errorDescription: '' } : { code: 'ChallengeDecryptionError', errorDescription: 'The challenge could not be decrypted' });
    }
    return json(200, { code: 'Success' });
  }
  json(404, {});
});
await new Promise<void>((resolve) => fakeIntune.listen(fakePort, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => fakeIntune.close(() => resolve())));

// ------------------------------------------------------------------ the kernel
const kernel = await bootKernel(t, {
  ...ENROLLMENT_BOOTSTRAP,
  certwright: { endpoints: [{ host: 'localhost', configuration: true, mdm: true, webra: true }, { host: 'scep-only.example', scep: true }] as never },
  plugins: { instances: { 'protocol-mdm': [{ name: 'mdm', config: { intune: { loginUrl: fake, graphUrl: fake, allowedHosts: ['*'], allowHttp: true, allowPrivateNetworks: true } } }] } },
} as never);
const admin = caller(kernel, ADMIN_HEADERS);
const jamf = await createPrincipal(kernel, 'jamf-pro', { secret: 'Jamf-Webhook-Secret-1!' });
for (const [path, body] of [
  ['/api/v1/security/credentials/', { name: 'intune-app', type: 'password', login: APP.id, password: { value: APP.secret }, targets: ['mdm'] }],
  ['/api/v1/certificate/profiles/', { name: 'fleet', pkiConnector: 'local-ca', protocols: { mdm: { enabled: true, intune: { tenant: TENANT, credential: 'intune-app' } } } }],
] as const) {
  const res = await admin('POST', path, body);
  if (res.statusCode !== 201) throw new Error(`${path}: ${res.body}`);
}

async function raOf(prefix: string): Promise<Uint8Array> {
  const res = await kernel.app.inject({ method: 'GET', url: `${prefix}?operation=GetCACert`, headers: { host: 'localhost' } });
  if (res.statusCode !== 200) throw new Error(res.body);
  return readDegenerateSignedData(new Uint8Array(res.rawPayload)).certificatesDer[0]!;
}
const device = (): { key: KeyObject; certificate: { pem: string } } => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { key: privateKey, certificate: selfSignedForScep(privateKey, 'device') };
};
let txn = 0;
async function pkcsReq(url: string, ra: Uint8Array, cn: string, challenge: string): Promise<{ rep: CertRep; transactionId: string }> {
  const d = device();
  const transactionId = `mdm-${++txn}`;
  const der = buildPkiMessage({ messageType: 'PKCSReq', transactionId, inner: csrForScep({ privateKey: d.key, cn, challengePassword: challenge, digest: 'sha256' }), signerCertificatePem: d.certificate.pem, signerPrivateKey: d.key, recipientCertificatesDer: [ra], cipher: 'aes-256-cbc', digest: 'sha256' });
  const res = await kernel.app.inject({ method: 'POST', url: `${url}?operation=PKIOperation`, payload: Buffer.from(der), headers: { host: 'localhost', 'content-type': 'application/x-pki-message' } });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  return { rep: readCertRep(new Uint8Array(res.rawPayload), { privateKey: d.key }), transactionId };
}

t.test('Intune: a valid challenge is validated, issued and reported', async (t) => {
  const url = '/intune/fleet/pkiclient.exe';
  const caps = await kernel.app.inject({ method: 'GET', url: `${url}?operation=GetCACaps`, headers: { host: 'localhost' } });
  t.match(caps.body, /POSTPKIOperation/);
  const { rep, transactionId } = await pkcsReq(url, await raOf(url), 'intune-device-1.example', 'intune-challenge-valid-1');
  t.equal(rep.pkiStatus, 'SUCCESS', `a certificate (${rep.failInfoText ?? ''})`);
  const issued = new X509Certificate(Buffer.from(rep.certificatesDer![0]!));
  const validate = calls.find((c) => c.path === 'validateRequest' && (c.body.request as { transactionId: string }).transactionId === transactionId);
  t.ok(validate, 'Intune validated the request first');
  t.equal((validate!.body.request as { callerInfo: string }).callerInfo, 'Certwright');
  const success = calls.find((c) => c.path === 'successNotification' && (c.body.notification as { transactionId: string }).transactionId === transactionId);
  t.ok(success, 'then heard of the success');
  t.match(success!.body.notification, { certificateSerialNumber: issued.serialNumber, certificateThumbprint: /^[0-9A-F]{40}$/, certificateExpirationDateUtc: new Date(issued.validTo).toISOString(), certificateRequest: /^MII/ });
  const request = (await admin('POST', '/api/v1/requests/search', { query: 'module equals "mdm"' })).json();
  t.match(request.results, [{ module: 'mdm', requester: `intune:${TENANT}`, status: 'completed' }], 'a request of the workflow');
});

t.test('Intune: an invalid challenge fails and is reported', async (t) => {
  const url = '/intune/fleet/pkiclient.exe';
  const before = Number((await kernel.db.knex('requests').where({ module: 'mdm', status: 'completed' }).count({ n: '*' }))[0]!.n);
  const { rep, transactionId } = await pkcsReq(url, await raOf(url), 'intune-device-2.example', 'forged-challenge');
  t.equal(rep.pkiStatus, 'FAILURE');
  t.equal(rep.failInfo, 'badRequest');
  const failure = calls.find((c) => c.path === 'failureNotification' && (c.body.notification as { transactionId: string }).transactionId === transactionId);
  t.ok(failure, 'Intune heard of the failure');
  t.match(failure!.body.notification, { hResult: -2147467259, errorDescription: /ChallengeDecryptionError/, callerInfo: 'Certwright' });
  t.notOk(calls.some((c) => c.path === 'successNotification' && (c.body.notification as { transactionId: string }).transactionId === transactionId), 'and no success');
  t.equal(Number((await kernel.db.knex('requests').where({ module: 'mdm', status: 'completed' }).count({ n: '*' }))[0]!.n), before, 'nothing issued');
  const events = await kernel.db.knex('events').where({ code: 'MDM-REQUEST-FAILED' }).select('payload');
  t.ok(events.length >= 1, 'an MDM-REQUEST-FAILED event');
  t.notMatch(JSON.stringify(events), /forged-challenge|Fake-Entra-App-Secret/, 'neither the challenge nor the app secret in events');
});

t.test('Jamf: the SCEPChallenge webhook and the mscep_admin page hand out one-time challenges', async (t) => {
  const auth = `Basic ${Buffer.from(`${jamf.identifier}:${jamf.secret}`).toString('base64')}`;
  const event = { webhook: { webhookEvent: 'SCEPChallenge', id: 7, eventTimestamp: Date.now(), name: 'SCEP challenge' }, event: { scepServerUrl: 'http://localhost/jamf/fleet/mscep', payloadIdentifier: 'com.example.wifi', payloadTypes: ['com.apple.security.scep'] } };
  const hook = (headers: Record<string, string>, payload: unknown) => kernel.app.inject({ method: 'POST', url: '/jamf/fleet/webhook', payload: JSON.stringify(payload), headers: { host: 'localhost', 'content-type': 'application/json', ...headers } });
  t.equal((await hook({}, event)).statusCode, 401, 'no credentials: 401');
  t.equal((await hook({ authorization: auth }, { webhook: { webhookEvent: 'ComputerAdded' } })).statusCode, 400, 'another event: 400');
  const answered = await hook({ authorization: auth }, event);
  t.equal(answered.statusCode, 200);
  t.match(answered.headers['content-type'], /^text\/plain/);
  const challenge = answered.body;
  t.match(challenge, /^\S{16,}$/, 'the challenge alone, as text');
  const url = '/jamf/fleet/mscep';
  const ra = await raOf(url);
  const first = await pkcsReq(url, ra, 'mac-1.example', challenge);
  t.equal(first.rep.pkiStatus, 'SUCCESS', 'the device redeems it in a PKCSReq');
  t.match((await pkcsReq(url, ra, 'mac-2.example', challenge)).rep, { pkiStatus: 'FAILURE', failInfo: 'badRequest' }, 'once');
  const page = await kernel.app.inject({ method: 'GET', url: '/jamf/fleet/mscep_admin/', headers: { host: 'localhost', authorization: auth } });
  const shown = /The enrollment challenge password is: <B> (\S+) <\/B>/.exec(page.body)?.[1];
  t.ok(shown, 'the NDES-style page shows a challenge');
  t.equal((await pkcsReq(url, ra, 'mac-3.example', shown!)).rep.pkiStatus, 'SUCCESS', 'which enrolls too');
  t.match((await pkcsReq(url, ra, 'mac-4.example', 'intune-challenge-valid-2')).rep, { pkiStatus: 'FAILURE' }, 'Jamf does not accept what only Intune would');
});

t.test('the mdm capability gates the routes; a profile without MDM is unknown', async (t) => {
  t.equal((await kernel.app.inject({ method: 'GET', url: '/intune/fleet/pkiclient.exe?operation=GetCACaps', headers: { host: 'scep-only.example' } })).statusCode, 404, 'a host without mdm: 404');
  const none = await kernel.app.inject({ method: 'GET', url: '/jamf/default/mscep?operation=GetCACaps', headers: { host: 'localhost' } });
  t.equal(none.statusCode, 404, 'default does not enable mdm');
  t.match(none.body, /^SCEP-004: No MDM service/);
});
