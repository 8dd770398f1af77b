import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { CRL_JOB } from '../../../core/pki/crl-cache/service.js';
import { fetchCrl } from '../../../core/pki/crl-cache/fetch.js';
import { decodeInput } from '../../../core/pki/input.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { CA_EXT, LEAF_EXT, OpensslPki } from '../../helpers/openssl-pki.js';
import { importCa, servicesOf } from '../../helpers/pki-api.js';
import { caller, createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';

/** A distribution point on 127.0.0.1: each path answers what the test put there. */
async function crlServer(t: { teardown(fn: () => unknown): void }) {
  const routes = new Map<string, { status: number; body: Buffer }>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/hang') return; // never answers
    const route = routes.get(path);
    res.writeHead(route?.status ?? 404, { 'content-type': 'application/pkix-crl' });
    res.end(route?.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, routes, hits };
}

t.test('CRL cache: fetched by the job, verified against the CA, refreshed at nextUpdate, serial lookups', async (t) => {
  const http = await crlServer(t);
  const pki = new OpensslPki(tempDir(t, 'cw-pki-'));
  const root = pki.root('crl-root', '/CN=CRL Root');
  // The CA certificate names its issuer's CRL: how the root's distribution point is learned.
  const ca = pki.issue('crl-ca', '/O=Certwright/CN=CRL Issuing CA', root, { ext: [...CA_EXT, `crlDistributionPoints=URI:${http.base}/root.crl`] });
  const l1 = pki.issue('l1', '/CN=revoked.example.com', ca, { ext: LEAF_EXT });
  const l2 = pki.issue('l2', '/CN=good.example.com', ca, { ext: LEAF_EXT });
  pki.revoke(l1, ca, 'keyCompromise');
  const crl1 = pki.crl(ca, { hours: 1 });
  http.routes.set('/ca.crl', { status: 200, body: crl1.der });
  http.routes.set('/root.crl', { status: 200, body: Buffer.from(pki.crl(root, { hours: 48 }).pem) });

  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 50 } });
  const { crls, trust } = servicesOf(kernel);
  const api = caller(kernel, ADMIN_HEADERS);
  await importCa(kernel, { name: 'crl-root', certificate: root.pem, trusted: true });
  const imported = await importCa(kernel, { name: 'crl-ca', certificate: ca.pem, crlUrl: `${http.base}/ca.crl` });
  const caId = String(imported._id);
  const cached = async (name = 'crl-ca') => {
    const res = await api('GET', `/api/v1/caches/crls/${name}`);
    return res.statusCode === 200 ? (res.json() as Record<string, unknown>) : null;
  };

  await t.test('the job fetches, verifies and stores the CRL, and plans itself for nextUpdate', async (t) => {
    await until('the CRL of crl-ca is cached', async () => (await cached()) !== null);
    const entry = (await cached())!;
    t.match(entry, { ca: 'crl-ca', dn: 'CN=CRL Issuing CA,O=Certwright', url: `${http.base}/ca.crl`, crlNumber: '1', entries: 1, lastError: null, pem: /^-----BEGIN X509 CRL-----\n/ });
    t.equal(decodeInput(String(entry.pem)).der.length, crl1.der.length, 'the CRL served is the CRL cached');
    const nextUpdate = Number(entry.nextUpdate);
    t.ok(Math.abs(nextUpdate - (Number(entry.thisUpdate) + 3_600_000)) < 2000, 'nextUpdate is one hour after thisUpdate (-crlhours 1)');
    t.equal(entry.nextRefresh, nextUpdate, 'the next fetch is at nextUpdate');
    await until('the next run is planned', async () => (await kernel.scheduler.nextRunAt(CRL_JOB, { caId })) === nextUpdate);
    const jobs = (await kernel.db.knex('scheduler_jobs').where({ name: CRL_JOB }).select('data')) as { data: string }[];
    t.equal(jobs.filter((j) => j.data.includes(caId)).length, 1, 'one job per CA: the run replaced itself');
  });

  await t.test('isRevoked: an index read by CA name or by issuer', async (t) => {
    const revoked = await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l1));
    t.match(revoked, { status: 'revoked', revoked: true, reason: 'KEYCOMPROMISE' });
    t.ok(revoked.status === 'revoked' && Math.abs(revoked.date - Date.now()) < 120_000, 'revocation date as openssl recorded it');
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l2)), { status: 'good', revoked: false });
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, `0x${pki.serial(l1).toUpperCase()}`), { status: 'revoked' }, 'serial spellings are normalised');
    const ski = String(imported.subjectKeyIdentifier);
    t.match(await crls.isRevoked('default', { issuer: 'CN=CRL Issuing CA,O=Certwright', aki: ski }, pki.serial(l1)), { status: 'revoked' });
    t.match(await crls.isRevoked('default', { issuer: 'CN=CRL Issuing CA,O=Certwright', aki: '00ff' }, pki.serial(l1)), { status: 'unknown', cause: 'no-ca' });
    t.match(await crls.isRevoked('default', { ca: 'nobody' }, '01'), { status: 'unknown', cause: 'no-ca' });
    // The trust chain of a revoked leaf says so.
    const chain = await trust.chainFor('default', decodeInput(l1.pem).der);
    t.same(chain.path.map((l) => l.problems.map((p) => p.code)), [['revoked'], [], []]);
    t.match(chain.path[0]!.problems[0]!.message, /"CN=revoked.example.com" was revoked on .* \(KEYCOMPROMISE\)/);
    t.ok((await trust.chainFor('default', decodeInput(l2.pem).der)).valid, 'the other leaf is valid');
  });

  await t.test("the root's distribution point is learned from the CA certificate it issued (PEM served)", async (t) => {
    await until('the root CRL is cached', async () => (await cached('crl-root')) !== null);
    t.match(await cached('crl-root'), { url: `${http.base}/root.crl`, entries: 0, lastError: null });
  });

  const refreshed = async (after: number) => {
    await crls.plan('default', caId);
    await until('a new attempt', async () => Number((await api('GET', '/api/v1/caches/crls')).json().find((e: { ca: string }) => e.ca === 'crl-ca')?.lastAttempt) > after);
    return (await api('GET', '/api/v1/caches/crls')).json().find((e: { ca: string }) => e.ca === 'crl-ca') as Record<string, unknown>;
  };

  await t.test('a CRL signed by another key under the same name is refused; the previous one stays', async (t) => {
    const rogue = pki.root('rogue', '/O=Certwright/CN=CRL Issuing CA'); // same subject, another key
    pki.revoke(l2, rogue, 'keyCompromise'); // the rogue CRL would revoke l2
    http.routes.set('/ca.crl', { status: 200, body: pki.crl(rogue, { hours: 1 }).der });
    const before = (await cached())!;
    const after = await refreshed(Number(before.lastAttempt));
    t.match(after.lastError, /^CRL-002: The CRL's signature does not verify with the key of the CA "crl-ca"/);
    t.match(await cached(), { crlNumber: '1', thisUpdate: before.thisUpdate, entries: 1 }, 'the cached CRL is the previous one');
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l2)), { status: 'good' }, 'the rogue CRL changed nothing');
    const refused = await kernel.db.knex('events').where({ code: 'CRL-REFUSED', object_id: 'crl-ca' }).first();
    t.ok(refused, 'a refused CRL is an event');
  });

  await t.test('a newer CRL replaces it; an older one (rollback) and an unreachable server do not', async (t) => {
    pki.revoke(l2, ca, 'superseded');
    const crl2 = pki.crl(ca, { hours: 2 }); // number 2: l1 and l2
    http.routes.set('/ca.crl', { status: 200, body: crl2.der });
    const before = (await cached())!;
    const after = await refreshed(Number(before.lastAttempt));
    t.match(after, { crlNumber: '2', entries: 2, lastError: null });
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l2)), { status: 'revoked', reason: 'SUPERSEDED' });
    await until('planned at the new nextUpdate', async () => (await kernel.scheduler.nextRunAt(CRL_JOB, { caId })) === Number(after.nextUpdate));

    http.routes.set('/ca.crl', { status: 200, body: crl1.der });
    const rolledBack = await refreshed(Number(after.lastAttempt));
    t.match(rolledBack, { crlNumber: '2', lastError: /older than the cached one \(number 2\)/ });

    http.routes.set('/ca.crl', { status: 404, body: Buffer.alloc(0) });
    const unreachable = await refreshed(Number(rolledBack.lastAttempt));
    t.match(unreachable, { crlNumber: '2', entries: 2, lastError: /ca\.crl: HTTP 404$/ });
    t.ok(Number(unreachable.nextRefresh) > Date.now() + 60_000, 'a failed fetch is retried later, not in a loop');
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l1)), { status: 'revoked' });
  });

  await t.test('downloads are bounded in size and time', async (t) => {
    http.routes.set('/big.crl', { status: 200, body: Buffer.alloc(64 * 1024, 0x30) });
    await t.rejects(fetchCrl(`${http.base}/big.crl`, { maxBytes: 1024, timeoutMs: 5000 }), /more than the 1024 bytes accepted/);
    await t.rejects(fetchCrl(`${http.base}/hang`, { maxBytes: 1024, timeoutMs: 200 }), /no complete answer within 200 ms/);
    await t.rejects(fetchCrl('ftp://127.0.0.1/x.crl'), /only http and https/);
  });

  await t.test('GET /api/v1/caches/crls and /:ca', async (t) => {
    const anonymous = await kernel.app.inject({ url: '/api/v1/caches/crls', headers: { host: 'localhost' } });
    t.equal(anonymous.statusCode, 401, 'no credentials: 401');
    const reader = await createPrincipal(kernel, 'crl-reader', { permissions: [{ value: 'configuration:cas:read' }] });
    const list = await caller(kernel, reader.headers)('GET', '/api/v1/caches/crls');
    t.equal(list.statusCode, 200);
    t.equal(list.headers['content-type'], 'application/json');
    t.same((list.json() as { ca: string }[]).map((e) => e.ca), ['crl-ca', 'crl-root']);
    t.notOk('pem' in (list.json() as object[])[0]!, 'the list carries no CRL bytes');
    const nobody = await caller(kernel, (await createPrincipal(kernel, 'crl-nobody')).headers)('GET', '/api/v1/caches/crls/crl-ca');
    t.equal(nobody.statusCode, 403);
    t.match((await api('GET', '/api/v1/caches/crls/unknown')).json(), { status: 404, error: 'CA-003' });
    const bare = pki.root('bare', '/CN=Bare Root');
    await importCa(kernel, { name: 'bare', certificate: bare.pem });
    await until('the bare CA was tried', async () => (await api('GET', '/api/v1/caches/crls/bare')).json().detail !== 'no fetch has completed yet');
    t.match((await api('GET', '/api/v1/caches/crls/bare')).json(), { status: 404, error: 'CRL-003', detail: /No CRL distribution point/ });
  });

  await t.test('deleting the CA drops its CRL, its serials and its job', async (t) => {
    t.equal((await api('DELETE', '/api/v1/cas/crl-ca')).statusCode, 204);
    t.equal((await kernel.db.knex('pki_crl_cache').where({ ca_id: caId })).length, 0);
    t.equal((await kernel.db.knex('pki_crl_entries').where({ ca_id: caId })).length, 0);
    t.equal(await kernel.scheduler.nextRunAt(CRL_JOB, { caId }), null);
    t.match(await crls.isRevoked('default', { ca: 'crl-ca' }, pki.serial(l1)), { status: 'unknown', cause: 'no-ca' });
  });
});
