/**
 * The WebRA request workflows end to end (client-compat §2, interface-spec "States and transitions") on the
 * local CA the first start creates (connector `local-ca`, profile `default`): every workflow, direct vs
 * request vs approve, challenges, the error codes clients key on, and every request and certificate answer
 * validated against the JSON Schemas written from client-compat (test/helpers/client-compat-schemas.ts).
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { selfSignedCertificate } from '../../core/pki/issue/self-signed.js';
import { decodePkcs12 } from '../../core/pki/pkcs12/decode.js';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP } from '../helpers/kernel.js';
import { caller, createPrincipal } from '../helpers/security.js';
import { compatErrors } from '../helpers/client-compat-schemas.js';
import { csrFor } from '../helpers/csr.js';
import { toPem } from '../../core/pki/input.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const admin = caller(kernel, ADMIN_HEADERS);

const ecKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every request answer is checked against the §2.5 schema (and its certificate against §3). */
function checkRequest(t: Test, body: Json, what: string): void {
  t.equal(compatErrors('request', body), '', `${what}: request object matches client-compat §2.5`);
  if (body.certificate) t.equal(compatErrors('certificate', body.certificate), '', `${what}: certificate matches client-compat §3`);
}

async function submit(t: Test, as: ReturnType<typeof caller>, body: Json, status = 201): Promise<Json> {
  const res = await as('POST', '/api/v1/requests/submit', body);
  t.equal(res.statusCode, status, `submit ${body.workflow}: ${res.body.slice(0, 300)}`);
  if (res.statusCode < 300) {
    t.equal(res.headers['content-type'], 'application/json');
    checkRequest(t, res.json(), `submit ${body.workflow}`);
  }
  return res.json();
}

// The first start's profile and connector.
const profiles = await admin('GET', '/api/v1/certificate/profiles/default');
t.equal(profiles.statusCode, 200, 'the first start created the default profile');

/** A profile derived from `default` with overrides (created through the profiles API). */
async function profile(name: string, overrides: Json): Promise<void> {
  const base = (await admin('GET', '/api/v1/certificate/profiles/default')).json();
  for (const k of ['_id', 'createdAt', 'updatedAt']) delete base[k];
  const body = { ...base, ...overrides, name, keyPolicy: { ...base.keyPolicy, ...(overrides.keyPolicy ?? {}) } };
  const res = await admin('POST', '/api/v1/certificate/profiles/', body);
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`profile ${name}: ${res.statusCode} ${res.body}`);
}

t.test('template: echoes module/workflow, capabilities, never pending (§2.3, §10)', async (t) => {
  const res = await admin('POST', '/api/v1/requests/template', { module: 'webra', profile: 'default', workflow: 'enroll' });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json();
  t.equal(compatErrors('enroll-template', body), '');
  t.equal(body.module, 'webra');
  t.equal(body.workflow, 'enroll');
  t.type(body.template.capabilities.centralized, 'boolean');
  const missing = await admin('POST', '/api/v1/requests/template', { module: 'webra', profile: 'nope', workflow: 'enroll' });
  t.equal(missing.json().error, 'PRF-003');
  t.equal(missing.json().message, 'Profile does not exist or is disabled');
});

t.test('decentralized enroll, direct: completed at once, no pkcs12 key, certificate stored and events written', async (t) => {
  const body = await submit(t, admin, {
    module: 'webra',
    workflow: 'enroll',
    profile: 'default',
    template: { csr: csrFor('decentral.example.com', ['decentral.example.com']), keyType: null, labels: [] },
    // What v1 Go sends on every body: ignored.
    registrationDate: 0,
    lastModificationDate: 0,
    expirationDate: 0,
    removeAt: 0,
  });
  t.equal(body.status, 'completed');
  t.notOk('pkcs12' in body, 'a decentralized answer has no pkcs12 key at all');
  t.notOk('password' in body);
  t.ok(body.certificate, 'the certificate is embedded');
  t.equal(body.certificate.profile, 'default');
  t.equal(body.certificate.module, 'webra');
  t.same(body.certificate.metadata.find((m: Json) => m.key === 'pki_connector'), { key: 'pki_connector', value: 'local-ca' });
  t.match(body.certificate.dn, /CN=decentral\.example\.com/);
  const events = await admin('POST', '/api/v1/events/search', { query: `object.id equals "${body.certificateId}"` });
  t.ok(events.json().results.some((e: Json) => e.code === 'CERTIFICATE-ISSUED'), 'CERTIFICATE-ISSUED written');
  const get = await admin('GET', `/api/v1/requests/${body._id}`);
  t.equal(get.statusCode, 200);
  checkRequest(t, get.json(), 'get');
  t.type(get.json().permissions.approve, 'boolean');
  t.type(get.json().permissions.cancel, 'boolean');
});

