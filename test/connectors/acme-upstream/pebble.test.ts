/**
 * connectors/acme-upstream against Debian's real `pebble` (no mocks): the plugin is loaded by the kernel's
 * plugin manager (manifest, configSchema validation of the instances, register), and the connectors are made
 * by the factory it registered, with the kernel's real context (key-value store in the test database, secrets,
 * egress client, pino logger captured for the secret checks). No kernel code instantiates PKI connectors from the
 * registry yet, so the test calls the registered factory itself.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ConfigurationError, PermanentError, TransientError, type IssueOutcome, type IssueRequest, type PkiConnector } from '@certwright/sdk';
import { buildCsr } from '../../../core/pki/csr/build.js';
import type { SubjectAlternateName } from '../../../core/pki/x509/model.js';
import { ADMIN_HEADERS, bootKernel, LogCapture, tempDir } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { reasonCode } from '../../../connectors/acme-upstream/index.js';
import { pebbleInstalled, startPebble, type Pebble } from './pebble.js';

const started = Date.now();
const timings: string[] = [];
const timed = (name: string, fn: (t: Test) => Promise<void>) =>
  t.test(name, async (t) => {
    const t0 = Date.now();
    try {
      await fn(t);
    } finally {
      timings.push(`${Date.now() - t0} ms  ${name}`);
    }
  });

const requestId = () => randomBytes(12).toString('hex');
const b64u = (n: number) => randomBytes(n).toString('base64url');

/** A P-256 CSR (built with the kernel's PKI toolkit, which tests may use and plugins may not). */
function csr(cn: string, dns: string[], ips: string[] = []): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const sans: SubjectAlternateName[] = [...dns.map((value) => ({ sanType: 'DNSNAME' as const, value })), ...ips.map((value) => ({ sanType: 'IPADDRESS' as const, value }))];
  const der = buildCsr(privateKey, { subject: `CN=${cn}`, sans });
  return `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(der).toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
}

/** The kernel's loop, in a test: issue, then poll after a short wait until it is no longer pending. The connector never waits. */
async function enroll(connector: PkiConnector, request: IssueRequest, first?: IssueOutcome): Promise<{ outcome: IssueOutcome; calls: number }> {
  let outcome = first ?? (await connector.issue(request));
  let calls = first ? 0 : 1;
  const deadline = Date.now() + 30_000;
  while (outcome.status === 'pending') {
    if (Date.now() > deadline) throw new Error(`still pending after ${calls} calls`);
    await new Promise((r) => setTimeout(r, 50));
    outcome = await connector.poll(outcome.pollToken);
    calls++;
  }
  return { outcome, calls };
}

/** Every error the connectors threw, for the secret check at the end. */
const thrown: Error[] = [];
async function rejects<T extends Error>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  try {
    await promise;
  } catch (err) {
    thrown.push(err as Error);
    if (err instanceof type) return err;
    throw new Error(`expected ${type.name}, got ${(err as Error)?.name}: ${(err as Error)?.message}`, { cause: err });
  }
  throw new Error(`expected ${type.name}, but it resolved`);
}

const sanList = (pem: string): string[] =>
  (new X509Certificate(pem).subjectAltName ?? '')
    .split(', ')
    .filter(Boolean)
    .sort();

if (!pebbleInstalled()) {
  // CI installs it (.ci/run); elsewhere: apt-get install -y pebble.
  if (process.env.CI) t.fail('pebble is not installed (apt-get install -y pebble)');
  else t.test('acme-upstream against pebble', { skip: 'pebble is not installed (apt-get install -y pebble)' }, () => {});
} else {
  const setup0 = Date.now();
  const rightKey = b64u(32);
  const wrongKey = b64u(32); // a real key too, but kid-2's
  const [pebble, eabPebble, nonceRejecter] = await Promise.all([
    startPebble(t, { config: { domainBlocklist: ['blocked.example'] } }),
    startPebble(t, { config: { externalAccountBindingRequired: true, externalAccountMACKeys: { 'kid-1': rightKey, 'kid-2': wrongKey } } }),
    startPebble(t, { env: { PEBBLE_WFE_NONCEREJECT: '100' } }),
  ]);

  const base = (p: Pebble) => ({ directoryUrl: p.directoryUrl, caBundlePem: p.tlsCaPem });
  const instances = [
    { name: 'pebble', config: { ...base(pebble), contactEmail: 'pki@example.com' } },
    { name: 'eab', config: { ...base(eabPebble), eab: { kid: 'kid-1', hmacKey: rightKey } } },
    { name: 'eab-wrong-key', config: { ...base(eabPebble), eab: { kid: 'kid-1', hmacKey: wrongKey } } },
    { name: 'eab-missing', config: base(eabPebble) },
    { name: 'eab-credential', config: { ...base(eabPebble), eab: { credentials: 'acme-eab' } } },
    { name: 'nonce-rejecter', config: base(nonceRejecter) },
  ];
  const capture = new LogCapture();
  const kernel = await bootKernel(t, { log: { level: 'trace' }, plugins: { instances: { 'acme-upstream': instances } } }, { capture });
  timings.push(`${Date.now() - setup0} ms  setup: 3 pebbles + kernel boot`);
  const factory = kernel.provided.pkiConnectors.get('acme-upstream');
  const make = async (name: string): Promise<PkiConnector> => factory!(instances.find((i) => i.name === name)!);

  await timed('the kernel loads connectors/acme-upstream and registers the pki connector type', async (t) => {
    const record = kernel.plugins.records.find((r) => r.id === 'acme-upstream');
    t.equal(record?.state, 'active', record?.reason ?? '');
    t.equal(record?.source, 'built-in');
    t.equal(record?.manifest?.kind, 'pki-connector');
    t.equal(kernel.provided.pkiConnectors.pluginOf('acme-upstream'), 'acme-upstream');
    t.type(factory, 'function');
    t.match((await make('pebble')) as unknown as { config: unknown }, { config: { challengeType: 'http-01', termsOfServiceAgreed: true, retryAfterSeconds: 5, timeoutMs: 30_000 } }, 'defaults of the configSchema');

    // A bad instance config marks the plugin degraded, naming the field and not the secret.
    const bad = await bootKernel(t, { plugins: { instances: { 'acme-upstream': [{ name: 'x', config: { directoryUrl: 'http://acme.example/dir', eab: { kid: 'k', hmacKey: 'c2VjcmV0LWhtYWMta2V5' } } }] } } });
    const degraded = bad.plugins.records.find((r) => r.id === 'acme-upstream');
    t.match(degraded, { state: 'degraded', reason: /directoryUrl must match pattern/ });
    t.notMatch(degraded?.reason, /c2VjcmV0/);
    await rejects(Promise.resolve().then(() => factory!({ name: 'y', config: { directoryUrl: 'https://acme.example/dir', eab: { kid: 'k', hmacKey: 'not base64 !' } } })), ConfigurationError);
    t.notMatch(thrown.at(-1)?.message, /not base64 !/, 'the factory names the field, not the value');
  });

  let issued: { request: IssueRequest; certificatePem: string; chainPem: string[] } | undefined;

  await timed('enrolls a P-256 CSR: DNS names and IP addresses, chain verified by openssl', async (t) => {
    const connector = await make('pebble');
    const test = await connector.testConnection();
    t.match(test, { ok: true, detail: /ACME directory https:\/\/127\.0\.0\.1:\d+\/dir.*terms of service/ });
    t.same(await connector.getCaChain(), [], 'no chain known before the first issuance');

    const names = ['www.example.com', 'example.com', 'api.example.org'];
    // Pebble 2.4 sorts the CSR's IPs (4-byte IPv4) and the order's (16-byte, from net.ParseIP) by their bytes
    // and compares them pairwise, so an IPv4 address sorting after 2001:… (first byte > 0x20) in the CSR breaks
    // finalize ("CSR is missing Order IP"): 10.x keeps both lists in the same order.
    const ips = ['10.0.2.10', '2001:db8::1'];
    const request: IssueRequest = { requestId: requestId(), csrPem: csr('www.example.com', names, ips), profile: 'tls-server', sans: [{ type: 'DNSNAME', value: 'api.example.org' }, { type: 'IPADDRESS', value: '2001:db8:0:0::1' }] };
    const first = await connector.issue(request);
    t.match(first, { status: 'pending', pollToken: request.requestId }, 'the first call answers pending (order created, challenges accepted)');
    t.ok(first.status === 'pending' && first.retryAfterSeconds >= 1);
    const { outcome, calls } = await enroll(connector, request, first);
    t.comment(`issued after issue() + ${calls} poll() calls`);
    t.equal(outcome.status, 'issued', JSON.stringify(outcome));
    if (outcome.status !== 'issued') return;
    t.same(sanList(outcome.certificatePem), [...names.map((n) => `DNS:${n}`), 'IP Address:10.0.2.10', 'IP Address:2001:DB8:0:0:0:0:0:1'].sort(), "the certificate's SANs are the CSR's");
    t.equal(outcome.chainPem.length, 1, 'pebble chains leaf → intermediate');

    const root = await pebble.management('/roots/0');
    const intermediate = await pebble.management('/intermediates/0');
    t.equal(root.status, 200);
    t.equal(new X509Certificate(outcome.chainPem[0]!).fingerprint256, new X509Certificate(intermediate.body).fingerprint256, 'the chain is pebble\'s intermediate');
    const dir = tempDir(t);
    writeFileSync(join(dir, 'root.pem'), root.body);
    writeFileSync(join(dir, 'chain.pem'), outcome.chainPem.join(''));
    writeFileSync(join(dir, 'leaf.pem'), outcome.certificatePem);
    const verified = execFileSync('openssl', ['verify', '-CAfile', 'root.pem', '-untrusted', 'chain.pem', 'leaf.pem'], { cwd: dir }).toString('utf8');
    t.equal(verified.trim(), 'leaf.pem: OK');

    t.same(await connector.getCaChain(), outcome.chainPem, 'getCaChain answers the chain of the last issued certificate');
    t.same(await (await make('pebble')).getCaChain(), outcome.chainPem, '… also from a new connector object (kept in the store)');
    issued = { request, certificatePem: outcome.certificatePem, chainPem: outcome.chainPem };
  });

  await timed('the same requestId continues the same order (idempotent)', async (t) => {
    const connector = await make('pebble');
    const orders = () => pebble.requests('POST', '/order-plz');
    const accounts = () => pebble.requests('POST', '/sign-me-up');
    const before = { orders: await orders(), accounts: await accounts() };

    const request: IssueRequest = { requestId: requestId(), csrPem: csr('twice.example.com', ['twice.example.com']), profile: 'tls-server' };
    const [a, b] = await Promise.all([connector.issue(request), connector.issue(request)]);
    t.match(a, { status: 'pending', pollToken: request.requestId });
    t.match(b, { status: 'pending', pollToken: request.requestId });
    const again = await (await make('pebble')).issue(request);
    t.not(again.status, 'rejected', 'a third call, from another connector object, also continues');
    t.equal((await orders()) - before.orders, 1, 'one ACME order for three issue() calls with one requestId');
    t.equal((await accounts()) - before.accounts, 0, 'the stored account is reused (no newAccount)');

    const { outcome } = await enroll(connector, request, again);
    t.equal(outcome.status, 'issued');
    const repeat = await connector.issue(request);
    t.same(repeat, outcome, 'issue() after issuance answers the same certificate');
    t.equal((await orders()) - before.orders, 1, 'still one order');

    const other = await rejects(connector.issue({ ...request, csrPem: csr('twice.example.com', ['twice.example.com']) }), PermanentError);
    t.match(other.message, /started with another CSR/, 'the same requestId with another CSR is refused');
    const unknown = await rejects(connector.poll(requestId()), PermanentError);
    t.match(unknown.message, /unknown poll token/);
  });

  await timed('revoke: pebble reports the certificate revoked with the reason', async (t): Promise<void> => {
    t.ok(issued, 'a certificate was issued above');
    if (!issued) return;
    const connector = await make('pebble');
    const cert = new X509Certificate(issued.certificatePem);
    const serial = cert.serialNumber.toLowerCase().replace(/^0+/, '');
    const status = async () => JSON.parse((await pebble.management(`/cert-status-by-serial/${serial}`)).body) as { Status: string; Reason?: number };
    t.match(await status(), { Status: 'Valid' });
    await connector.revoke({ certificatePem: issued.certificatePem, serial: cert.serialNumber, reason: 'keyCompromise' });
    t.match(await status(), { Status: 'Revoked', Reason: 1 });
    await connector.revoke({ certificatePem: issued.certificatePem, serial: cert.serialNumber, reason: 'keyCompromise' });
    t.pass('revoking again is not an error (alreadyRevoked)');
    const unknownReason = await rejects(connector.revoke({ certificatePem: issued.certificatePem, serial: cert.serialNumber, reason: 'bored' }), PermanentError);
    t.match(unknownReason.message, /unknown revocation reason "bored"/);

    // Another certificate, another reason name spelling.
    const request: IssueRequest = { requestId: requestId(), csrPem: csr('superseded.example.com', ['superseded.example.com']), profile: 'p' };
    const { outcome } = await enroll(connector, request);
    if (outcome.status !== 'issued') {
      t.fail(`not issued: ${JSON.stringify(outcome)}`);
      return;
    }
    const second = new X509Certificate(outcome.certificatePem);
    await connector.revoke({ certificatePem: outcome.certificatePem, serial: second.serialNumber, reason: 'cessation_of_operation' });
    const st = JSON.parse((await pebble.management(`/cert-status-by-serial/${second.serialNumber.toLowerCase().replace(/^0+/, '')}`)).body) as { Status: string; Reason: number };
    t.match(st, { Status: 'Revoked', Reason: 5 });

    t.same(
      ['unspecified', 'keycompromise', 'cacompromise', 'affiliationchanged', 'affiliationchange', 'superseded', 'cessationofoperation', 'certificatehold', 'privilegewithdrawn', 'aacompromise', 'AACompromise', 'key_compromise', '', '4'].map(reasonCode),
      [0, 1, 2, 3, 3, 4, 5, 6, 9, 10, 10, 1, 0, 4],
      'reason names map to RFC 5280 codes',
    );
  });

  await timed('names pebble refuses give a rejected outcome with the ACME problem', async (t) => {
    const connector = await make('pebble');
    const blocked = await connector.issue({ requestId: requestId(), csrPem: csr('www.blocked.example', ['www.blocked.example']), profile: 'p' });
    t.match(blocked, { status: 'rejected', reason: /^urn:ietf:params:acme:error:rejectedIdentifier: .*blocked\.example/ }, 'a name on pebble\'s domainBlocklist');
    t.comment(`blocked: ${JSON.stringify(blocked)}`);

    // Pebble 2.4 checks DNS identifiers for their characters only (it takes foo..example): an underscore it refuses.
    const malformed = await connector.issue({ requestId: requestId(), csrPem: csr('bad_name.example', ['bad_name.example']), profile: 'p' });
    t.match(malformed, { status: 'rejected', reason: /^urn:ietf:params:acme:error:malformed: .*illegal character/ }, 'a malformed DNS name');
    t.comment(`bad_name.example: ${JSON.stringify(malformed)}`);

    const orders = await pebble.requests('POST', '/order-plz');
    const extra = await connector.issue({ requestId: requestId(), csrPem: csr('a.example.com', ['a.example.com']), profile: 'p', sans: [{ type: 'DNSNAME', value: 'b.example.com' }] });
    t.match(extra, { status: 'rejected', reason: /b\.example\.com is requested but not in the CSR/ });
    const email = await connector.issue({ requestId: requestId(), csrPem: csr('a.example.com', ['a.example.com']), profile: 'p', sans: [{ type: 'RFC822NAME', value: 'a@example.com' }] });
    t.match(email, { status: 'rejected', reason: /DNS names and IP addresses only/ });
    const garbage = await connector.issue({ requestId: requestId(), csrPem: '-----BEGIN CERTIFICATE REQUEST-----\nMAMCAQA=\n-----END CERTIFICATE REQUEST-----\n', profile: 'p' });
    t.match(garbage, { status: 'rejected', reason: /CSR cannot be read/ });
    t.equal(await pebble.requests('POST', '/order-plz'), orders, 'refused locally, before any order');
  });

  await timed('External Account Binding: the right key creates the account, a wrong or missing one is a configuration error', async (t) => {
    const good = await make('eab');
    t.match(await good.testConnection(), { ok: true, detail: /External Account Binding required/ });
    const request: IssueRequest = { requestId: requestId(), csrPem: csr('eab.example.com', ['eab.example.com']), profile: 'p' };
    const { outcome } = await enroll(good, request);
    t.equal(outcome.status, 'issued', 'account created with kid-1 and its key, and a certificate issued');
    t.equal(await eabPebble.requests('POST', '/sign-me-up'), 1);

    const wrong = await make('eab-wrong-key');
    const err = await rejects(wrong.issue({ ...request, requestId: requestId() }), ConfigurationError);
    t.match(err.message, /refused the account \(External Account Binding key id kid-1\): urn:ietf:params:acme:error:\w+/);
    t.comment(`wrong key: ${err.message}`);
    t.notMatch(err.message, wrongKey);

    const missing = await make('eab-missing');
    t.match(await missing.testConnection(), { ok: false, detail: /requires External Account Binding/ });
    await rejects(missing.issue({ ...request, requestId: requestId() }), ConfigurationError);
  });

  await timed('External Account Binding from a credential: read when the account is made, a rotation applies, never logged', async (t) => {
    const api = caller(kernel, ADMIN_HEADERS);
    const connector = await make('eab-credential');
    const request = (name: string): IssueRequest => ({ requestId: requestId(), csrPem: csr(name, [name]), profile: 'p' });
    const absent = await rejects(connector.issue(request('eab-cred.example.com')), ConfigurationError);
    t.match(absent.message, /eab\.credentials: .*acme-eab/, 'a missing credential is a configuration error naming it');

    // The wrong key first: refused by the CA; then the credential rotated to the right key: the next account works.
    let res = await api('POST', '/api/v1/security/credentials/', { name: 'acme-eab', type: 'password', login: 'kid-1', password: { value: wrongKey }, targets: ['pki'] });
    t.equal(res.statusCode, 201, res.body);
    const refused = await rejects(connector.issue(request('eab-cred.example.com')), ConfigurationError);
    t.match(refused.message, /refused the account \(External Account Binding key id kid-1\)/);
    res = await api('PUT', '/api/v1/security/credentials/', { name: 'acme-eab', type: 'password', login: 'kid-1', password: { value: rightKey }, targets: ['pki'] });
    t.equal(res.statusCode, 200, res.body);
    const { outcome } = await enroll(connector, request('eab-cred.example.com'));
    t.equal(outcome.status, 'issued', 'the rotated key made the account, without a restart');

    // A credential meant for something else is refused by name.
    res = await api('POST', '/api/v1/security/credentials/', { name: 'proxy-only', type: 'password', login: 'kid-1', password: { value: rightKey }, targets: ['proxy'] });
    t.equal(res.statusCode, 201, res.body);
    const other = await factory!({ name: 'eab-proxy-only', config: { ...base(eabPebble), eab: { credentials: 'proxy-only' } } });
    t.match((await rejects(other.issue(request('eab-other.example.com')), ConfigurationError)).message, /not usable by a pki/);
    for (const key of [rightKey, wrongKey]) t.notOk(capture.text.includes(key), 'no MAC key in the log');
  });

  await timed('testConnection reports an unusable directory with the reason', async (t) => {
    const at = async (config: Record<string, unknown>) => (await factory!({ name: `probe-${requestId()}`, config })).testConnection();
    // A port that was just free and is closed again (not 1: fetch refuses the spec's "bad ports" outright).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const closed = `https://127.0.0.1:${closedPort}/dir`;
    t.match(await at({ directoryUrl: closed, caBundlePem: pebble.tlsCaPem }), { ok: false, detail: /cannot reach https:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/ });
    t.match(await at({ directoryUrl: pebble.directoryUrl.replace('/dir', '/nothing-here'), caBundlePem: pebble.tlsCaPem }), { ok: false, detail: /answered HTTP 404/ });
    t.match(await at({ directoryUrl: pebble.directoryUrl }), { ok: false, detail: /TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted .*caBundlePem/ }, 'without the CA bundle');
    t.match(await at({ directoryUrl: 'https://acme.not-in-egress.example/dir' }), { ok: false, detail: /may not reach acme\.not-in-egress\.example/ }, 'the kernel\'s egress check');
    t.match(await at({ directoryUrl: 'https://acme.not-in-egress.example/dir', caBundlePem: pebble.tlsCaPem }), { ok: false, detail: /may not reach/ }, '… also with a CA bundle');
    const management = new URL(pebble.directoryUrl.replace('/dir', '/roots/0'));
    management.port = new URL(pebble.managementUrl).port;
    t.match(await at({ directoryUrl: management.href, caBundlePem: pebble.tlsCaPem }), { ok: false, detail: /not an ACME directory/ }, 'a URL that answers, but not a directory');
  });

  await timed('badNonce is retried once, then a transient error', async (t) => {
    const connector = await make('nonce-rejecter');
    t.match(await connector.testConnection(), { ok: true });
    const err = await rejects(connector.issue({ requestId: requestId(), csrPem: csr('nonce.example.com', ['nonce.example.com']), profile: 'p' }), TransientError);
    t.match(err.message, /badNonce/);
    t.equal(await nonceRejecter.requests('POST', '/sign-me-up'), 2, 'newAccount sent twice: the request and one retry');
  });

  await timed('pebble restarted (all state lost): the account is registered again and the order made again', async (t) => {
    const connector = await make('pebble');
    const request: IssueRequest = { requestId: requestId(), csrPem: csr('restart.example.com', ['restart.example.com']), profile: 'p' };
    const first = await connector.issue(request);
    t.equal(first.status, 'pending');
    await pebble.restart();
    const { outcome } = await enroll(connector, request, first);
    t.equal(outcome.status, 'issued');
    t.match(capture.text, /no longer knows the account/);
    t.match(capture.text, /the ACME order is gone: creating a new one/);
  });

  await timed('no secret in the logs, in thrown errors or in the store in clear', async (t) => {
    const rows = (await kernel.db.knex('plugin_kv').where({ plugin_id: 'acme-upstream' })) as { key: string; value: string; expires_at: number | string | null }[];
    const account = rows.find((r) => r.key === 'account:pebble');
    t.ok(account, 'the account is stored');
    t.equal(account!.expires_at, null, 'the account does not expire');
    // Order states expire 30 days after their last write (kv ttlMs): they do not stay for ever, one per certificate.
    const orders = rows.filter((r) => r.key.startsWith('order:'));
    t.ok(orders.length > 0, `order states are stored (${orders.length})`);
    const month = 30 * 86_400_000;
    t.ok(
      orders.every((r) => r.expires_at !== null && Number(r.expires_at) > Date.now() + month - 3_600_000 && Number(r.expires_at) <= Date.now() + month),
      `every order state expires within 30 days (${orders.map((r) => String(r.expires_at)).join(', ')})`,
    );
    const sealed = (JSON.parse(account!.value) as { keySealed: string }).keySealed;
    const accountKeyPem = kernel.secrets.openString(sealed, 'plugin:acme-upstream:account-key:pebble');
    t.match(accountKeyPem, /BEGIN PRIVATE KEY/);
    const keyBody = accountKeyPem.replace(/-----[^-]+-----|\s/g, '');
    const rawD = (await import('node:crypto')).createPrivateKey(accountKeyPem).export({ format: 'jwk' }).d!;

    t.ok(capture.lines.length > 20, `the connector logged (${capture.lines.length} lines at trace level)`);
    t.match(capture.text, /ACME order created/);
    const secrets = { rightKey, wrongKey, accountKeyBody: keyBody.slice(40, 100), accountKeyD: rawD };
    for (const [name, secret] of Object.entries(secrets)) {
      t.notOk(capture.text.includes(secret), `${name} is not in the logs`);
      t.notOk(thrown.some((e) => `${e.message} ${String(e.cause ?? '')}`.includes(secret)), `${name} is in no thrown error`);
      t.notOk(rows.some((r) => r.value.includes(secret)), `${name} is not in the store in clear`);
    }
    t.ok(thrown.length >= 6, `${thrown.length} thrown errors checked`);
  });

  t.teardown(() => {
    timings.push(`${Date.now() - started} ms  whole file (before teardown)`);
    console.error(`acme-upstream/pebble timings:\n  ${timings.join('\n  ')}`);
  });
}

