/**
 * SCEP's own error forms and its less common operations, with messages built by the SDK's client encoder:
 * what cannot be read answers HTTP 400 (plain text, an SCEP code); a readable request that is refused answers a
 * signed CertRep FAILURE with the right failInfo — a tampered signature, an envelope for another RA, a replayed
 * transactionID under another key, a wrong, expired or spent challenge, algorithms the profile does not allow —
 * each leaving an SCEP-REQUEST-FAILED event and no certificate. Also: GET with URL-safe base64, GetCert, CertPoll
 * of an unknown transaction, GetCRL (the CA's CRL), the mscep_admin challenge page and the capability gate. Runs on SQLite and
 * MariaDB.
 */
import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { buildPkiMessage, csrForScep, encodeIssuerAndSerial, encodeIssuerAndSubject, readCertRep, readDegenerateSignedData, selfSignedForScep, type CertRep, type ContentCipher, type DigestName } from '@certwright/sdk/scep';
import * as pkijs from 'pkijs';
import t from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';

const kernel = await bootKernel(t, {
  ...ENROLLMENT_BOOTSTRAP,
  certwright: { endpoints: [{ host: 'localhost', configuration: true, scep: true, webra: true }, { host: 'other.example', acme: true }] as never },
});
const admin = caller(kernel, ADMIN_HEADERS);
for (const body of [{ name: 'modern', pkiConnector: 'local-ca', protocols: { scep: { enabled: true } } }]) {
  const res = await admin('POST', '/api/v1/certificate/profiles/', body);
  if (res.statusCode !== 201) throw new Error(res.body);
}
const operator = await createPrincipal(kernel, 'scep-operator', { secret: 'Scep-Operator-Secret-1!' });

const path = (profile: string) => `/scep/${profile}/pkiclient.exe`;
async function raOf(profile: string): Promise<Uint8Array> {
  const res = await kernel.app.inject({ method: 'GET', url: `${path(profile)}?operation=GetCACert`, headers: { host: 'localhost' } });
  if (res.statusCode !== 200 || res.headers['content-type'] !== 'application/x-x509-ca-ra-cert') throw new Error(res.body);
  return readDegenerateSignedData(new Uint8Array(res.rawPayload)).certificatesDer[0]!;
}
const ra = { default: await raOf('default'), modern: await raOf('modern') };

interface Client {
  key: KeyObject;
  certificate: { pem: string; der: Uint8Array };
}
function newClient(cn: string): Client {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { key: privateKey, certificate: selfSignedForScep(privateKey, cn) };
}
async function challenge(profile: string): Promise<{ value: string; id: string }> {
  const res = (await admin('POST', '/api/v1/requests/submit', { module: 'scep', workflow: 'enroll', profile, template: {} })).json();
  return { value: res.password.value, id: res._id };
}

let txn = 0;
function pkcsReq(client: Client, o: { cn: string; password?: string; profile?: 'default' | 'modern'; transactionId?: string; cipher?: ContentCipher; digest?: DigestName; recipient?: Uint8Array }): Buffer {
  const inner = csrForScep({ privateKey: client.key, cn: o.cn, ...(o.password ? { challengePassword: o.password } : {}), digest: 'sha256' });
  return Buffer.from(buildPkiMessage({ messageType: 'PKCSReq', transactionId: o.transactionId ?? `txn-${++txn}`, inner, signerCertificatePem: client.certificate.pem, signerPrivateKey: client.key, recipientCertificatesDer: [o.recipient ?? ra[o.profile ?? 'default']], cipher: o.cipher ?? 'aes-256-cbc', digest: o.digest ?? 'sha256' }));
}

async function operation(profile: string, body: Buffer, client: Client): Promise<CertRep> {
  const res = await kernel.app.inject({ method: 'POST', url: `${path(profile)}?operation=PKIOperation`, payload: body, headers: { host: 'localhost', 'content-type': 'application/x-pki-message' } });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  t.equal(res.headers['content-type'], 'application/x-pki-message');
  return readCertRep(new Uint8Array(res.rawPayload), { privateKey: client.key });
}

async function failures(): Promise<number> {
  return Number((await kernel.db.knex('events').where({ code: 'SCEP-REQUEST-FAILED' }).count({ n: '*' }))[0]!.n);
}
async function issuedScep(): Promise<number> {
  return Number((await kernel.db.knex('requests').where({ module: 'scep', status: 'completed' }).count({ n: '*' }))[0]!.n);
}