t.test('dryRun: checked, nothing stored or issued', async (t) => {
  const before = Number(((await kernel.db.knex('requests').count({ n: '*' }).first()) as { n: number | string }).n);
  const body = await submit(t, admin, { workflow: 'enroll', profile: 'default', dryRun: true, template: { csr: csrFor('dry.example.com') } });
  t.equal(body.dryRun, true);
  t.notOk(body.certificate);
  const after = Number(((await kernel.db.knex('requests').count({ n: '*' }).first()) as { n: number | string }).n);
  t.equal(after, before, 'no request stored');
  const bad = await submit(t, admin, { workflow: 'enroll', profile: 'default', dryRun: true, template: { csr: 'nope' } }, 400);
  t.equal(bad.error, 'WEBRA-ENROLL-006');
});

t.test('centralized enroll: server-side key, PKCS#12 opens with the generated password', async (t) => {
  const body = await submit(t, admin, {
    module: 'webra',
    workflow: 'enroll',
    profile: 'default',
    template: { subject: [{ element: 'cn.1', value: 'central.example.com' }], keyType: 'ec-secp256r1', csr: null },
  });
  t.equal(body.status, 'completed');
  t.ok(body.pkcs12?.value, 'pkcs12.value');
  t.ok(body.password?.value, 'password.value');
  const p12 = decodePkcs12(Buffer.from(body.pkcs12.value, 'base64'), body.password.value);
  t.ok(p12.keys.length >= 1, 'the key is inside');
  t.ok(p12.certificates.length >= 1, 'the certificate is inside');
  const again = await admin('GET', `/api/v1/requests/${body._id}`);
  t.notOk('pkcs12' in again.json(), 'the PKCS#12 is answered once');
});

