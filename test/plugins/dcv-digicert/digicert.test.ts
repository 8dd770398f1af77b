/**
 * The digicert DCV provider against a FAKE DigiCert CertCentral API (./fake-certcentral.ts: a local node http server
 * written from DigiCert's public Services API documentation, not DigiCert's service), a real BIND9 on loopback and the
 * rfc2136 provisioner, all configured through the API (credentials, provisioners, providers, policies) and run through
 * the lifecycle routes: the random value published at `_dnsauth.<domain>` (or the domain itself), read from BIND9 by
 * the fake as DigiCert would read it, the state and the events of each run, nothing left in DNS. Failure paths: a wrong
 * API key, a domain DigiCert rejects, an unknown organization; and the error mapping of the provider itself.
 */
import t from 'tap';
import { ConfigurationError, PermanentError, TransientError, type DcvProvider } from '@certwright/sdk';
import type { Kernel } from '../../../core/kernel.js';
import type { ProvidedServices } from '../../../core/plugins/provided.js';
import { startBind9 } from '../../helpers/bind9.js';
import { dcvTestTools } from '../../helpers/dcv.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { startFakeCertCentral } from './fake-certcentral.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LIFECYCLE = '/api/v1/dcv/lifecycle';
const ZONE = 'digicert.test';
const bind = await startBind9(t, ZONE);
const fake = await startFakeCertCentral(t, { dnsServer: `127.0.0.1:${bind.port}` });
const kernel: Kernel = await bootKernel(t, {
  dcv: { resolvers: [`127.0.0.1:${bind.port}`], authoritativePort: bind.port, propagationTimeoutMs: 15_000, propagationIntervalMs: 200, queryTimeoutMs: 2000 },
  scheduler: { processEveryMs: 200 },
  certwright: { endpoints: [{ host: 'localhost', configuration: true, events: true, dcv: true }] },
} as never);
const admin = caller(kernel, ADMIN_HEADERS);
const { txt, settled, eventsOf } = dcvTestTools(kernel, admin, bind.port);

async function must(res: { statusCode: number; body: string }, status: number, what: string): Promise<void> {
  if (res.statusCode !== status) throw new Error(`setup ${what}: ${res.statusCode} ${res.body}`);
}

// --- configuration through the API --------------------------------------------------------------------------------
const credential = (name: string, value: string) => admin('POST', '/api/v1/security/credentials/', { name, type: 'raw', secret: { value }, targets: ['dcv'] });
await must(await credential('tsig', bind.tsig.secret), 201, 'TSIG credential');
await must(await credential('digicert-key', fake.apiKey), 201, 'DigiCert API key');
await must(await credential('digicert-wrong', 'not-the-key-0123456789'), 201, 'a wrong DigiCert API key');
await must(
  await admin('POST', '/api/v1/dcv/provisioners/', {
    name: 'bind',
    type: 'rfc2136',
    configuration: { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: 'tsig', propagationTimeoutSeconds: 15, propagationIntervalSeconds: 1 },
  }),
  201,
  'provisioner',
);
const local = { baseUrl: fake.baseUrl, allowHttp: true, allowPrivateNetworks: true };
const provider = (name: string, configuration: Record<string, unknown>) => admin('POST', '/api/v1/dcv/providers/', { name, type: 'digicert', configuration: { ...local, ...configuration } });
await must(await provider('digicert', { apiKeyCredential: 'digicert-key', organizationId: fake.organizationId }), 201, 'provider');
await must(await provider('digicert-apex', { apiKeyCredential: 'digicert-key', organizationId: fake.organizationId, recordLabel: '@' }), 201, 'provider at the domain itself');
await must(await provider('digicert-wrong-key', { apiKeyCredential: 'digicert-wrong', organizationId: fake.organizationId }), 201, 'provider with a wrong key');
await must(await provider('digicert-wrong-org', { apiKeyCredential: 'digicert-key', organizationId: 999 }), 201, 'provider with an unknown organization');
const policy = (name: string, providerName: string, domains: string[]) =>
  admin('POST', '/api/v1/dcv/policies/', { name, provider: providerName, provisioner: 'bind', domains, retries: { max: 0 } });