t.test('unreadable input: HTTP 400 with a text body and an event', async (t) => {
  for (const [name, url, payload, code] of [
    ['garbage', `${path('default')}?operation=PKIOperation`, Buffer.from('not a pkcs7 message'), 'SCEP-002'],
    ['an unknown operation', `${path('default')}?operation=Nope`, undefined, 'SCEP-001'],
    ['no message', `${path('default')}?operation=PKIOperation`, undefined, 'SCEP-002'],
    ['bad base64 in GET', `${path('default')}?operation=PKIOperation&message=%25%25%25`, undefined, 'SCEP-002'],
  ] as const) {
    const before = await failures();
    const res = await kernel.app.inject({ method: payload ? 'POST' : 'GET', url, ...(payload ? { payload } : {}), headers: { host: 'localhost', ...(payload ? { 'content-type': 'application/x-pki-message' } : {}) } });
    t.equal(res.statusCode, 400, name);
    t.match(res.headers['content-type'], /^text\/plain/);
    t.match(res.body, new RegExp(`^${code}: `), `${name}: ${code}`);
    t.equal(await failures(), before + 1, `${name}: an event`);
  }
  const unknown = await kernel.app.inject({ method: 'GET', url: `${path('nope')}?operation=GetCACaps`, headers: { host: 'localhost' } });
  t.equal(unknown.statusCode, 404);
  t.match(unknown.body, /^SCEP-004: /);
  const gated = await kernel.app.inject({ method: 'GET', url: `${path('default')}?operation=GetCACaps`, headers: { host: 'other.example' } });
  t.equal(gated.statusCode, 404, 'a host without the scep capability: 404');
});

t.test('refusals answer CertRep FAILURE with their failInfo, an event, nothing issued', async (t) => {
  const client = newClient('client-a');
  const other = newClient('client-b');
  const { value: spent } = await challenge('default');
  const ok = await operation('default', pkcsReq(client, { cn: 'first.example', password: spent, transactionId: 'shared-id' }), client);
  t.equal(ok.pkiStatus, 'SUCCESS', 'a valid PKCSReq (AES-256, SHA-256) is issued');
  const { value: expired, id: expiredId } = await challenge('default');
  await kernel.db.knex('request_challenges').where({ request_id: expiredId }).update({ expires_at: 1 });
  const stranger = newClient('stranger-ra');
  const tampered = pkcsReq(client, { cn: 'tampered.example', password: (await challenge('default')).value });
  tampered.writeUInt8(tampered[tampered.length - 1]! ^ 0xff, tampered.length - 1);
  const cases: { name: string; body: Buffer; as: Client; profile?: string; failInfo: string }[] = [
    { name: 'a signature that does not verify', body: tampered, as: client, failInfo: 'badMessageCheck' },
    { name: 'an envelope for another RA', body: pkcsReq(client, { cn: 'x.example', password: (await challenge('default')).value, recipient: stranger.certificate.der }), as: client, failInfo: 'badCertId' },
    { name: 'a replayed transactionID under another key', body: pkcsReq(other, { cn: 'first.example', password: (await challenge('default')).value, transactionId: 'shared-id' }), as: other, failInfo: 'badRequest' },
    { name: 'a wrong challenge', body: pkcsReq(client, { cn: 'w.example', password: 'not-a-challenge' }), as: client, failInfo: 'badRequest' },
    { name: 'an expired challenge', body: pkcsReq(client, { cn: 'e.example', password: expired }), as: client, failInfo: 'badRequest' },
    { name: 'a spent challenge', body: pkcsReq(client, { cn: 's.example', password: spent }), as: client, failInfo: 'badRequest' },
    { name: 'no challenge', body: pkcsReq(client, { cn: 'n.example' }), as: client, failInfo: 'badRequest' },
    { name: 'a challenge of another profile', body: pkcsReq(client, { cn: 'p.example', password: (await challenge('default')).value, profile: 'modern' }), as: client, profile: 'modern', failInfo: 'badRequest' },
    { name: '3DES where the profile allows only AES', body: pkcsReq(client, { cn: 'd.example', password: (await challenge('modern')).value, profile: 'modern', cipher: 'des-ede3-cbc' }), as: client, profile: 'modern', failInfo: 'badAlg' },
    { name: 'SHA-1 where the profile allows only SHA-2', body: pkcsReq(client, { cn: 'h.example', password: (await challenge('modern')).value, profile: 'modern', digest: 'sha1' }), as: client, profile: 'modern', failInfo: 'badAlg' },
  ];
  const issuedBefore = await issuedScep();
  for (const c of cases) {
    const before = await failures();
    const rep = await operation(c.profile ?? 'default', c.body, c.as);
    t.equal(rep.pkiStatus, 'FAILURE', `${c.name}: FAILURE`);
    t.equal(rep.failInfo, c.failInfo, `${c.name}: ${c.failInfo}`);
    t.ok(rep.signatureValid, `${c.name}: the CertRep is signed`);
    t.equal(await failures(), before + 1, `${c.name}: an event`);
  }
  t.equal(await issuedScep(), issuedBefore, 'nothing was issued');
  const events = JSON.stringify(await kernel.db.knex('events').where({ code: 'SCEP-REQUEST-FAILED' }).select('payload'));
  t.notMatch(events, new RegExp(spent), 'no challenge in the events');
  const legacy = await operation('default', pkcsReq(client, { cn: 'legacy.example', password: (await challenge('default')).value, cipher: 'des-ede3-cbc', digest: 'sha1' }), client);
  t.equal(legacy.pkiStatus, 'SUCCESS', 'the same algorithms where the profile allows legacy ones');
});