t.test('bad CSRs, key types and SAN regexes are 400 problems with codes', async (t) => {
  const garbage = await submit(t, admin, { workflow: 'enroll', profile: 'default', template: { csr: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n' } }, 400);
  t.equal(garbage.error, 'WEBRA-ENROLL-006');
  await profile('rsa-only', { keyPolicy: { authorizedKeyTypes: ['rsa-2048'], defaultKeyType: 'rsa-2048' } });
  const wrongKey = await submit(t, admin, { workflow: 'enroll', profile: 'rsa-only', template: { csr: csrFor('ec.example.com') } }, 400);
  t.match(wrongKey.error, /^PRF-01[45]$/, `wrong key type: ${wrongKey.error}`);
  await profile('regex', { sans: [{ type: 'DNSNAME', editable: true, min: 0, max: 5, regex: '^[a-z]+\\.corp\\.example$' }] });
  const badSan = await submit(t, admin, { workflow: 'enroll', profile: 'regex', template: { csr: csrFor('a.corp.example', ['evil.com']) } }, 400);
  t.equal(badSan.error, 'PRF-011', 'SAN breaking the regex');
  const good = await submit(t, admin, { workflow: 'enroll', profile: 'regex', template: { csr: csrFor('a.corp.example', ['www.corp.example']) } });
  t.equal(good.status, 'completed');
});

t.test('request → pending → approve → completed; self-approval forbidden; deny; cancel', async (t) => {
  const requester = await createPrincipal(kernel, 'req-user', { permissions: [{ value: 'lifecycle:webra:default:enroll:request' }] });
  const approver = await createPrincipal(kernel, 'approver', { permissions: [{ value: 'lifecycle:webra:default:*:approve' }, { value: 'lifecycle:webra:default:enroll:request' }] });
  const asRequester = caller(kernel, requester.headers);
  const asApprover = caller(kernel, approver.headers);

  const pending = await submit(t, asRequester, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('pending.example.com') } });
  t.equal(pending.status, 'pending');
  t.notOk(pending.certificate);
  const denied = await asRequester('POST', '/api/v1/requests/approve', { _id: pending._id, workflow: 'enroll' });
  t.equal(denied.statusCode, 403, 'the requester cannot approve');
  t.equal(denied.json().error, 'REQ-007');

  const own = await submit(t, asApprover, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('own.example.com') } });
  const self = await asApprover('POST', '/api/v1/requests/approve', { id: own._id, workflow: 'enroll' });
  t.equal(self.statusCode, 403, 'approving one\'s own request is forbidden');
  t.equal(self.json().error, 'REQ-008');

  const view = await asApprover('GET', `/api/v1/requests/${pending._id}`);
  t.equal(view.json().permissions.approve, true, 'the approver sees it may approve');
  const approved = await asApprover('POST', '/api/v1/requests/approve', { id: pending._id, workflow: 'enroll', approverComment: 'ok' });
  t.equal(approved.statusCode, 200, approved.body);
  checkRequest(t, approved.json(), 'approve');
  t.equal(approved.json().status, 'completed');
  t.equal(approved.json().approver, 'approver');
  const again = await asApprover('POST', '/api/v1/requests/approve', { id: pending._id, workflow: 'enroll' });
  t.equal(again.statusCode, 400);
  t.equal(again.json().error, 'REQ-009');

  const toDeny = await submit(t, asRequester, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('deny.example.com') } });
  const deny = await asApprover('POST', '/api/v1/requests/deny', { _id: toDeny._id, module: 'webra', workflow: 'enroll' });
  t.equal(deny.json().status, 'denied');
  checkRequest(t, deny.json(), 'deny');

  const toCancel = await submit(t, asRequester, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('cancel.example.com') } });
  const cancel = await asRequester('POST', '/api/v1/requests/cancel', { _id: toCancel._id, module: 'webra', workflow: 'enroll' });
  t.equal(cancel.json().status, 'canceled');
  checkRequest(t, cancel.json(), 'cancel');

  // Approve racing cancel: exactly one wins.
  const race = await submit(t, asRequester, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('race.example.com') } });
  const [a, c] = await Promise.all([
    asApprover('POST', '/api/v1/requests/approve', { id: race._id, workflow: 'enroll' }),
    asRequester('POST', '/api/v1/requests/cancel', { id: race._id, workflow: 'enroll' }),
  ]);
  t.equal([a.statusCode, c.statusCode].filter((s) => s === 200).length, 1, `one of approve (${a.statusCode}) / cancel (${c.statusCode}) wins`);

  // A centralized request approved later: the PKCS#12 waits sealed for the requester, who reads it once.
  const central = await submit(t, asRequester, { workflow: 'enroll', profile: 'default', template: { subject: [{ element: 'cn.1', value: 'later.example.com' }], keyType: 'ec-secp256r1' } });
  t.equal(central.status, 'pending');
  const decided = await asApprover('POST', '/api/v1/requests/approve', { id: central._id, workflow: 'enroll' });
  t.equal(decided.json().status, 'completed');
  t.notOk('pkcs12' in decided.json(), 'the approver does not get the requester\'s PKCS#12');
  const read = await asRequester('GET', `/api/v1/requests/${central._id}`);
  checkRequest(t, read.json(), 'get after approval');
  t.ok(decodePkcs12(Buffer.from(read.json().pkcs12.value, 'base64'), read.json().password.value).keys.length >= 1, 'the requester opens it');
  const reread = await asRequester('GET', `/api/v1/requests/${central._id}`);
  t.notOk('pkcs12' in reread.json(), 'read once');

  const nobody = await createPrincipal(kernel, 'nobody-req');
  const refused = await submit(t, caller(kernel, nobody.headers), { workflow: 'enroll', profile: 'default', template: { csr: csrFor('x.example.com') } }, 403);
  t.equal(refused.error, 'REQ-006');
  const hidden = await caller(kernel, nobody.headers)('GET', `/api/v1/requests/${pending._id}`);
  t.equal(hidden.statusCode, 404, 'another principal\'s request does not exist for a principal without rights');
  t.equal(hidden.json().error, 'REQ-003');
});

