/**
 * Contract tests: the configuration tools of the vendor's MCP server (evertrust/horizon-mcp) for CAs,
 * certificate labels, certificate profiles, PKI connectors and PKI queues, each request sent exactly as the
 * tool sends it and each answer checked as the client reads it (see mcp-config-client.ts for the transport
 * facts of src/client/http.ts, src/client/errors.ts and src/tools/config/_scaffold.ts). Line ranges are those
 * of the files of the index's copy (src/tools/config/*.ts at 16a96fa, src/tools/triggers.ts at 1ae4e38).
 *
 * The HTTP proxy, terms of service, system configuration and storage tools: mcp-config-system-objects.test.ts.
 * MCP configuration tools whose routes Certwright does NOT serve yet; their contract tests arrive with the
 * issue that serves them:
 * - eab-policies.ts (ACME external account binding): issue 26 (ACME/EAB);
 * - dcv-policies.ts, dcv-providers.ts, dcv-provisioners.ts: issue 29 (DCV);
 * - automation-policies.ts, execution-policies.ts: issue 30 (automation/execution policies);
 * - archives.ts, certificate-grading-policies.ts, certificate-grading-rulesets.ts, service-accounts.ts,
 *   thirdparty-connectors.ts, wcce-forests.ts: a later issue.
 *
 * Known gaps (these client calls fail today; issue 23's note lists them): none.
 * - Schema-level validation errors of configuration collections answer their family's -002 (PKI-CONN-002,
 *   PKI-QUEUE-002, the registry's types), other routes' 400 HTTP-003. The client's errors.ts @0e6bddd keys its
 *   remediation hints on the code family ("never just a numeric suffix": only CRT-003 and PRF-004 have one), so
 *   either is reported as the 400 it is, with no "not found" hint.
 * - The profile tools are replayed in horizon-profiles.test.ts; create/update of a PKI connector (Horizon type
 *   `integrated` = local-ca, settings at the top level) and of a PKI queue (size, clusterWide, throttle*) in
 *   mcp-pki-connectors-queues.test.ts. The first-start connector `local-ca` answers type "local-ca", which the
 *   update tool cannot send back, until it is PUT once with type "integrated" (that test shows it).
 */
import t from 'tap';
import { ADMIN_HEADERS, ENROLLMENT_BOOTSTRAP, bootKernel, tempDir } from '../helpers/kernel.js';
import { CA_EXT, OpensslPki } from '../helpers/openssl-pki.js';
import { newId } from '../../core/db/ids.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const mcp = new McpClient(kernel);
await mcp.init();
const pki = new OpensslPki(tempDir(t, 'cw-mcp-pki-'));

/** A connector row written straight to the table, for the delete checks (creation is mcp-pki-connectors-queues.test.ts's). */
async function connectorRow(name: string, queue = 'default'): Promise<void> {
  const now = Date.now();
  await kernel.db.knex('pki_connectors').insert({ id: newId(now), tenant: 'default', name, type: 'local-ca', description: null, enabled: true, queue, configuration: '{}', version: 1, created_at: now, updated_at: now });
}

// ---------------------------------------------------------------------------------------------------------
// cas.ts — SPEC: /api/v1/cas, /api/v1/cas/{name}, strip [_id, tenant], PUT on the collection.
// ---------------------------------------------------------------------------------------------------------
const CAS = { routeCollection: '/api/v1/cas', routeItem: '/api/v1/cas/{name}', stripFields: ['_id', 'tenant'] } as const;
const importRoot = pki.root('mcp-root', '/O=Certwright MCP/CN=MCP Import Root', { ext: CA_EXT });
const otherRoot = pki.root('mcp-other', '/O=Certwright MCP/CN=MCP Other Root', { ext: CA_EXT });

t.test('create_ca — horizon-mcp src/tools/config/cas.ts:L26-L36,L95-L142,L227-L241', async (t) => {
  // buildCaBody maps the snake_case params to these camelCase keys; the six mandatory ones are always sent.
  const body = {
    name: 'MCP Import Root',
    certificate: importRoot.pem,
    trustedForClientAuthentication: false,
    trustedForServerAuthentication: true,
    outdatedRevocationStatusPolicy: 'lastavailablestatus',
    public: true,
    crlUrl: 'http://crl.example.com/mcp-root.crl',
    responderUrl: 'http://ocsp.example.com/',
    refresh: '1h',
    timeout: '30s',
    downloadable: true,
  };
  const res = await mcp.post('/api/v1/cas', body);
  expectOk(t, res, 'POST /api/v1/cas');
  t.match(res.body, {
    name: 'MCP Import Root',
    trustedForClientAuthentication: false,
    trustedForServerAuthentication: true,
    outdatedRevocationStatusPolicy: 'lastavailablestatus',
    public: true,
    crlUrl: 'http://crl.example.com/mcp-root.crl',
    responderUrl: 'http://ocsp.example.com/',
    downloadable: true,
  });
  t.match((res.body as Json).certificate, /-----BEGIN CERTIFICATE-----/);

  const again = await mcp.post('/api/v1/cas', { ...body, certificate: otherRoot.pem });
  expectProblem(t, again, 'a second CA of the same name', { status: [400, 409], suffix: '004' });
});

