/**
 * Domain control validation end to end: the collections (providers, provisioners, policies) through the API, a
 * policy run through the lifecycle routes as a job, the kernel's DNS facts against a real BIND9 on loopback (the
 * zone found by SOA, CNAME delegation into another zone, propagation asked of the authoritative server), records
 * written by the rfc2136 provisioner and read back by the dns provider, and every step's event.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { startBind9 } from '../../helpers/bind9.js';
import { dcvTestTools } from '../../helpers/dcv.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { caller, createPrincipal } from '../../helpers/security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LIFECYCLE = '/api/v1/dcv/lifecycle';
const bind = await startBind9(t, 'dcv.test', ['_acme-challenge.deleg IN CNAME deleg.validation.test.'], { 'validation.test': [] });
const kernel: Kernel = await bootKernel(t, {
  dcv: { resolvers: [`127.0.0.1:${bind.port}`], authoritativePort: bind.port, propagationTimeoutMs: 15_000, propagationIntervalMs: 200, queryTimeoutMs: 2000 },
  scheduler: { processEveryMs: 200 },
  certwright: { endpoints: [{ host: 'localhost', configuration: true, events: true, dcv: true }, { host: 'config-only.example', configuration: true }] },
} as never);
const admin = caller(kernel, ADMIN_HEADERS);
const { txt, settled, eventsOf } = dcvTestTools(kernel, admin, bind.port);

async function must(res: { statusCode: number; body: string }, status: number, what: string): Promise<void> {
  if (res.statusCode !== status) throw new Error(`setup ${what}: ${res.statusCode} ${res.body}`);
}

// --- configuration through the API --------------------------------------------------------------------------------
await must(await admin('POST', '/api/v1/security/credentials/', { name: 'tsig', type: 'raw', secret: { value: bind.tsig.secret }, targets: ['dcv'] }), 201, 'credential');
await must(await admin('POST', '/api/v1/security/credentials/', { name: 'wrong-tsig', type: 'raw', secret: { value: Buffer.alloc(32, 7).toString('base64') }, targets: ['dcv'] }), 201, 'wrong credential');
const provisioner = (name: string, credential: string) => ({
  name,
  type: 'rfc2136',
  configuration: { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: credential, propagationTimeoutSeconds: 15, propagationIntervalSeconds: 1 },
});
await must(await admin('POST', '/api/v1/dcv/provisioners/', provisioner('bind', 'tsig')), 201, 'provisioner');
await must(await admin('POST', '/api/v1/dcv/provisioners/', provisioner('bad-key', 'wrong-tsig')), 201, 'provisioner with a wrong key');
await must(await admin('POST', '/api/v1/dcv/providers/', { name: 'self', type: 'dns', configuration: {} }), 201, 'provider');
await must(await admin('POST', '/api/v1/dcv/policies/', { name: 'web', provider: 'self', provisioner: 'bind', domains: ['www.dcv.test', 'deleg.dcv.test', '*.apps.dcv.test'], retries: { max: 0 } }), 201, 'policy');
await must(await admin('POST', '/api/v1/dcv/policies/', { name: 'broken', provider: 'self', provisioner: 'bad-key', domains: ['broken.dcv.test'], retries: { max: 2, backoffSeconds: 1 } }), 201, 'broken policy');
await must(
  await admin('POST', '/api/v1/dcv/policies/', { name: 'persistent', provider: 'self', provisioner: 'bind', domains: ['p.dcv.test'], mode: 'persist', persist: { issuerDomainNames: ['ca.example'], accountUri: 'https://ca.example/acct/42' } }),
  201,
  'persistent policy',
);

t.test('the collections check what they store', async (t) => {
  const provider = (await admin('GET', '/api/v1/dcv/providers/self')).json() as Json;
  t.match(provider, { name: 'self', type: 'dns', configuration: { label: '_acme-challenge', ttl: 60 } }, 'the type\'s defaults filled in');
  for (const [label, url, body, code] of [
    ['unknown provisioner type', '/api/v1/dcv/provisioners/', { name: 'x', type: 'route53', configuration: {} }, 'DCV-PROVISIONER-002'],
    ['configuration the type refuses', '/api/v1/dcv/provisioners/', { name: 'x', type: 'rfc2136', configuration: { server: '127.0.0.1' } }, 'DCV-PROVISIONER-002'],
    ['a policy naming no existing provider', '/api/v1/dcv/policies/', { name: 'x', provider: 'ghost', domains: ['a.dcv.test'] }, 'DCV-POLICY-002'],
    ['a bad domain', '/api/v1/dcv/policies/', { name: 'x', provider: 'self', domains: ['not a domain'] }, 'DCV-POLICY-002'],
    ['a bad schedule', '/api/v1/dcv/policies/', { name: 'x', provider: 'self', domains: ['a.dcv.test'], schedule: 'every tuesday-ish' }, 'DCV-POLICY-002'],
    ['persist mode without its binding', '/api/v1/dcv/policies/', { name: 'x', provider: 'self', domains: ['a.dcv.test'], mode: 'persist' }, 'DCV-POLICY-002'],
  ] as const) {
    const res = await admin('POST', url, body);
    t.equal(res.statusCode, 400, `${label}: 400 (${res.body.slice(0, 200)})`);
    t.equal((res.json() as Json).error, code, label);
  }
  t.equal((await admin('DELETE', '/api/v1/dcv/provisioners/bind')).statusCode, 400, 'a provisioner a policy uses cannot be deleted');
  t.notOk((await admin('GET', '/api/v1/dcv/provisioners/')).body.includes(bind.tsig.secret), 'the TSIG secret is in a credential, never in a provisioner answer');
});

t.test('a run validates through the rfc2136 provisioner and leaves nothing behind', async (t) => {
  const since = Date.now();
  const queued = await admin('POST', `${LIFECYCLE}/policies/web/run/www.dcv.test`);
  t.equal(queued.statusCode, 202, queued.body);
  t.same(queued.json(), { policy: 'web', queued: ['www.dcv.test'] });
  const state = await settled('web', 'www.dcv.test', since);
  t.match(state, { status: 'validated', method: 'dns-txt', lastError: null, attempts: 1 }, JSON.stringify(state));
  t.ok(state.validatedUntil > Date.now() + 29 * 86_400_000, 'reusable for the policy\'s 30 days');
  const codes = (await eventsOf('www.dcv.test', since)).map((e) => e.code);
  t.same(codes, ['DCV-RUN-STARTED', 'DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED', 'DCV-VALIDATED'], 'an event per step');
  const published = (await eventsOf('www.dcv.test', since)).find((e) => e.code === 'DCV-RECORD-PUBLISHED')!;
  t.match(published.payload, { policy: 'web', fqdn: '_acme-challenge.www.dcv.test', zone: 'dcv.test', delegatedFrom: null });
  t.same(await txt('_acme-challenge.www.dcv.test'), [], 'the validation record is gone');
});

t.test('CNAME delegation: the record is written in the zone the validation name points into', async (t) => {
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/web/run/deleg.dcv.test`)).statusCode, 202);
  const state = await settled('web', 'deleg.dcv.test', since);
  t.equal(state.status, 'validated', JSON.stringify(state));
  const published = (await eventsOf('deleg.dcv.test', since)).find((e) => e.code === 'DCV-RECORD-PUBLISHED');
  t.match(published?.payload, { fqdn: 'deleg.validation.test', zone: 'validation.test', delegatedFrom: '_acme-challenge.deleg.dcv.test' });
  t.same(await txt('deleg.validation.test'), [], 'cleaned up in the delegated zone');
});

t.test('a run of the whole policy; wildcard entries are validated at their base', async (t) => {
  const since = Date.now();
  const queued = await admin('POST', `${LIFECYCLE}/policies/web/run`);
  t.equal(queued.statusCode, 202);
  t.same([...(queued.json() as Json).queued].sort(), ['apps.dcv.test', 'deleg.dcv.test', 'www.dcv.test']);
  for (const domain of ['apps.dcv.test', 'deleg.dcv.test', 'www.dcv.test']) t.equal((await settled('web', domain, since)).status, 'validated', domain);
  const all = (await admin('GET', `${LIFECYCLE}/policies/`)).json() as Json[];
  t.same(all.map((p) => p.name).sort(), ['broken', 'persistent', 'web']);
});

t.test('a provisioner with a wrong TSIG key: a clear error, an event, no retry, nothing written', async (t) => {
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/broken/run`)).statusCode, 202);
  const state = await settled('broken', 'broken.dcv.test', since);
  t.equal(state.status, 'failed');
  t.match(state.lastError, new RegExp(bind.tsig.name), `the error names the key: ${state.lastError}`);
  const failures = (await eventsOf('broken.dcv.test', since)).filter((e) => e.code === 'DCV-FAILURE');
  t.equal(failures.length, 1, 'one failure event');
  t.match(failures[0]!.payload, { policy: 'broken', final: true }, 'a key problem is not retried');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await eventsOf('broken.dcv.test', since)).filter((e) => e.code === 'DCV-RUN-STARTED').length, 1, 'no second attempt');
  t.same(await txt('_acme-challenge.broken.dcv.test'), [], 'nothing left in DNS');
});

t.test('dns-persist-01: one long-lived record, published once and kept', async (t) => {
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/persistent/run`)).statusCode, 202);
  const state = await settled('persistent', 'p.dcv.test', since);
  t.match(state, { status: 'validated', method: 'dns-persist-01' }, JSON.stringify(state));
  t.same(await txt('_validation-persist.p.dcv.test'), ['ca.example; accounturi=https://ca.example/acct/42'], 'the record stays');
  const again = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/persistent/run`)).statusCode, 202);
  t.equal((await settled('persistent', 'p.dcv.test', again)).status, 'validated');
  t.same((await eventsOf('p.dcv.test', again)).map((e) => e.code), ['DCV-RUN-STARTED', 'DCV-VALIDATED'], 'the second run publishes nothing');
});

t.test('external events, cancel, and the errors of the lifecycle routes', async (t) => {
  const reported = await admin('POST', `${LIFECYCLE}/events/web/www.dcv.test`, { status: 'failed', message: 'the CA withdrew it' });
  t.equal(reported.statusCode, 200, reported.body);
  t.match((reported.json() as Json).domains.find((d: Json) => d.domain === 'www.dcv.test'), { status: 'failed', lastError: 'the CA withdrew it', method: 'external' });
  const all = await admin('POST', `${LIFECYCLE}/events/web`, { status: 'validated', validatedUntil: Date.now() + 86_400_000 });
  t.equal(all.statusCode, 200);
  t.ok((all.json() as Json).domains.every((d: Json) => d.status === 'validated'), 'every domain of the policy');
  const cancel = await admin('POST', `${LIFECYCLE}/policies/web/cancel`);
  t.equal(cancel.statusCode, 200);
  t.match(cancel.json(), { policy: 'web', cancelled: Number });

  const expect = async (label: string, res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }, status: number, code?: string) => {
    t.equal(res.statusCode, status, label);
    if (code) t.equal((res.json() as Json).error, code, `${label}: ${code}`);
  };
  await expect('unknown policy', await admin('GET', `${LIFECYCLE}/policies/nope`), 404, 'DCV-003');
  await expect('a domain the policy does not cover', await admin('POST', `${LIFECYCLE}/policies/web/run/evil.example`), 400, 'DCV-005');
  await expect('a bad event body', await admin('POST', `${LIFECYCLE}/events/web`, { status: 'maybe' }), 400);
  await expect('malformed JSON', await admin('POST', `${LIFECYCLE}/events/web`, '{"status":'), 400);
  await expect('no credentials', await kernel.app.inject({ url: `${LIFECYCLE}/policies/`, headers: { host: 'localhost' } }), 401);
  const reader = await createPrincipal(kernel, 'dcv-reader', { permissions: [{ value: 'configuration:dcv:read' }] });
  await expect('read permission reads', await caller(kernel, reader.headers)('GET', `${LIFECYCLE}/policies/web`), 200);
  await expect('read permission does not run', await caller(kernel, reader.headers)('POST', `${LIFECYCLE}/policies/web/run`), 403, 'SEC-PERM-001');
  await expect('a host without capability dcv', await kernel.app.inject({ url: `${LIFECYCLE}/policies/`, headers: { host: 'config-only.example', ...ADMIN_HEADERS } }), 404);
});

t.test('a record that never reaches the authoritative servers is removed, and the run fails', async (t) => {
  // A provisioner that says it wrote the record but did not (an exec program that only logs its calls).
  const dir = tempDir(t, 'cw-dcv-exec-');
  const calls = join(dir, 'calls.log');
  const program = join(dir, 'fake-dns.sh');
  writeFileSync(program, `#!/bin/sh\necho "$1 $2" >> '${calls}'\n`);
  chmodSync(program, 0o755);
  await must(await admin('POST', '/api/v1/dcv/provisioners/', { name: 'lying', type: 'exec', configuration: { command: program, propagationTimeoutSeconds: 2, propagationIntervalSeconds: 1 } }), 201, 'exec provisioner');
  await must(await admin('POST', '/api/v1/dcv/policies/', { name: 'unpropagated', provider: 'self', provisioner: 'lying', domains: ['lost.dcv.test'], retries: { max: 0 } }), 201, 'policy');
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/unpropagated/run`)).statusCode, 202);
  const state = await settled('unpropagated', 'lost.dcv.test', since);
  t.equal(state.status, 'failed');
  t.match(state.lastError, /not yet at .* TXT _acme-challenge\.lost\.dcv\.test/, `the error says which servers lag: ${state.lastError}`);
  t.same(
    readFileSync(calls, 'utf8').trim().split('\n'),
    ['present _acme-challenge.lost.dcv.test', 'cleanup _acme-challenge.lost.dcv.test'],
    'the provisioner was asked to remove what it was asked to write',
  );
  t.same((await eventsOf('lost.dcv.test', since)).map((e) => e.code), ['DCV-RUN-STARTED', 'DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED', 'DCV-FAILURE']);
});

t.test('deleting a policy removes its state', async (t: Test) => {
  t.equal((await admin('DELETE', '/api/v1/dcv/policies/broken')).statusCode, 204);
  // The clean-up follows the committed delete (the registry's afterChange), possibly just after the answer.
  const left = async () => Number(((await kernel.db.knex('dcv_domains').where({ policy: 'broken' }).count({ n: '*' })) as Json[])[0]!.n);
  for (let i = 0; i < 50 && (await left()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(await left(), 0, 'no state left for the deleted policy');
});