t.test('revoke (reasons case-insensitive, WEBRA-REVOKE-005), renew, update, migrate', async (t) => {
  const enrolled = await submit(t, admin, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('life.example.com', ['life.example.com']) } });
  const id = enrolled.certificateId as string;

  const renewed = await submit(t, admin, { module: 'webra', workflow: 'renew', certificateId: id, template: { csr: csrFor('life.example.com', ['life.example.com']) } });
  t.equal(renewed.status, 'completed');
  t.not(renewed.certificateId, id, 'a new certificate');
  t.same(renewed.certificate.metadata.find((m: Json) => m.key === 'previous_certificate_id'), { key: 'previous_certificate_id', value: id });

  const updated = await submit(t, admin, { workflow: 'update', certificateId: id, template: { owner: { value: 'alice' }, contactEmail: { value: 'alice@example.com' }, metadata: [{ metadata: 'ticket', value: 'T-1' }] } });
  t.equal(updated.status, 'completed');
  t.equal(updated.module, 'webra', 'module inferred from the certificate');
  t.equal(updated.certificate.owner, 'alice');
  t.equal(updated.certificate.contactEmail, 'alice@example.com');

  await profile('other', {});
  const migrated = await submit(t, admin, { module: 'webra', workflow: 'migrate', certificateId: id, profile: 'other', template: {} });
  t.equal(migrated.certificate.profile, 'other');

  const revoked = await submit(t, admin, { workflow: 'revoke', certificateId: id, revocationReason: null, template: { revocationReason: 'AffiliationChange' } });
  t.equal(revoked.status, 'completed');
  t.equal(revoked.certificate.revoked, true);
  t.equal(revoked.certificate.revocationReason, 'AFFILIATIONCHANGED');
  const twice = await submit(t, admin, { workflow: 'revoke', certificatePem: revoked.certificate.certificate, revocationReason: 'keycompromise' }, 400);
  t.equal(twice.error, 'WEBRA-REVOKE-005');
  t.equal(twice.message, 'Certificate is already revoked');
  const unknownReason = await submit(t, admin, { workflow: 'revoke', certificateId: renewed.certificateId, revocationReason: 'bored' }, 400);
  t.equal(unknownReason.error, 'WEBRA-REVOKE-006');
});

