/**
 * Automation that renews by itself (issue 30 items 2 and 3), end to end on SQLite and (TEST_DATABASE_URL)
 * MariaDB with a fake clock: certificates issued by the local CA enter their automation policy's renewal
 * window, the `lifecycle` scheduled task renews them through the request workflow, a second node running the
 * same task at the same time renews nothing twice, the superseded certificates are revoked after the grace,
 * events and a webhook trigger fire, a failing renewal is retried with backoff and then given up, stale
 * requests are canceled, and an execution policy holds the task back.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import type { LifecycleOutcome, LifecycleRunner } from '../../../core/automation/lifecycle/runner.js';
import { idsCoveredByPolicies } from '../../../core/automation/policies/coverage.js';
import type { AutomationPolicy } from '../../../core/automation/policies/model.js';
import { startReceiver } from '../../fixtures/channels/receiver.js';
import { onMysql } from '../../helpers/database.js';
import { ADMIN_HEADERS, bootKernel, ENROLLMENT_BOOTSTRAP, testConfig } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { csrFor } from '../../helpers/csr.js';
import { until } from '../../helpers/until.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DAY = 86_400_000;
let offset = 0;
/** The platform's time: the real one moved forward by the test. */
const clock = (): number => Date.now() + offset;

const receiver = await startReceiver(t);
const overrides = {
  ...ENROLLMENT_BOOTSTRAP,
  plugins: { instances: { 'trigger-webhook': [{ name: 'default', config: { allowHttp: true, allowPrivateNetworks: true } }] } },
  scheduler: { processEveryMs: 100 },
  triggers: { dispatchEveryMs: 200, delivery: { retries: 3, initialDelayMs: 100, maxDelayMs: 1000, timeoutMs: 2000 }, expiryScan: { every: '1 hour' } },
};
const config = await testConfig(t, overrides);
const kernel = await bootKernel(t, {}, { config, clock });
// The second node: on MariaDB a second kernel on the same database; SQLite is one process's file, so there the
// same kernel runs the task twice at once (the claims are in the database either way).
const other: Kernel = onMysql() ? await bootKernel(t, {}, { config, clock }) : kernel;
const admin = caller(kernel, ADMIN_HEADERS);
const runnerOf = (k: Kernel): LifecycleRunner => k.container.resolve('automation') as LifecycleRunner;