t.test('GET with URL-safe base64, GetCert, CertPoll of an unknown transaction, GetCRL', async (t) => {
  const client = newClient('client-g');
  const body = pkcsReq(client, { cn: 'get.example', password: (await challenge('default')).value });
  const res = await kernel.app.inject({ method: 'GET', url: `${path('default')}?operation=PKIOperation&message=${body.toString('base64url')}`, headers: { host: 'localhost' } });
  t.equal(res.statusCode, 200, res.body);
  const rep = readCertRep(new Uint8Array(res.rawPayload), { privateKey: client.key });
  t.equal(rep.pkiStatus, 'SUCCESS', 'GET PKIOperation with URL-safe base64');
  const issued = new X509Certificate(Buffer.from(rep.certificatesDer![0]!));
  const issuerDer = new Uint8Array(pkijs.Certificate.fromBER(issued.raw).issuer.toSchema().toBER(false));
  const getCert = (serial: string) => Buffer.from(buildPkiMessage({ messageType: 'GetCert', transactionId: `gc-${serial}`, inner: encodeIssuerAndSerial(issuerDer, serial), signerCertificatePem: client.certificate.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.default], cipher: 'aes-256-cbc', digest: 'sha256' }));
  const found = await operation('default', getCert(issued.serialNumber), client);
  t.equal(found.pkiStatus, 'SUCCESS', 'GetCert by issuer and serial');
  t.same(Buffer.from(found.certificatesDer![0]!), issued.raw, 'the same certificate');
  t.match(await operation('default', getCert('0badc0de'), client), { pkiStatus: 'FAILURE', failInfo: 'badCertId' }, 'an unknown serial');
  const subjectDer = new Uint8Array(pkijs.Certificate.fromBER(issued.raw).subject.toSchema().toBER(false));
  const poll = Buffer.from(buildPkiMessage({ messageType: 'CertPoll', transactionId: 'never-seen', inner: encodeIssuerAndSubject(issuerDer, subjectDer), signerCertificatePem: client.certificate.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.default], cipher: 'aes-256-cbc', digest: 'sha256' }));
  t.match(await operation('default', poll, client), { pkiStatus: 'FAILURE', failInfo: 'badCertId' }, 'CertPoll of an unknown transaction');
  const crl = Buffer.from(buildPkiMessage({ messageType: 'GetCRL', transactionId: 'crl-1', inner: encodeIssuerAndSerial(issuerDer, issued.serialNumber), signerCertificatePem: client.certificate.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.default], cipher: 'aes-256-cbc', digest: 'sha256' }));
  const gotCrl = await operation('default', crl, client);
  t.equal(gotCrl.pkiStatus, 'SUCCESS', 'GetCRL for a certificate of the profile CA');
  const served = await kernel.app.inject({ method: 'GET', url: '/pki/local-ca/crl', headers: { host: 'localhost' } });
  t.same(Buffer.from(gotCrl.crlDer!), served.rawPayload, 'the CRL /pki/local-ca/crl serves');
  const foreign = Buffer.from(buildPkiMessage({ messageType: 'GetCRL', transactionId: 'crl-2', inner: encodeIssuerAndSerial(subjectDer, '01'), signerCertificatePem: client.certificate.pem, signerPrivateKey: client.key, recipientCertificatesDer: [ra.default], cipher: 'aes-256-cbc', digest: 'sha256' }));
  t.match(await operation('default', foreign, client), { pkiStatus: 'FAILURE', failInfo: 'badCertId' }, 'GetCRL for another issuer');
});

t.test('mscep_admin: a fresh one-time challenge for a local account', async (t) => {
  const url = '/certsrv/default/mscep_admin/';
  const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
  const anonymous = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.headers['www-authenticate'], /^Basic realm="SCEP"/);
  t.equal((await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost', authorization: basic(operator.identifier, 'wrong') } })).statusCode, 401);
  const page = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost', authorization: basic(operator.identifier, operator.secret) } });
  t.equal(page.statusCode, 200);
  const shown = /The enrollment challenge password is: <B> (\S+) <\/B>/.exec(page.body)?.[1];
  t.ok(shown, 'the NDES sentence with the challenge');
  for (const prefix of ['/certsrv', '/certSrv']) {
    const caps = await kernel.app.inject({ method: 'GET', url: `${prefix}/default/mscep/mscep.dll?operation=GetCACaps`, headers: { host: 'localhost' } });
    t.equal(caps.statusCode, 200, `${prefix}/…/mscep/* answers SCEP`);
  }
  const client = newClient('client-ndes');
  const body = pkcsReq(client, { cn: 'ndes.example', password: shown! });
  const res = await kernel.app.inject({ method: 'POST', url: '/certsrv/default/mscep/mscep.dll?operation=PKIOperation', payload: body, headers: { host: 'localhost', 'content-type': 'application/x-pki-message' } });
  t.equal(readCertRep(new Uint8Array(res.rawPayload), { privateKey: client.key }).pkiStatus, 'SUCCESS', 'the page\'s challenge enrolls once');
  const request = (await admin('POST', '/api/v1/requests/search', { query: `requester equals "${operator.identifier}"` })).json();
  t.match(request.results, [{ module: 'scep', status: 'completed' }], 'the challenge request is the operator\'s, completed');
});