await must(await policy('dc', 'digicert', ['www.digicert.test', 'rejected.digicert.test']), 201, 'policy');
await must(await policy('dc-apex', 'digicert-apex', ['known.digicert.test']), 201, 'policy at the domain itself');
await must(await policy('dc-wrong-key', 'digicert-wrong-key', ['wrongkey.digicert.test']), 201, 'policy with a wrong key');
await must(await policy('dc-wrong-org', 'digicert-wrong-org', ['wrongorg.digicert.test']), 201, 'policy with an unknown organization');

t.test('the provider type and its configuration', async (t) => {
  const provided = kernel.container.resolve('provided') as ProvidedServices;
  t.equal(provided.dcvProviders.pluginOf('digicert'), 'dcv-digicert', 'registered by the dcv-digicert plugin');
  const stored = (await admin('GET', '/api/v1/dcv/providers/digicert')).json() as Json;
  t.match(stored.configuration, { recordLabel: '_dnsauth', validationTypes: ['ov'], freshToken: true, apiKeyCredential: 'digicert-key' }, 'defaults filled in');
  t.notOk((await admin('GET', '/api/v1/dcv/providers/')).body.includes(fake.apiKey), 'the API key is in a credential, never in a provider');
  const inline = await admin('POST', '/api/v1/dcv/providers/', { name: 'x', type: 'digicert', configuration: { apiKeyCredential: 'digicert-key' } });
  t.equal(inline.statusCode, 400, 'organizationId is required');
});

t.test('fake DigiCert CertCentral API: a run adds the domain, publishes its random value at _dnsauth and validates', async (t) => {
  const since = Date.now();
  const calls = fake.calls.length;
  const queued = await admin('POST', `${LIFECYCLE}/policies/dc/run/www.digicert.test`);
  t.equal(queued.statusCode, 202, queued.body);
  const state = await settled('dc', 'www.digicert.test', since);
  t.match(state, { status: 'validated', method: 'dns-txt-token', lastError: null, attempts: 1 }, JSON.stringify(state));
  const events = await eventsOf('www.digicert.test', since);
  t.same(events.map((e) => e.code), ['DCV-RUN-STARTED', 'DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED', 'DCV-VALIDATED'], 'an event per step');
  t.match(events[1]!.payload, { policy: 'dc', fqdn: '_dnsauth.www.digicert.test', zone: ZONE, type: 'TXT' });

  const domain = [...fake.domains.values()].find((d) => d.name === 'www.digicert.test');
  t.ok(domain, 'added under its full name (keep_www)');
  t.match(domain, { organizationId: fake.organizationId, dcvMethod: 'dns-txt-token', status: 'approved' });
  const check = fake.dnsChecks.filter((c) => c.domain === 'www.digicert.test');
  t.ok(check.some((c) => c.found && c.values.includes(domain!.token!)), 'the fake found the random value in BIND9');
  const made = fake.calls.slice(calls).map((c) => `${c.method} ${c.path.replace(/\?.*$/, '')} ${c.status}`);
  t.same(made.slice(0, 2), ['GET /services/v2/domain 200', 'POST /services/v2/domain 201'], `looked up, then added: ${made.join(', ')}`);
  t.equal(made.at(-1), `PUT /services/v2/domain/${domain!.id}/dcv/validate-token 200`, 'checked until DigiCert saw it');
  t.same(await txt('_dnsauth.www.digicert.test'), [], 'the record is gone');

  // A second run finds the domain and asks for a fresh random value rather than adding it again.
  const again = Date.now();
  const before = fake.calls.length;
  const oldToken = domain!.token;
  t.equal((await admin('POST', `${LIFECYCLE}/policies/dc/run/www.digicert.test`)).statusCode, 202);
  t.equal((await settled('dc', 'www.digicert.test', again)).status, 'validated');
  const second = fake.calls.slice(before).map((c) => `${c.method} ${c.path.replace(/\?.*$/, '')}`);
  t.notOk(second.includes('POST /services/v2/domain'), 'not added twice');
  t.ok(second.includes(`POST /services/v2/domain/${domain!.id}/dcv/token`), 'a new random value');
  t.not(domain!.token, oldToken, 'a different value');
  t.same(await txt('_dnsauth.www.digicert.test'), [], 'the record is gone again');
});