t.test('update, migrate and import follow the profile rules for labels, owner, team and contact', async (t) => {
  for (const name of ['env', 'app', 'stray']) t.equal((await admin('POST', '/api/v1/certificate/labels/', { name })).statusCode, 201, `label ${name} defined`);
  await profile('ruled', {
    labels: [
      { label: 'env', value: 'prod', editable: false },
      { label: 'app', value: null, mandatory: true, editable: true },
    ],
    team: { value: 'pki', mandatory: true, editable: false },
  });
  const enrolled = await submit(t, admin, { workflow: 'enroll', profile: 'ruled', template: { csr: csrFor('ruled.example.com', ['ruled.example.com']), labels: [{ label: 'app', value: 'web' }] } });
  t.same(enrolled.certificate.labels.map((l: Json) => `${l.key}=${l.value}`).sort(), ['app=web', 'env=prod'], 'enrolled with the fixed and the given label');
  const id = enrolled.certificateId as string;
  const labelsOf = async (certificateId: string): Promise<string[]> => {
    const res = await admin('GET', `/api/v1/certificates/${certificateId}`);
    t.equal(res.statusCode, 200, `GET certificate ${certificateId}: ${res.body.slice(0, 200)}`);
    return (res.json().certificate.labels as Json[]).map((l) => `${l.key}=${l.value}`).sort();
  };

  const fixed = await submit(t, admin, { workflow: 'update', certificateId: id, template: { labels: [{ label: 'env', value: 'dev' }] } }, 400);
  t.match(fixed, { error: 'PRF-011', detail: /label env is not editable in profile ruled/ }, 'a label the profile fixes is not changed by an update');
  const unlisted = await submit(t, admin, { workflow: 'update', certificateId: id, template: { labels: [{ label: 'stray', value: 'x' }] } }, 400);
  t.match(unlisted, { error: 'PRF-013', message: 'Label element stray is not authorized' });
  const cleared = await submit(t, admin, { workflow: 'update', certificateId: id, template: { labels: [{ label: 'app', value: null }] } }, 400);
  t.match(cleared, { error: 'PRF-010', detail: /label app is mandatory/ });
  const team = await submit(t, admin, { workflow: 'update', certificateId: id, template: { team: { value: 'other' } } }, 400);
  t.match(team, { error: 'PRF-011', detail: /team is not editable/ });
  const email = await submit(t, admin, { workflow: 'update', certificateId: id, template: { contactEmail: { value: 'not-an-address' } } }, 400);
  t.equal(email.error, 'PRF-011');
  t.same(await labelsOf(id), ['app=web', 'env=prod'], 'refused updates changed nothing');
  const edited = await submit(t, admin, { workflow: 'update', certificateId: id, template: { labels: [{ label: 'app', value: 'api' }], owner: { value: 'carol' } } });
  t.equal(edited.status, 'completed');
  t.same(await labelsOf(id), ['app=api', 'env=prod'], 'an editable label changes, the others stay');

  // Entering the profile: its fixed values are applied, its mandatory elements must be there.
  const plain = await submit(t, admin, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('enter.example.com', ['enter.example.com']) } });
  const incomplete = await submit(t, admin, { workflow: 'migrate', certificateId: plain.certificateId, profile: 'ruled', template: {} }, 400);
  t.match(incomplete, { error: 'PRF-010', detail: /label app is mandatory in profile ruled/ }, 'migrate into a profile needs its mandatory labels');
  const migrated = await submit(t, admin, { workflow: 'migrate', certificateId: plain.certificateId, profile: 'ruled', template: { labels: [{ label: 'app', value: 'mail' }] } });
  t.equal(migrated.certificate.profile, 'ruled');
  t.same(await labelsOf(plain.certificateId), ['app=mail', 'env=prod'], 'the fixed label was set on the way in');
  t.equal(migrated.certificate.team, 'pki', 'and the fixed team');

  const dir = mkdtempSync(join(tmpdir(), 'cw-import-rules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-subj', '/CN=import-rules.example.com', '-days', '30'], { stdio: 'ignore' });
  const pem = readFileSync(join(dir, 'c.pem'), 'utf8');
  const missing = await submit(t, admin, { module: 'webra', workflow: 'import', profile: 'ruled', certificatePem: pem, template: {} }, 400);
  t.equal(missing.error, 'PRF-010', 'import into a profile needs its mandatory labels');
  const imported = await submit(t, admin, { module: 'webra', workflow: 'import', profile: 'ruled', certificatePem: pem, template: { labels: [{ label: 'app', value: 'legacy' }] } });
  t.same(imported.certificate.labels.map((l: Json) => `${l.key}=${l.value}`).sort(), ['app=legacy', 'env=prod']);
  t.equal(imported.certificate.team, 'pki');
});

t.test('escrow: centralized key kept sealed, recovered as a fresh PKCS#12; no escrow → error mentions escrow', async (t) => {
  await profile('escrow', { keyPolicy: { escrow: true, preferredEnrollmentMode: 'centralized' } });
  const enrolled = await submit(t, admin, { workflow: 'enroll', profile: 'escrow', template: { subject: [{ element: 'cn.1', value: 'escrow.example.com' }], keyType: 'ec-secp256r1' } });
  t.equal(enrolled.certificate.escrowed, true);
  const recovered = await submit(t, admin, { workflow: 'recover', certificateId: enrolled.certificateId, password: 'Recover-Pass-1!' });
  t.equal(recovered.status, 'completed');
  const p12 = decodePkcs12(Buffer.from(recovered.pkcs12.value, 'base64'), 'Recover-Pass-1!');
  t.ok(p12.keys.length >= 1);
  const rows = await kernel.db.knex('requests').select('template');
  t.notOk(rows.some((r: { template: string }) => /PRIVATE KEY|Recover-Pass/.test(r.template)), 'no secret in the requests table');

  const plain = await submit(t, admin, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('noescrow.example.com') } });
  const refused = await submit(t, admin, { workflow: 'recover', certificateId: plain.certificateId, password: { value: 'x' } }, 400);
  t.match(refused.message, /escrow/);
});