async function ok(t: Test, res: { statusCode: number; body: string }, status: number, what: string): Promise<void> {
  t.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 300)}`);
}

/** A profile like `default`, with a 30-day validity. */
async function profile(name: string, overrides: Json = {}): Promise<void> {
  const base = (await admin('GET', '/api/v1/certificate/profiles/default')).json() as Json;
  for (const k of ['_id', 'createdAt', 'updatedAt', 'authorizationLevels', 'selfPermissions']) delete base[k];
  const res = await admin('POST', '/api/v1/certificate/profiles/', { ...base, name, validityDays: 30, ...overrides });
  if (res.statusCode !== 201) throw new Error(`profile ${name}: ${res.statusCode} ${res.body}`);
}

async function enroll(profileName: string, cn: string, team: string, centralized = false): Promise<Json> {
  const template: Json = centralized
    ? { subject: [{ element: 'cn.1', value: cn }], keyType: 'ec-secp256r1', team: { value: team } }
    : { csr: csrFor(cn, [cn]), team: { value: team } };
  const res = await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: profileName, template });
  if (res.statusCode !== 201) throw new Error(`enroll ${cn}: ${res.statusCode} ${res.body}`);
  return (res.json() as Json).certificate as Json;
}

const certificate = async (id: string): Promise<Json> => ((await admin('GET', `/api/v1/certificates/${id}`)).json() as Json).certificate as Json;
const metadata = (c: Json, key: string): string | undefined => (c.metadata as { key: string; value: string }[]).find((m) => m.key === key)?.value;
const renewRequests = async (profileName: string): Promise<number> => Number(((await kernel.db.knex('requests').where({ profile: profileName, workflow: 'renew' }).count({ n: '*' }).first()) as { n: number | string }).n);
const eventsOf = async (code: string, id: string): Promise<Json[]> => ((await admin('POST', '/api/v1/events/search', { query: `code equals "${code}" and object.id equals "${id}"` })).json() as Json).results as Json[];

await profile('auto');
await profile('fragile');
await admin('POST', '/api/v1/triggers/', { name: 'automation-hook', channel: 'webhook', target: { url: `${receiver.base}/hook`, secret: 'automation-hook-secret' }, events: ['renewed', 'revoked', 'automation_failure'] });

// Covered: a decentralized (holder's CSR) and a centralized (server key) certificate of team web. Not covered:
// team ops (the policy's query), and a certificate of another profile.
const holderKeyed = await enroll('auto', 'holder.example.com', 'web');
const serverKeyed = await enroll('auto', 'server.example.com', 'web', true);
const otherTeam = await enroll('auto', 'ops.example.com', 'ops');
const otherProfile = await enroll('default', 'plain.example.com', 'web');
const fragile = await enroll('fragile', 'fragile.example.com', 'web');

t.test('automation policies: the standard set, references and checks', async (t) => {
  const policy = { name: 'auto-renew', profile: 'auto', query: 'team equals "web"', renewal: { mode: 'daysBeforeExpiry', daysBeforeExpiry: 10 }, revokeSupersededAfterDays: 2, expireRequestsAfterDays: 5 };
  await ok(t, await admin('POST', '/api/v1/automation/policies/', policy), 201, 'create');
  const got = (await admin('GET', '/api/v1/automation/policies/auto-renew')).json() as Json;
  t.match(got, { ...policy, renewOn: ['expiry'], requireApproval: false, retries: { max: 5, backoffMinutes: 60 } }, 'stored with its defaults');
  const list = (await admin('GET', '/api/v1/automation/policies/')).json() as Json[];
  t.same(list.map((p) => p.name), ['auto-renew']);

  const bad = async (body: Json, message: RegExp, what: string) => {
    const res = await admin('POST', '/api/v1/automation/policies/', body);
    t.equal(res.statusCode, 400, what);
    t.equal(res.json().error, 'AUTOMATION-POLICY-002', `${what}: AUTOMATION-POLICY-002`);
    t.match(res.json().message + ' ' + (res.json().detail ?? ''), message, `${what}: says why`);
  };
  await bad({ name: 'x', profile: 'nope' }, /nope/, 'an unknown profile');
  await bad({ name: 'x', profile: 'auto', query: 'team equals' }, /query/, 'a query that does not parse');
  await bad({ name: 'x', profile: 'auto', executionPolicy: 'missing' }, /missing/, 'an unknown execution policy');
  await bad({ name: 'x', profile: 'auto', renewOn: ['noncompliance'] }, /compliancePolicy/, 'noncompliance without rules');
  await bad({ name: 'x', profile: 'auto', surprise: true }, /surprise|additional/, 'an unknown field');
  const dup = await admin('POST', '/api/v1/automation/policies/', policy);
  t.equal(dup.json().error, 'AUTOMATION-POLICY-004', 'a taken name');

  await ok(t, await admin('POST', '/api/v1/automation/policies/', { name: 'fragile', profile: 'fragile', retries: { max: 1, backoffMinutes: 60 }, renewal: { mode: 'daysBeforeExpiry', daysBeforeExpiry: 10 } }), 201, 'a second policy');
  // Held back always: a forbidden period with no constraint admits every instant.
  await ok(t, await admin('POST', '/api/v1/automation/executions/', { name: 'never', forbiddenPeriods: [{}] }), 201, 'an execution policy');
  await ok(t, await admin('POST', '/api/v1/automation/policies/', { name: 'paused', profile: 'auto', executionPolicy: 'never' }), 201, 'a paused policy');

  // The lifecycle task names its policy: checked when saved, and the policy cannot go while it does.
  const task = { name: 'renew-auto', type: 'lifecycle', cron: '0 3 * * *', parameters: { policy: 'auto-renew' } };
  await ok(t, await admin('POST', '/api/v1/scheduler/tasks/', task), 201, 'a lifecycle task');
  const unknown = await admin('POST', '/api/v1/scheduler/tasks/', { ...task, name: 'renew-nothing', parameters: { policy: 'nope' } });
  t.equal(unknown.statusCode, 400);
  t.match(unknown.json().message, /parameters\.policy/);
  const referenced = await admin('DELETE', '/api/v1/automation/policies/auto-renew');
  t.equal(referenced.json().error, 'AUTOMATION-POLICY-005', 'a policy a task names is not deleted');
  const executionReferenced = await admin('DELETE', '/api/v1/automation/executions/never');
  t.equal(executionReferenced.json().error, 'EXECUTION-POLICY-005', 'an execution policy a policy names is not deleted');

  // What the policy covers (the 47-day simulator counts these as automated): its profile's, matching its query.
  const stored = (await kernel.configObjects.list('automation-policy', 'default')).filter((p) => p.name === 'auto-renew') as unknown as AutomationPolicy[];
  const covered = await idsCoveredByPolicies(kernel.db.knex, 'default', stored, clock());
  t.same([...covered].sort(), [holderKeyed._id, serverKeyed._id].sort(), 'covered: team web of profile auto');
});

t.test('lifecycle routes: how to enroll under a policy, and whether a certificate complies', async (t) => {
  const init = (await admin('GET', '/api/v1/automation/lifecycle/auto-renew')).json() as Json;
  t.match(init, { module: 'webra', profile: 'auto', keyType: 'ec-secp256r1', enrollmentMode: 'decentralized', executionPolicy: null }, 'module, profile, key type, modes');
  t.equal((await admin('GET', '/api/v1/automation/lifecycle/nope')).json().error, 'AUTOMATION-POLICY-003', 'an unknown policy: 404');
  const anonymous = await kernel.app.inject({ method: 'GET', url: '/api/v1/automation/lifecycle/auto-renew', headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401, 'no credentials: 401');
  const nobody = await createPrincipal(kernel, 'automation-nobody');
  t.equal((await caller(kernel, nobody.headers)('GET', '/api/v1/automation/lifecycle/auto-renew')).statusCode, 403, 'no right on the profile: 403');
  const enroller = await createPrincipal(kernel, 'automation-enroller', { permissions: [{ value: 'lifecycle:webra:auto:enroll:request' }] });
  t.equal((await caller(kernel, enroller.headers)('GET', '/api/v1/automation/lifecycle/auto-renew')).statusCode, 200, 'whoever may enroll on the profile reads it');
  const wrongHost = await kernel.app.inject({ method: 'GET', url: '/api/v1/automation/lifecycle/auto-renew', headers: { ...ADMIN_HEADERS, host: 'elsewhere.example' } });
  t.equal(wrongHost.statusCode, 404, 'wrong host: 404');

  // Without a certificate of its own, a client enrolls.
  t.same((await admin('GET', '/api/v1/automation/lifecycle/auto-renew/verify')).json(), { runnable: true, renewable: false, reason: 'no certificate of the policy: enroll' });
  t.same(((await admin('GET', '/api/v1/automation/lifecycle/paused/verify')).json() as Json).runnable, false, 'not runnable inside a forbidden period');
});

/** The holder of a certificate calls verify with its proof of possession (the v1 Go client's Check). */
async function verifyAsHolder(t: Test, key: import('node:crypto').KeyObject, pem: string): Promise<{ statusCode: number; body: string; json(): Json }> {
  const proof = async (nonce?: string) => {
    const iat = Math.floor(clock() / 1000);
    return new SignJWT(nonce ? { nonce } : {}).setProtectedHeader({ alg: 'ES256' }).setSubject(pem).setIssuedAt(iat).setExpirationTime(iat + 5).sign(key);
  };
  const url = '/api/v1/automation/lifecycle/auto-renew/verify';
  const first = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost', 'x-jwt-cert-pop': await proof() } });
  t.equal(first.statusCode, 401, 'a proof without nonce is challenged');
  const nonce = first.headers['replay-nonce'] as string;
  return kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost', 'x-jwt-cert-pop': await proof(nonce) } });
}

t.test('the renewal window opens: the task renews through the workflow, once, on two nodes', async (t) => {
  const holderKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  // Nothing is due yet: a run through the scheduler (the task's run route) renews nothing.
  await ok(t, await admin('GET', '/api/v1/scheduler/tasks/renew-auto/run'), 202, 'run now');
  await until('the first run finished', async () => ((await admin('GET', '/api/v1/scheduler/tasks/renew-auto')).json() as Json).lastFinished !== null, 20_000);
  const first = (await admin('GET', '/api/v1/scheduler/tasks/renew-auto')).json() as Json;
  t.match(first.lastResult, { status: 'success', summary: /^0 renewed/ }, 'nothing due yet');
  t.equal(await renewRequests('auto'), 0);

  // 21 days on, 9 days are left: inside the 10-day window.
  offset = 21 * DAY;
  const held = await runnerOf(kernel).run('default', 'paused');
  t.match(held, { status: 'success', details: { renewed: 0, outsideExecutionPolicy: true } }, 'the execution policy holds a policy back');

  const [a, b] = (await Promise.all([runnerOf(kernel).run('default', 'auto-renew'), runnerOf(other).run('default', 'auto-renew')])) as [LifecycleOutcome, LifecycleOutcome];
  t.equal(a.details.renewed + b.details.renewed, 2, `two certificates renewed between both nodes (${a.summary} | ${b.summary})`);
  t.equal(a.details.failed + b.details.failed, 0, 'no failure');
  t.equal(await renewRequests('auto'), 2, 'exactly two renewal requests: nothing renewed twice');

  for (const [what, old] of [['holder-keyed', holderKeyed], ['server-keyed', serverKeyed]] as const) {
    const before = await certificate(old._id);
    const successor = metadata(before, 'renewed_certificate_id');
    t.ok(successor, `${what}: the old certificate names its successor`);
    const next = await certificate(successor!);
    t.equal(metadata(next, 'previous_certificate_id'), old._id, `${what}: the successor names its predecessor`);
    t.equal(next.dn, old.dn, `${what}: same subject`);
    t.equal(next.team, 'web', `${what}: same team`);
    t.ok(next.notAfter > old.notAfter, `${what}: a later expiry`);
    t.equal(before.revoked, false, `${what}: the old one is not revoked before the grace`);
    t.equal((await eventsOf('CERTIFICATE-RENEWED', successor!)).length, 1, `${what}: CERTIFICATE-RENEWED written`);
    if (what === 'holder-keyed') t.equal(next.publicKeyThumbprint, old.publicKeyThumbprint, 'the holder keeps its key (its CSR reused)');
    else t.not(next.publicKeyThumbprint, old.publicKeyThumbprint, 'a new server-side key');
  }
  for (const untouched of [otherTeam, otherProfile]) t.notOk(metadata(await certificate(untouched._id), 'renewed_certificate_id'), `${untouched.dn}: not covered, not renewed`);

  // The renewed certificates are not due: another run on both nodes does nothing.
  const again = await Promise.all([runnerOf(kernel).run('default', 'auto-renew'), runnerOf(other).run('default', 'auto-renew')]);
  t.same(again.map((o) => o.details.renewed), [0, 0], 'a second run renews nothing');
  t.equal(await renewRequests('auto'), 2);

  // The webhook heard both renewals.
  await until('the webhook calls', () => receiver.received.filter((r) => r.headers['x-certwright-event'] === 'CERTIFICATE-RENEWED').length >= 2, 20_000);
  t.equal(receiver.received.filter((r) => r.headers['x-certwright-event'] === 'CERTIFICATE-RENEWED').length, 2, 'one webhook call per renewal');

  // The holder of a renewed-away certificate is told to enroll; the holder of a due one to renew; a fresh one complies.
  const proofKey = holderKey;
  const fresh = await admin('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'auto', template: { csr: csrFor('fresh.example.com', ['fresh.example.com'], proofKey), team: { value: 'web' } } });
  const freshPem = (fresh.json() as Json).certificate.certificate as string;
  const compliant = await verifyAsHolder(t, proofKey, freshPem);
  t.equal(compliant.statusCode, 204, `a certificate outside its window complies: 204 (${compliant.body})`);
  offset = 42 * DAY;
  const due = await verifyAsHolder(t, proofKey, freshPem);
  t.equal(due.statusCode, 200);
  t.match(due.json(), { runnable: true, renewable: true }, 'inside its window: renew');
  offset = 21 * DAY;
});

t.test('the grace passes: the superseded certificates are revoked once', async (t) => {
  offset = 24 * DAY;
  const [a, b] = await Promise.all([runnerOf(kernel).run('default', 'auto-renew'), runnerOf(other).run('default', 'auto-renew')]);
  t.equal(a.details.revoked + b.details.revoked, 2, 'both predecessors revoked, between both nodes');
  for (const old of [holderKeyed, serverKeyed]) {
    const c = await certificate(old._id);
    t.equal(c.revoked, true, `${old.dn}: revoked`);
    t.equal(String(c.revocationReason).toLowerCase(), 'superseded', 'for being superseded');
    t.equal((await eventsOf('CERTIFICATE-REVOKED', old._id)).length, 1, 'one CERTIFICATE-REVOKED');
  }
  const rows = (await kernel.db.knex('automation_renewals').where({ policy: 'auto-renew' }).select('status')) as { status: string }[];
  t.same(rows.map((r) => r.status), ['revoked', 'revoked']);
  await until('the webhook calls of the revocations', () => receiver.received.filter((r) => r.headers['x-certwright-event'] === 'CERTIFICATE-REVOKED').length >= 2, 20_000);
});

t.test('a renewal that fails is retried with backoff, raises an event, then is given up', async (t) => {
  // The profile is disabled: its renewals cannot go through.
  const base = (await admin('GET', '/api/v1/certificate/profiles/fragile')).json() as Json;
  for (const k of ['createdAt', 'updatedAt', 'authorizationLevels', 'selfPermissions']) delete base[k];
  await ok(t, await admin('PUT', '/api/v1/certificate/profiles/', { ...base, enabled: false }), 200, 'profile disabled');

  const first = await runnerOf(kernel).run('default', 'fragile');
  t.match(first, { status: 'failure', details: { failed: 1, renewed: 0 } }, 'the run reports the failure');
  let row = (await kernel.db.knex('automation_renewals').where({ certificate_id: fragile._id }).first()) as Json;
  t.match(row, { status: 'failed', attempts: 1, last_error: /disabled/ }, 'the claim records the attempt and why');
  t.ok(Math.abs(Number(row.next_attempt_at) - (clock() + 60 * 60_000)) < 10_000, 'retried after the backoff (60 minutes)');
  const failures = await eventsOf('AUTOMATION-RENEWAL-FAILED', fragile._id);
  t.equal(failures.length, 1, 'AUTOMATION-RENEWAL-FAILED written');
  t.match(failures[0]!.payload ?? failures[0], {}, 'with its payload');

  const soon = await runnerOf(kernel).run('default', 'fragile');
  t.match(soon.details, { failed: 0, renewed: 0 }, 'not retried before the backoff');
  t.equal(Number(((await kernel.db.knex('automation_renewals').where({ certificate_id: fragile._id }).first()) as Json).attempts), 1, 'no attempt made');

  offset += 2 * 3_600_000;
  const last = await runnerOf(kernel).run('default', 'fragile');
  t.equal(last.details.failed, 1, 'retried once the backoff passed');
  row = (await kernel.db.knex('automation_renewals').where({ certificate_id: fragile._id }).first()) as Json;
  t.match(row, { status: 'given-up', attempts: 2 }, 'retries spent: given up');
  t.equal((await eventsOf('AUTOMATION-RENEWAL-FAILED', fragile._id)).length, 2);
  offset += 10 * 3_600_000;
  t.equal((await runnerOf(kernel).run('default', 'fragile')).details.failed, 0, 'a given-up renewal is not tried again');
  await until('the failure webhook', () => receiver.received.some((r) => r.headers['x-certwright-event'] === 'AUTOMATION-RENEWAL-FAILED'), 20_000);
  const hook = JSON.parse(receiver.received.find((r) => r.headers['x-certwright-event'] === 'AUTOMATION-RENEWAL-FAILED')!.body) as Json;
  t.equal(hook.certificate._id, fragile._id, 'the webhook names the certificate');
});

t.test('stale requests of the profile are canceled', async (t) => {
  const requester = await createPrincipal(kernel, 'automation-requester', { permissions: [{ value: 'lifecycle:webra:auto:enroll:request' }] });
  const pending = await caller(kernel, requester.headers)('POST', '/api/v1/requests/submit', { module: 'webra', workflow: 'enroll', profile: 'auto', template: { csr: csrFor('pending.example.com', ['pending.example.com']) } });
  t.equal((pending.json() as Json).status, 'pending', 'a request waits for an approver');
  const id = (pending.json() as Json)._id as string;
  await runnerOf(kernel).run('default', 'auto-renew');
  t.equal(((await admin('GET', `/api/v1/requests/${id}`)).json() as Json).status, 'pending', 'not stale yet');
  offset += 6 * DAY;
  const run = await runnerOf(kernel).run('default', 'auto-renew');
  t.equal(run.details.expiredRequests, 1, 'one stale request');
  t.equal(((await admin('GET', `/api/v1/requests/${id}`)).json() as Json).status, 'canceled', 'canceled');
});

t.test('a policy that wants renewals approved: the renewal waits for an approver, then counts as renewed', async (t) => {
  await profile('gated');
  const gated = await enroll('gated', 'gated.example.com', 'web');
  await ok(t, await admin('POST', '/api/v1/automation/policies/', { name: 'gated-renewal', profile: 'gated', requireApproval: true, renewal: { mode: 'daysBeforeExpiry', daysBeforeExpiry: 10 } }), 201, 'policy');
  offset += 21 * DAY;
  const first = await runnerOf(kernel).run('default', 'gated-renewal');
  t.match(first.details, { requested: 1, renewed: 0, failed: 0 }, 'submitted, waiting for an approver');
  const row = (await kernel.db.knex('automation_renewals').where({ certificate_id: gated._id }).first()) as Json;
  t.equal(row.status, 'requested');
  const request = ((await admin('GET', `/api/v1/requests/${row.request_id}`)).json() as Json);
  t.match(request, { status: 'pending', workflow: 'renew', requester: 'automation:gated-renewal' }, 'a pending renewal request by the automation');
  t.match(((await runnerOf(kernel).run('default', 'gated-renewal')).details), { requested: 0, renewed: 0 }, 'nothing new while it waits');
  await ok(t, await admin('POST', '/api/v1/requests/approve', { _id: row.request_id }), 200, 'approved');
  const after = await runnerOf(kernel).run('default', 'gated-renewal');
  t.equal(after.details.renewed, 1, 'the next run sees it completed');
  t.ok(metadata(await certificate(gated._id), 'renewed_certificate_id'), 'the certificate names its successor');
});