t.test('fake DigiCert CertCentral API: a known domain with another DCV method is switched, the value published at the domain itself', async (t) => {
  const known = fake.seed('known.digicert.test', 'email');
  const since = Date.now();
  const before = fake.calls.length;
  t.equal((await admin('POST', `${LIFECYCLE}/policies/dc-apex/run/known.digicert.test`)).statusCode, 202);
  const state = await settled('dc-apex', 'known.digicert.test', since);
  t.match(state, { status: 'validated', method: 'dns-txt-token' }, JSON.stringify(state));
  const made = fake.calls.slice(before).map((c) => `${c.method} ${c.path.replace(/\?.*$/, '')}`);
  t.ok(made.includes(`PUT /services/v2/domain/${known.id}/dcv/method`), `DCV method changed: ${made.join(', ')}`);
  t.equal(known.dcvMethod, 'dns-txt-token');
  const published = (await eventsOf('known.digicert.test', since)).find((e) => e.code === 'DCV-RECORD-PUBLISHED');
  t.match(published?.payload, { fqdn: 'known.digicert.test', zone: ZONE });
  t.ok(fake.dnsChecks.some((c) => c.domain === 'known.digicert.test' && c.found), 'the fake found the value at the domain');
  t.same(await txt('known.digicert.test'), [], 'the record is gone');
});

t.test('fake DigiCert CertCentral API: a wrong API key fails the run with the credential named, nothing published', async (t) => {
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/dc-wrong-key/run/wrongkey.digicert.test`)).statusCode, 202);
  const state = await settled('dc-wrong-key', 'wrongkey.digicert.test', since);
  t.equal(state.status, 'failed');
  t.match(state.lastError, /credential "digicert-wrong"/, `the error names the credential: ${state.lastError}`);
  t.match(state.lastError, /HTTP 401/);
  const events = await eventsOf('wrongkey.digicert.test', since);
  t.same(events.map((e) => e.code), ['DCV-RUN-STARTED', 'DCV-FAILURE'], 'no record published');
  t.match(events[1]!.payload, { policy: 'dc-wrong-key', final: true }, 'a key problem is final');
  t.same(await txt('_dnsauth.wrongkey.digicert.test'), [], 'nothing in DNS');
  t.notOk([...fake.domains.values()].some((d) => d.name === 'wrongkey.digicert.test'), 'nothing added at DigiCert');
});

t.test('fake DigiCert CertCentral API: a domain DigiCert rejects fails, and its record is removed', async (t) => {
  fake.rejected.add('rejected.digicert.test');
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/dc/run/rejected.digicert.test`)).statusCode, 202);
  const state = await settled('dc', 'rejected.digicert.test', since);
  t.equal(state.status, 'failed', JSON.stringify(state));
  t.match(state.lastError, /DigiCert CertCentral refused rejected\.digicert\.test .*rejected/, `DigiCert's reason is the run's error: ${state.lastError}`);
  const codes = (await eventsOf('rejected.digicert.test', since)).map((e) => e.code);
  t.same(codes, ['DCV-RUN-STARTED', 'DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED', 'DCV-FAILURE'], 'published, removed, failed');
  t.match((await eventsOf('rejected.digicert.test', since)).at(-1)?.payload, { final: true }, 'a refusal is not retried');
  t.same(await txt('_dnsauth.rejected.digicert.test'), [], 'nothing left in DNS');
});