t.test('import: an existing certificate and its key into a profile', async (t) => {
  // A certificate made elsewhere (openssl), with its key.
  const dir = mkdtempSync(join(tmpdir(), 'cw-import-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-subj', '/CN=import.example.com', '-days', '30'], { stdio: 'ignore' });
  const pem = readFileSync(join(dir, 'c.pem'), 'utf8');
  const keyPem = readFileSync(join(dir, 'k.pem'), 'utf8');
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const mismatch = await submit(t, admin, { module: 'webra', workflow: 'import', profile: 'escrow', certificatePem: pem, template: { privateKey: other } }, 400);
  t.equal(mismatch.error, 'WEBRA-IMPORT-006', 'a key that is not the certificate\'s is refused');
  const imported = await submit(t, admin, { module: 'webra', workflow: 'import', profile: 'escrow', certificatePem: pem, template: { privateKey: keyPem, labels: [], owner: { value: 'bob' } } });
  t.equal(imported.status, 'completed');
  t.equal(imported.certificate.profile, 'escrow');
  t.equal(imported.certificate.escrowed, true);
  t.equal(imported.certificate.owner, 'bob');
  const recovered = await submit(t, admin, { workflow: 'recover', certificateId: imported.certificateId });
  t.ok(decodePkcs12(Buffer.from(recovered.pkcs12.value, 'base64'), recovered.password.value).keys.length >= 1, 'the imported key is recoverable');
});

t.test('challenge profile: approved with a one-time challenge, consumed once with a CSR', async (t) => {
  await profile('chal', { authorizationMode: 'challenge', challenge: { validityMinutes: 60 } });
  const submitted = await submit(t, admin, { module: 'webra', workflow: 'enroll', profile: 'chal', template: {} });
  t.equal(submitted.status, 'approved');
  const challenge = submitted.password?.value as string;
  t.ok(challenge, 'the challenge is returned in password.value');
  const again = await admin('GET', `/api/v1/requests/${submitted._id}`);
  t.notOk(again.json().password, 'returned once');
  const bad = await kernel.app.inject({ method: 'POST', url: '/api/v1/challenge/submit', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { challenge: 'wrong', csr: csrFor('c.example.com') } });
  t.equal(bad.statusCode, 403);
  t.equal(bad.json().error, 'CHAL-003');
  const used = await kernel.app.inject({ method: 'POST', url: '/api/v1/challenge/submit', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { challenge, csr: csrFor('c.example.com') } });
  t.equal(used.statusCode, 200, used.body);
  checkRequest(t, used.json(), 'challenge submit');
  t.equal(used.json().status, 'completed');
  t.ok(used.json().certificate);
  const reused = await kernel.app.inject({ method: 'POST', url: '/api/v1/challenge/submit', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { challenge, csr: csrFor('c.example.com') } });
  t.equal(reused.json().error, 'CHAL-007', 'a challenge is used once');

  // Expired: the row's expiry moved into the past.
  const second = await submit(t, admin, { module: 'webra', workflow: 'enroll', profile: 'chal', template: {} });
  await kernel.db.knex('request_challenges').where({ request_id: second._id }).update({ expires_at: Date.now() - 1000 });
  const expired = await kernel.app.inject({ method: 'POST', url: '/api/v1/challenge/submit', headers: { host: 'localhost', 'content-type': 'application/json' }, payload: { challenge: second.password.value, csr: csrFor('c.example.com') } });
  t.equal(expired.json().error, 'CHAL-006');
});