t.test('list_cas — horizon-mcp src/tools/config/cas.ts:L26-L36,L222-L225 (+ _scaffold.ts registerReadTools)', async (t) => {
  const res = await mcp.get('/api/v1/cas');
  expectOk(t, res, 'GET /api/v1/cas', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.length >= 2, 'the local CA chain and the imported root are listed');
  for (const item of items) t.type(item.name, 'string', 'name_contains filters on a string name');
  t.ok(items.some((i) => i.name === 'MCP Import Root'));
});

t.test('get_ca — horizon-mcp src/tools/config/cas.ts:L26-L36,L222-L225 (item route, encodeURIComponent)', async (t) => {
  const res = await mcp.get(itemPath(CAS.routeItem, 'MCP Import Root'));
  expectOk(t, res, 'GET /api/v1/cas/MCP%20Import%20Root', [200]);
  t.notOk(Array.isArray(res.body), 'one object');
  t.match(res.body, { name: 'MCP Import Root', trustedForServerAuthentication: true });
  const missing = await mcp.get(itemPath(CAS.routeItem, 'No Such CA'));
  expectProblem(t, missing, 'GET of an unknown CA', { status: 404, suffix: '003' });
});

t.test('update_ca — horizon-mcp src/tools/config/cas.ts:L26-L36,L178-L216,L243-L253 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  // The certificate is REQUIRED by the tool's schema on update, so it is always in the overrides.
  const { current, res } = await getStripMergePut(t, mcp, CAS, 'MCP Import Root', {
    certificate: importRoot.pem,
    trustedForClientAuthentication: true,
    trustedForServerAuthentication: true,
    outdatedRevocationStatusPolicy: 'revoked',
    public: false,
  });
  expectOk(t, res, 'PUT /api/v1/cas', [200]);
  t.match(res.body, { name: 'MCP Import Root', trustedForClientAuthentication: true, outdatedRevocationStatusPolicy: 'revoked', public: false });
  t.match(res.body, { crlUrl: current.crlUrl, responderUrl: current.responderUrl, downloadable: current.downloadable }, 'fields not named in the call are kept by the merge');
  const after = await mcp.get(itemPath(CAS.routeItem, 'MCP Import Root'));
  t.match(after.body, { trustedForClientAuthentication: true, public: false });
});

