/**
 * acme-upstream answers dns-01 through a DCV policy (issue 29, item 7), against real servers and no mocks: a BIND9
 * serving upstream.test on a loopback port (test/helpers/bind9.ts), Debian's pebble validating for real with its
 * `-dnsserver` pointed at that BIND9 (no PEBBLE_VA_ALWAYS_VALID), and the kernel's DCV settings pointed at it too.
 * Everything is configured through the API: a TSIG credential, an rfc2136 provisioner, a dns provider, DCV policies,
 * a PKI queue, acme-upstream connectors with challengeType dns-01 and dcvPolicy, profiles on them; then WebRA
 * enrolls through /api/v1/requests/submit that the PKI queue completes. The connector publishes the key
 * authorization digest at _acme-challenge.<name> through the rfc2136 provisioner, accepts the challenge, pebble
 * reads the TXT record from BIND9, and the record is removed once the order no longer needs it. A policy that does
 * not cover the name, or does not exist, or whose provisioner refuses (a wrong TSIG key), denies the request with a
 * message naming the policy and the name. A CNAME-delegated validation name is written where it points;
 * an order the CA invalidates after the record was published is denied, the record removed.
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startBind9 } from '../../helpers/bind9.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { until } from '../../helpers/until.js';
import { pebbleInstalled, startPebble } from './pebble.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface RequestAnswer {
  _id: string;
  status: string;
  certificateId?: string;
  error?: string;
}

const NAMED = '/usr/sbin/named';

if (!pebbleInstalled() || !existsSync(NAMED)) {
  // CI installs both (.ci/run); elsewhere: apt-get install -y pebble bind9.
  const missing = !pebbleInstalled() ? 'pebble' : 'bind9';
  if (process.env.CI) t.fail(`${missing} is not installed (apt-get install -y ${missing})`);
  else t.test('acme-upstream dns-01 through a DCV policy', { skip: `${missing} is not installed (apt-get install -y ${missing})` }, () => {});
} else {
  // Validation names delegated by CNAME: within the zone, and into validation.test (served by the same BIND9, which
  // does not recurse: pebble asking for _acme-challenge.elsewhere.upstream.test gets the CNAME without the TXT).
  const bind = await startBind9(t, 'upstream.test', ['_acme-challenge.deleg IN CNAME deleg-target.upstream.test.', '_acme-challenge.elsewhere IN CNAME elsewhere.validation.test.'], { 'validation.test': [] });
  const pebble = await startPebble(t, { dnsServer: `127.0.0.1:${bind.port}` });
  const kernel = await bootKernel(t, {
    dcv: { resolvers: [`127.0.0.1:${bind.port}`], authoritativePort: bind.port, propagationTimeoutMs: 15_000, propagationIntervalMs: 200, queryTimeoutMs: 2000 },
    pki: { queue: { pollEveryMs: 200 } },
  } as never);
  const api = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await kernel.app.inject({ method, url, headers: { ...ADMIN_HEADERS }, ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: res.statusCode, body: res.body, json: <T = Json>() => JSON.parse(res.body) as T };
  };
  const describe = (r: { status: number; body: string }) => `${r.status}: ${r.body.slice(0, 800)}`;
  const must = async (what: string, res: Promise<{ status: number; body: string }>, status = 201) => {
    const got = await res;
    if (got.status !== status) throw new Error(`setup ${what}: ${describe(got)}`);
  };

  /** TXT values at `name` as the BIND9 answers them now. */
  const txt = async (name: string): Promise<string[]> => {
    const r = new Resolver({ timeout: 2000, tries: 1 });
    r.setServers([`127.0.0.1:${bind.port}`]);
    try {
      return (await r.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch {
      return [];
    }
  };
  const dcvEvents = async (domain: string, since: number): Promise<Json[]> => {
    const rows = (await kernel.db.knex('events').where({ module: 'dcv', object_id: domain }).andWhere('created_at', '>=', since).orderBy('seq').select('code', 'status', 'payload')) as Json[];
    return rows.map((r) => ({ code: r.code, status: r.status, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
  };

  const dir = tempDir(t, 'cw-acme-dns01-');
  /** A P-256 CSR (openssl) for `names`, the first as CN. */
  const csrFor = (names: string[]): string => {
    const file = `${names[0]!.replace(/[^a-z0-9.]/g, '_')}.csr`;
    execFileSync(
      'openssl',
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${file}.key`, '-out', file, '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`],
      { cwd: dir, stdio: 'ignore' },
    );
    return readFileSync(join(dir, file), 'utf8');
  };

  /** Submits a WebRA enroll on `profile` and waits until the PKI queue settles it (completed or denied). */
  const enroll = async (profile: string, names: string[]): Promise<RequestAnswer> => {
    const submitted = await api('POST', '/api/v1/requests/submit', {
      module: 'webra',
      workflow: 'enroll',
      profile,
      template: { csr: csrFor(names), subject: [{ element: 'cn.1', value: names[0] }], sans: [{ type: 'DNSNAME', value: names }] },
    });
    if (submitted.status !== 200 && submitted.status !== 201) throw new Error(`submit on ${profile}: ${describe(submitted)}`);
    let request = submitted.json<RequestAnswer>();
    await until(
      `the request on ${profile} to settle through the PKI queue`,
      async () => {
        request = (await api('GET', `/api/v1/requests/${request._id}`)).json<RequestAnswer>();
        return request.status !== 'approved';
      },
      90_000,
      100,
    );
    return request;
  };

  let intermediate: X509Certificate | undefined;
  const issuedBy = async (pem: string): Promise<boolean> => {
    intermediate ??= new X509Certificate((await pebble.management('/intermediates/0')).body);
    return new X509Certificate(pem).verify(intermediate.publicKey);
  };

  // --- configuration through the API -------------------------------------------------------------------------------
  await must('credential', api('POST', '/api/v1/security/credentials/', { name: 'tsig', type: 'raw', secret: { value: bind.tsig.secret }, targets: ['dcv'] }));
  await must('wrong credential', api('POST', '/api/v1/security/credentials/', { name: 'wrong-tsig', type: 'raw', secret: { value: Buffer.alloc(32, 7).toString('base64') }, targets: ['dcv'] }));
  const provisioner = (name: string, credential: string) => ({
    name,
    type: 'rfc2136',
    configuration: { server: '127.0.0.1', port: bind.port, keyName: bind.tsig.name, keyCredential: credential, propagationTimeoutSeconds: 15, propagationIntervalSeconds: 1 },
  });
  await must('provisioner', api('POST', '/api/v1/dcv/provisioners/', provisioner('bind', 'tsig')));
  await must('provisioner with a wrong key', api('POST', '/api/v1/dcv/provisioners/', provisioner('bad-key', 'wrong-tsig')));
  await must('provider', api('POST', '/api/v1/dcv/providers/', { name: 'self', type: 'dns', configuration: {} }));
  // Every name under upstream.test (a wildcard order's base name too), one name only, and a wrong TSIG key.
  await must('policy', api('POST', '/api/v1/dcv/policies/', { name: 'upstream', provider: 'self', provisioner: 'bind', domains: ['*.upstream.test'] }));
  await must('narrow policy', api('POST', '/api/v1/dcv/policies/', { name: 'narrow', provider: 'self', provisioner: 'bind', domains: ['other.upstream.test'] }));
  await must('policy with a wrong key', api('POST', '/api/v1/dcv/policies/', { name: 'broken', provider: 'self', provisioner: 'bad-key', domains: ['*.upstream.test'] }));
  // Retries soon: the connector answers pending with retryAfterSeconds 1, the queue retries after 1 s.
  await must('queue', api('POST', '/api/v1/pki/queues/', { name: 'acme', retries: 30, initialDelaySeconds: 1, maxDelaySeconds: 2 }));
  const connector = (name: string, dcvPolicy: string) => ({
    name,
    type: 'acme-upstream',
    queue: 'acme',
    configuration: { directoryUrl: pebble.directoryUrl, caBundlePem: pebble.tlsCaPem, retryAfterSeconds: 1, challengeType: 'dns-01', dcvPolicy },
  });
  const profile = (name: string, pkiConnector: string) => ({
    name,
    pkiConnector,
    subject: [{ element: 'cn.1', mandatory: true, editable: true }],
    sans: [{ type: 'DNSNAME', editable: true, min: 1, max: 5 }],
  });
  for (const [name, policy] of [['pebble-dns', 'upstream'], ['pebble-narrow', 'narrow'], ['pebble-ghost', 'ghost'], ['pebble-broken', 'broken']] as const) {
    await must(`connector ${name}`, api('POST', '/api/v1/pki/connectors/', connector(name, policy)));
    await must(`profile ${name}`, api('POST', '/api/v1/certificate/profiles/', profile(name, name)));
  }

  await t.test('the configuration: dcvPolicy required with dns-01, refused with any other challenge type', async (t) => {
    const stored = await api('GET', '/api/v1/pki/connectors/pebble-dns');
    t.equal(stored.status, 200, describe(stored));
    t.match(stored.json(), { name: 'pebble-dns', type: 'acme-upstream', configuration: { challengeType: 'dns-01', dcvPolicy: 'upstream' } });

    const noPolicy = await api('POST', '/api/v1/pki/connectors/', { name: 'x', type: 'acme-upstream', configuration: { directoryUrl: pebble.directoryUrl, challengeType: 'dns-01' } });
    t.equal(noPolicy.status, 400, describe(noPolicy));
    t.match(noPolicy.json(), { error: 'PKI-CONN-002' });
    t.match(noPolicy.body, /dcvPolicy/, 'the answer names dcvPolicy');
    const httpWithPolicy = await api('POST', '/api/v1/pki/connectors/', { name: 'x', type: 'acme-upstream', configuration: { directoryUrl: pebble.directoryUrl, challengeType: 'http-01', dcvPolicy: 'upstream' } });
    t.equal(httpWithPolicy.status, 400, describe(httpWithPolicy));
    t.match(httpWithPolicy.body, /challengeType/, 'the answer names challengeType');
    const defaultWithPolicy = await api('POST', '/api/v1/pki/connectors/', { name: 'x', type: 'acme-upstream', configuration: { directoryUrl: pebble.directoryUrl, dcvPolicy: 'upstream' } });
    t.equal(defaultWithPolicy.status, 400, `dcvPolicy without challengeType (http-01 by default): ${describe(defaultWithPolicy)}`);

    // The connector's own guard (a factory may be called with any instance): clear messages.
    const factory = kernel.provided.pkiConnectors.get('acme-upstream')!;
    await t.rejects(Promise.resolve().then(() => factory({ name: 'y', config: { directoryUrl: pebble.directoryUrl, challengeType: 'dns-01' } })), { name: 'ConfigurationError', message: /dcvPolicy is required with challengeType dns-01/ });
    await t.rejects(Promise.resolve().then(() => factory({ name: 'y', config: { directoryUrl: pebble.directoryUrl, challengeType: 'tls-alpn-01', dcvPolicy: 'upstream' } })), { name: 'ConfigurationError', message: /dcvPolicy is only used with challengeType dns-01 \(challengeType is tls-alpn-01\)/ });
  });

  await t.test('a certificate from pebble over dns-01 through the rfc2136 provisioner: two names, records removed', async (t) => {
    const since = Date.now();
    const names = ['www.upstream.test', 'api.upstream.test'];
    const request = await enroll('pebble-dns', names);
    t.equal(request.status, 'completed', JSON.stringify(request));
    t.type(request.certificateId, 'string');
    const stored = await api('GET', `/api/v1/certificates/${request.certificateId}`);
    t.equal(stored.status, 200, describe(stored));
    const cert = stored.json<{ certificate: { certificate: string; metadata: { key: string; value: string }[] } }>().certificate;
    const x509 = new X509Certificate(cert.certificate);
    t.same((x509.subjectAltName ?? '').split(', ').sort(), names.map((n) => `DNS:${n}`).sort(), 'the SANs');
    t.ok(await issuedBy(cert.certificate), "issued by pebble's intermediate");
    t.match(cert.metadata, [{ key: 'pki_connector', value: 'pebble-dns' }]);

    for (const name of names) {
      const events = await dcvEvents(name, since);
      t.same(events.map((e) => e.code), ['DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED'], `${name}: published, then removed`);
      t.match(events[0]?.payload, { policy: 'upstream', fqdn: `_acme-challenge.${name}`, zone: 'upstream.test', delegatedFrom: null, type: 'TXT' });
      t.match(events[1]?.payload, { policy: 'upstream', fqdn: `_acme-challenge.${name}`, zone: 'upstream.test' });
      t.same(await txt(`_acme-challenge.${name}`), [], `no TXT record left at _acme-challenge.${name}`);
    }
    // Pebble validated for real, asking the test's BIND9 (no PEBBLE_VA_ALWAYS_VALID: it would say "Skipping real validation").
    t.match(pebble.output(), `Using custom DNS resolver for ACME challenges: 127.0.0.1:${bind.port}`, "pebble asks the test's BIND9");
    t.notMatch(pebble.output(), /Skipping real validation|VA always returns valid/, 'pebble did not skip validation');
    t.match(pebble.output(), /authz \S+ set VALID by completed challenge/, 'pebble set the authorizations valid after validating');
  });

  await t.test('a wildcard and its base name: two values at one _acme-challenge name, both removed', async (t) => {
    const since = Date.now();
    const names = ['*.x.upstream.test', 'x.upstream.test'];
    const request = await enroll('pebble-dns', names);
    t.equal(request.status, 'completed', JSON.stringify(request));
    const stored = await api('GET', `/api/v1/certificates/${request.certificateId}`);
    const pem = stored.json<{ certificate: { certificate: string } }>().certificate.certificate;
    t.same((new X509Certificate(pem).subjectAltName ?? '').split(', ').sort(), ['DNS:*.x.upstream.test', 'DNS:x.upstream.test'], 'the SANs, wildcard included');
    t.ok(await issuedBy(pem), "issued by pebble's intermediate");
    const events = await dcvEvents('x.upstream.test', since);
    const published = events.filter((e) => e.code === 'DCV-RECORD-PUBLISHED');
    const removed = events.filter((e) => e.code === 'DCV-RECORD-REMOVED');
    t.equal(published.length, 2, 'one record per authorization (the wildcard is validated at its base name)');
    t.equal(removed.length, 2, 'both removed');
    t.ok([...published, ...removed].every((e) => e.payload.fqdn === '_acme-challenge.x.upstream.test'), 'at _acme-challenge.x.upstream.test');
    t.same(await txt('_acme-challenge.x.upstream.test'), [], 'no TXT record left');
  });

  await t.test('CNAME delegation: the record is written where _acme-challenge points, and pebble follows the CNAME', async (t) => {
    const since = Date.now();
    const request = await enroll('pebble-dns', ['deleg.upstream.test']);
    t.equal(request.status, 'completed', JSON.stringify(request));
    if (request.status !== 'completed') return;
    const pem = (await api('GET', `/api/v1/certificates/${request.certificateId}`)).json<{ certificate: { certificate: string } }>().certificate.certificate;
    t.equal(new X509Certificate(pem).subjectAltName, 'DNS:deleg.upstream.test');
    t.ok(await issuedBy(pem), "issued by pebble's intermediate");
    const events = await dcvEvents('deleg.upstream.test', since);
    t.same(events.map((e) => e.code), ['DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED']);
    t.match(events[0]?.payload, { policy: 'upstream', fqdn: 'deleg-target.upstream.test', zone: 'upstream.test', delegatedFrom: '_acme-challenge.deleg.upstream.test' });
    t.match(events[1]?.payload, { fqdn: 'deleg-target.upstream.test', zone: 'upstream.test' }, 'removed where it was written');
    t.same(await txt('deleg-target.upstream.test'), [], 'no TXT record left');
  });

  await t.test('the CA invalidates the order after the record was published: the request is denied, the record removed', async (t) => {
    const since = Date.now();
    // The record goes into validation.test; pebble, asking the non-recursive BIND9, finds no TXT at the name it asks.
    const request = await enroll('pebble-dns', ['elsewhere.upstream.test']);
    t.equal(request.status, 'denied', JSON.stringify(request));
    t.match(request.error, /unauthorized.*TXT/i, `pebble's reason: ${request.error}`);
    const events = await dcvEvents('elsewhere.upstream.test', since);
    t.same(events.map((e) => e.code), ['DCV-RECORD-PUBLISHED', 'DCV-RECORD-REMOVED'], 'published, then removed once the order was invalid');
    t.match(events[0]?.payload, { fqdn: 'elsewhere.validation.test', zone: 'validation.test', delegatedFrom: '_acme-challenge.elsewhere.upstream.test' });
    t.same(await txt('elsewhere.validation.test'), [], 'no TXT record left in the delegated zone');
  });

  await t.test('a policy that does not cover the name: the request is denied naming the policy and the name, nothing in DNS', async (t) => {
    const since = Date.now();
    const request = await enroll('pebble-narrow', ['fail.upstream.test']);
    t.equal(request.status, 'denied', JSON.stringify(request));
    t.match(request.error, /DCV policy "narrow"/, `the error names the policy: ${request.error}`);
    t.match(request.error, /fail\.upstream\.test/, 'and the name');
    t.match(request.error, /does not cover/, 'and why');
    t.same(await dcvEvents('fail.upstream.test', since), [], 'no record was written');
    t.same(await txt('_acme-challenge.fail.upstream.test'), [], 'nothing in DNS');

    const ghost = await enroll('pebble-ghost', ['ghost.upstream.test']);
    t.equal(ghost.status, 'denied', JSON.stringify(ghost));
    t.match(ghost.error, /DCV policy "ghost" does not exist/, `a missing policy: ${ghost.error}`);
    t.match(ghost.error, /ghost\.upstream\.test/);
    // A policy a connector names cannot be deleted under it.
    const inUse = await api('DELETE', '/api/v1/dcv/policies/upstream');
    t.equal(inUse.status, 400, describe(inUse));
    t.match(inUse.json(), { error: 'DCV-POLICY-005' });
    t.match(inUse.body, /pebble-dns/, 'the refusal names the connector');
  });

  await t.test('a provisioner that refuses (wrong TSIG key): the request is denied naming the key, nothing left behind', async (t) => {
    const since = Date.now();
    const request = await enroll('pebble-broken', ['refused.upstream.test']);
    t.equal(request.status, 'denied', JSON.stringify(request));
    t.match(request.error, /DCV policy "broken"/, `the error names the policy: ${request.error}`);
    t.match(request.error, new RegExp(bind.tsig.name), 'and the TSIG key');
    t.match(request.error, /refused\.upstream\.test/, 'and the name');
    t.notOk((await dcvEvents('refused.upstream.test', since)).some((e) => e.code === 'DCV-RECORD-PUBLISHED'), 'no record published');
    t.same(await txt('_acme-challenge.refused.upstream.test'), [], 'nothing in DNS');
  });
}