t.test('search, aggregate, csv, dictionary, profiles', async (t) => {
  const search = await admin('POST', '/api/v1/requests/search', { query: 'workflow equals "enroll" and status equals "completed"', withCount: true, pageIndex: 1 });
  t.equal(search.statusCode, 200, search.body);
  t.ok(search.json().count > 0);
  for (const r of search.json().results) t.equal(compatErrors('request', r), '', 'search result is a request object');
  const fields = await admin('POST', '/api/v1/requests/search', { query: null, fields: ['status'], pageSize: 2 });
  t.same(Object.keys(fields.json().results[0]).sort(), ['_id', 'status']);
  const agg = await admin('POST', '/api/v1/requests/aggregate', { query: '', groupBy: ['status'] });
  t.equal(agg.statusCode, 200, agg.body);
  t.ok(agg.json().items.some((i: Json) => i._id.status === 'completed'));
  const csv = await admin('POST', '/api/v1/requests/csv', { query: 'status equals "completed"' });
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  t.match(csv.body.split('\r\n')[0], /^_id,module,workflow,status/);
  const dictionary = await admin('GET', '/api/v1/requests/search/dictionary');
  t.equal(dictionary.statusCode, 200);
  const bad = await admin('POST', '/api/v1/requests/search', { query: 'status ==== ' });
  t.equal(bad.statusCode, 400);

  // Scope self: a principal with no search permission sees only its own.
  const someone = await createPrincipal(kernel, 'searcher', { permissions: [{ value: 'lifecycle:webra:default:enroll:direct' }] });
  const as = caller(kernel, someone.headers);
  await submit(t, as, { workflow: 'enroll', profile: 'default', template: { csr: csrFor('mine.example.com') } });
  const mine = await as('POST', '/api/v1/requests/search', { query: '', scope: 'self', withCount: true });
  t.equal(mine.json().count, 1);
  const all = await as('POST', '/api/v1/requests/search', { query: '', withCount: true });
  t.equal(all.json().count, 1, 'without search:requests, only its own');

  const usable = await as('GET', '/api/v1/requests/profiles?module=webra&workflow=enroll');
  t.equal(usable.statusCode, 200);
  t.same(usable.json().map((p: Json) => p.name), ['default']);
});

t.test("GET a request: globalHolderIdCount / profileHolderIdCount count its holder's valid certificates", async (t) => {
  await profile('holder-counts', {});
  const cn = 'holder-counts.example.com';
  const enroll = (profileName: string, name = cn): Promise<Json> =>
    submit(t, admin, { module: 'webra', workflow: 'enroll', profile: profileName, template: { csr: csrFor(name, [name]) } });
  const first = await enroll('default');
  const second = await enroll('default');
  await enroll('holder-counts');
  await enroll('default', 'someone-else.example.com');
  const revoked = await enroll('default');
  await submit(t, admin, { workflow: 'revoke', certificateId: revoked.certificateId, revocationReason: 'superseded' });
  // An expired certificate of the same holder, imported into the inventory.
  const key = ecKey();
  const expired = selfSignedCertificate(key, { subject: `CN=${cn}`, validityDays: 30, basicConstraints: { ca: false } }, { clock: () => Date.now() - 400 * 86_400_000 });
  const imported = await admin('POST', '/api/v1/certificates/', { certificate: toPem(expired, 'CERTIFICATE'), profile: 'default', holderId: cn });
  t.equal(imported.statusCode, 201, imported.body);

  for (const id of [first._id, second._id]) {
    const res = await admin('GET', `/api/v1/requests/${id}`);
    t.equal(res.statusCode, 200);
    const body = res.json();
    checkRequest(t, body, 'GET');
    t.equal(body.holderId, cn);
    t.equal(body.globalHolderIdCount, 3, 'valid in the tenant: two in default, one in holder-counts (not the revoked, not the expired, not another holder)');
    t.equal(body.profileHolderIdCount, 2, 'valid in its profile, default');
  }
  const other = await admin('GET', `/api/v1/requests/${revoked._id}`);
  t.equal(other.json().globalHolderIdCount, 3, "a revocation's own certificate no longer counts");
});