t.test('fake DigiCert CertCentral API: an organization the account does not have is a configuration error', async (t) => {
  const since = Date.now();
  t.equal((await admin('POST', `${LIFECYCLE}/policies/dc-wrong-org/run/wrongorg.digicert.test`)).statusCode, 202);
  const state = await settled('dc-wrong-org', 'wrongorg.digicert.test', since);
  t.equal(state.status, 'failed');
  t.match(state.lastError, /no organization 999/, state.lastError);
  const events = await eventsOf('wrongorg.digicert.test', since);
  t.same(events.map((e) => e.code), ['DCV-RUN-STARTED', 'DCV-FAILURE']);
  t.match(events[1]!.payload, { final: true });
  t.same(await txt('_dnsauth.wrongorg.digicert.test'), [], 'nothing in DNS');
});

t.test('fake DigiCert CertCentral API: how the provider reads DigiCert\'s answers', async (t) => {
  const provided = kernel.container.resolve('provided') as ProvidedServices;
  const factory = provided.dcvProviders.get('digicert')!;
  const make = async (config: Record<string, unknown>): Promise<DcvProvider> =>
    factory({ name: 'direct', config: { ...local, apiKeyCredential: 'digicert-key', organizationId: fake.organizationId, ...config } });
  const p = await make({});
  const publishNothing = {
    publish: async () => {
      throw new Error('not reached');
    },
    unpublish: async () => undefined,
    lookupTxt: async () => [],
  };
  const pending = fake.seed('pending.digicert.test', 'dns-txt-token');
  const challenge = { domain: 'pending.digicert.test', method: 'dns-txt-token', token: 'x', data: { domainId: pending.id } };
  t.equal(await p.verify(challenge), 'pending', 'invalid_dns_txt (no record yet) is pending');

  for (const [label, status, body, type, pattern] of [
    ['rate limit', 429, { errors: [{ code: 'request_limit_exceeded', message: 'Service unavailable, please limit request volume.' }] }, TransientError, /HTTP 429.*request_limit_exceeded/],
    ['server error', 503, { errors: [{ code: 'service_unavailable', message: 'Down for maintenance.' }] }, TransientError, /HTTP 503/],
    ['a missing permission', 403, { errors: [{ code: 'access_denied|missing_permission', message: 'The API key does not have permission.' }] }, ConfigurationError, /credential "digicert-key"/],
    ['another refusal', 400, { errors: [{ code: 'invalid_dcv_method', message: 'The DCV method is not valid.' }] }, PermanentError, /The DCV method is not valid\. \(invalid_dcv_method\)/],
  ] as const) {
    fake.failNext = { status, body };
    const err = await p.verify(challenge).then(
      () => null,
      (e: unknown) => e as Error,
    );
    t.ok(err instanceof type, `${label}: ${type.name} (${err?.name}: ${err?.message})`);
    if (type === PermanentError) t.notOk(err instanceof ConfigurationError, `${label}: not a configuration error`);
    t.match(err?.message, pattern, label);
  }

  fake.failNext = { status: 500, body: { errors: [{ code: 'internal', message: 'boom' }] } };
  await t.rejects(p.prepare('other.digicert.test', publishNothing), TransientError, 'a 5xx during prepare is transient, nothing published');

  const wrongUrl = await make({ baseUrl: fake.baseUrl.replace('/services/v2/', '/nothing/') });
  await t.rejects(wrongUrl.prepare('other.digicert.test', publishNothing), { name: 'ConfigurationError', message: /check baseUrl/ }, 'a wrong base URL says so');

  const https = await make({ allowHttp: false });
  await t.rejects(https.prepare('other.digicert.test', publishNothing), { name: 'EgressDeniedError' }, 'http refused unless allowHttp');
  await t.rejects(p.prepare('other.digicert.test'), ConfigurationError, 'prepare needs the policy\'s context');
});