t.test('delete_ca — horizon-mcp src/tools/config/cas.ts:L26-L36,L255-L262 (+ _scaffold.ts registerDeleteTool)', async (t) => {
  const res = await mcp.delete(itemPath(CAS.routeItem, 'MCP Import Root'));
  t.ok(res.status === 204 || (res.status === 200 && res.contentType === 'application/json'), `DELETE answered ${res.status}: 204, or 200 with JSON`);
  expectProblem(t, await mcp.get(itemPath(CAS.routeItem, 'MCP Import Root')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(CAS.routeItem, 'MCP Import Root')), 'a second delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// certificate-labels.ts — SPEC: /api/v1/certificate/labels, strip [_id], PUT on the collection.
// ---------------------------------------------------------------------------------------------------------
const LABELS = { routeCollection: '/api/v1/certificate/labels', routeItem: '/api/v1/certificate/labels/{name}', stripFields: ['_id'] } as const;

t.test('create_certificate_label — horizon-mcp src/tools/config/certificate-labels.ts:L28-L38,L83-L95', async (t) => {
  const body = { name: 'mcp_business-unit', displayName: [{ lang: 'en', value: 'Business Unit' }], description: [{ lang: 'en', value: 'Owning BU' }] };
  const res = await mcp.post('/api/v1/certificate/labels', body);
  expectOk(t, res, 'POST /api/v1/certificate/labels');
  t.match(res.body, body);
  const again = await mcp.post('/api/v1/certificate/labels', { name: 'mcp_business-unit' });
  expectProblem(t, again, 'the same label twice', { status: [400, 409], suffix: '004' });
  const plain = await mcp.post('/api/v1/certificate/labels', { name: 'mcp_plain', displayName: 'Business Unit' });
  expectOk(t, plain, 'a displayName given as a plain string');
  t.match(plain.body, { displayName: [{ lang: 'en', value: 'Business Unit' }] }, 'is kept as English');
  expectProblem(t, await mcp.post('/api/v1/certificate/labels', { name: 'mcp_bad', regex: '(unclosed' }), 'a regex that does not compile', { status: 400, suffix: '002' });
});

t.test('list_certificate_labels — horizon-mcp src/tools/config/certificate-labels.ts:L28-L38,L78-L81', async (t) => {
  const res = await mcp.get('/api/v1/certificate/labels');
  expectOk(t, res, 'GET /api/v1/certificate/labels', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.some((i) => i.name === 'mcp_business-unit'), 'the created label is listed by name');
  for (const item of items) t.type(item.name, 'string');
});

t.test('get_certificate_label — horizon-mcp src/tools/config/certificate-labels.ts:L28-L38,L78-L81', async (t) => {
  const res = await mcp.get(itemPath(LABELS.routeItem, 'mcp_business-unit'));
  expectOk(t, res, 'GET one label', [200]);
  t.match(res.body, { name: 'mcp_business-unit', displayName: [{ lang: 'en', value: 'Business Unit' }] });
  expectProblem(t, await mcp.get(itemPath(LABELS.routeItem, 'nope')), 'GET of an unknown label', { status: 404, suffix: '003' });
});

t.test('update_certificate_label — horizon-mcp src/tools/config/certificate-labels.ts:L28-L38,L97-L106', async (t) => {
  const { res } = await getStripMergePut(t, mcp, LABELS, 'mcp_business-unit', { displayName: [{ lang: 'en', value: 'BU' }, { lang: 'fr', value: 'Entité' }] });
  expectOk(t, res, 'PUT /api/v1/certificate/labels', [200]);
  t.match(res.body, { name: 'mcp_business-unit', displayName: [{ lang: 'en', value: 'BU' }, { lang: 'fr', value: 'Entité' }], description: [{ lang: 'en', value: 'Owning BU' }] });
  // clear_fields: ["description"] sends description: null in the merged body.
  const cleared = await getStripMergePut(t, mcp, LABELS, 'mcp_business-unit', { description: null });
  expectOk(t, cleared.res, 'PUT with a cleared field', [200]);
  const description = ((cleared.res.body ?? {}) as Json).description;
  t.ok(description == null || (Array.isArray(description) && description.length === 0), 'description cleared');
});

t.test('delete_certificate_label — horizon-mcp src/tools/config/certificate-labels.ts:L28-L38,L108-L114', async (t) => {
  const res = await mcp.delete(itemPath(LABELS.routeItem, 'mcp_business-unit'));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(LABELS.routeItem, 'mcp_business-unit')), 'GET after the delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// certificate-profiles.ts — SPEC: /api/v1/certificate/profiles, immutable [name, module], strip [_id, tenant].
// ---------------------------------------------------------------------------------------------------------
const PROFILES = { routeCollection: '/api/v1/certificate/profiles', routeItem: '/api/v1/certificate/profiles/{name}', stripFields: ['_id', 'tenant'] } as const;
const MCP_PROFILE_MODULES = ['acme', 'acme-external', 'est', 'scep', 'wcce', 'webra', 'crmp', 'intune', 'intunepkcs', 'jamf', 'monitored'];

t.test('list_certificate_profiles — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L374-L378', async (t) => {
  const res = await mcp.get('/api/v1/certificate/profiles');
  expectOk(t, res, 'GET /api/v1/certificate/profiles', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.some((p) => p.name === 'default'), 'the bootstrap profile is listed by name');
  for (const p of items) t.ok(MCP_PROFILE_MODULES.includes(String(p.module)), `module ${String(p.module)} is one of the tool's module enum`);
});

t.test('get_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L374-L378', async (t) => {
  const res = await mcp.get(itemPath(PROFILES.routeItem, 'default'));
  expectOk(t, res, 'GET one profile', [200]);
  t.match(res.body, { name: 'default', module: 'webra', enabled: true, pkiConnector: 'local-ca' });
  expectProblem(t, await mcp.get(itemPath(PROFILES.routeItem, 'nope')), 'GET of an unknown profile', { status: 404, suffix: '003' });
});

t.test('update_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L400-L412', async (t) => {
  // Only `enabled` given: the overrides are {enabled: false}; the rest comes from the GET.
  const { res } = await getStripMergePut(t, mcp, PROFILES, 'default', { enabled: false });
  expectOk(t, res, 'PUT /api/v1/certificate/profiles', [200]);
  t.match(res.body, { name: 'default', module: 'webra', enabled: false, pkiConnector: 'local-ca' });
  const back = await getStripMergePut(t, mcp, PROFILES, 'default', { enabled: true });
  expectOk(t, back.res, 'PUT back', [200]);
  const unknown = await mcp.put('/api/v1/certificate/profiles', { ...(back.sent as object), name: 'no-such-profile' });
  expectProblem(t, unknown, 'PUT of an unknown name', { status: 404, suffix: '003' });
});

t.test('delete_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L414-L420', async (t) => {
  // A profile of its own, copied from what GET answers (horizon-profiles.test.ts creates them as the MCP does).
  const base = (await mcp.get(itemPath(PROFILES.routeItem, 'default'))).body as Json;
  const { _id: _drop, ...copy } = base;
  const made = await mcp.post('/api/v1/certificate/profiles', { ...copy, name: 'mcp-doomed' });
  expectOk(t, made, 'a profile to delete');
  const res = await mcp.delete(itemPath(PROFILES.routeItem, 'mcp-doomed'));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(PROFILES.routeItem, 'mcp-doomed')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(PROFILES.routeItem, 'mcp-doomed')), 'a second delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// pki-connectors.ts — SPEC: /api/v1/pki/connectors, immutable [name, type],
// strip [_id, status, tenant, account, accountUrl]; `type` must be one of the tool's 22 CONNECTOR_TYPES.
// ---------------------------------------------------------------------------------------------------------
const CONNECTORS = { routeCollection: '/api/v1/pki/connectors', routeItem: '/api/v1/pki/connectors/{name}', stripFields: ['_id', 'status', 'tenant', 'account', 'accountUrl'] } as const;

t.test('list_pki_connectors — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L341-L344', async (t) => {
  const res = await mcp.get('/api/v1/pki/connectors');
  expectOk(t, res, 'GET /api/v1/pki/connectors', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.some((c) => c.name === 'local-ca'), 'the local CA connector is listed by name');
});

t.test('get_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L341-L344', async (t) => {
  const res = await mcp.get(itemPath(CONNECTORS.routeItem, 'local-ca'));
  expectOk(t, res, 'GET one connector', [200]);
  t.match(res.body, { name: 'local-ca', type: String });
  expectProblem(t, await mcp.get(itemPath(CONNECTORS.routeItem, 'nope')), 'GET of an unknown connector', { status: 404, suffix: '003' });
});

t.test('delete_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L350-L355', async (t) => {
  const referenced = await mcp.delete(itemPath(CONNECTORS.routeItem, 'local-ca'));
  expectProblem(t, referenced, 'deleting the connector profile "default" uses', { status: [400, 409], suffix: '005' });
  await connectorRow('mcp-spare');
  const res = await mcp.delete(itemPath(CONNECTORS.routeItem, 'mcp-spare'));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(CONNECTORS.routeItem, 'mcp-spare')), 'GET after the delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// pki-queues.ts — SPEC: /api/v1/pki/queues, strip [_id, tenant]; create always sends clusterWide.
// ---------------------------------------------------------------------------------------------------------
const QUEUES = { routeCollection: '/api/v1/pki/queues', routeItem: '/api/v1/pki/queues/{name}', stripFields: ['_id', 'tenant'] } as const;

t.test('list_pki_queues — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L131-L134', async (t) => {
  const res = await mcp.get('/api/v1/pki/queues');
  expectOk(t, res, 'GET /api/v1/pki/queues', [200]);
  t.ok(normalizeItems(res.body).some((q) => q.name === 'default'));
});

t.test('get_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L131-L134', async (t) => {
  const res = await mcp.get(itemPath(QUEUES.routeItem, 'default'));
  expectOk(t, res, 'GET one queue', [200]);
  t.match(res.body, { name: 'default' });
  expectProblem(t, await mcp.get(itemPath(QUEUES.routeItem, 'nope')), 'GET of an unknown queue', { status: 404, suffix: '003' });
});

t.test('update_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L94-L107,L118-L125,L138', async (t) => {
  const { res } = await getStripMergePut(t, mcp, QUEUES, 'default', { description: 'Edited by MCP' });
  expectOk(t, res, 'PUT /api/v1/pki/queues', [200]);
  t.match(res.body, { name: 'default', description: 'Edited by MCP' });
});

t.test('delete_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L140-L144', async (t) => {
  // Queues made with Certwright's own body (the MCP create body is replayed in mcp-pki-connectors-queues.test.ts).
  for (const name of ['mcp-used-queue', 'mcp-spare-queue']) {
    const made = await kernel.app.inject({ method: 'POST', url: '/api/v1/pki/queues/', headers: { host: 'localhost', ...ADMIN_HEADERS }, payload: { name } });
    t.equal(made.statusCode, 201, `queue ${name}: ${made.body}`);
  }
  await connectorRow('mcp-queue-user', 'mcp-used-queue');
  const referenced = await mcp.delete(itemPath(QUEUES.routeItem, 'mcp-used-queue'));
  expectProblem(t, referenced, 'deleting a queue a connector uses', { status: [400, 409], suffix: '005' });
  const res = await mcp.delete(itemPath(QUEUES.routeItem, 'mcp-spare-queue'));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(QUEUES.routeItem, 'mcp-spare-queue')), 'GET after the delete', { status: 404, suffix: '003' });
});
