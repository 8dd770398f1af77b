/**
 * Contract tests: the PKI connector and PKI queue tools of the vendor's MCP server (evertrust/horizon-mcp),
 * each request sent exactly as the tool builds it and each answer checked as the client reads it (transport:
 * mcp-config-client.ts). Line ranges are those of the index's copy at 16a96fa:
 * - src/tools/config/pki-connectors.ts: SPEC L34-L44 (routes, immutable [name, type], strip [_id, status,
 *   tenant, account, accountUrl]); CONNECTOR_TYPES L46-L70 (`type` must be one of Horizon's 22 names,
 *   `integrated` at L59); KNOWN_KEYS (the only top-level keys `config` may carry: Horizon's fields, neither
 *   `configuration` nor `description`); mergeBody L218-L233 (body = {...config, name, type}, checked against
 *   KNOWN_KEYS); create L283-L309, L346; update L311-L323, L348 (overrides = mergeBody(name, type, config),
 *   then _scaffold.ts getStripMergePutExplicit, which refuses to PUT when `type` differs from the GET's);
 *   read tools L341-L344; delete L350-L355. The Horizon shape of `integrated` is
 *   src/tools/config/schemas/pki-connectors.schema.json $defs.IntegratedCAConnector.
 * - src/tools/config/pki-queues.ts: SPEC L28-L38 (strip [_id, tenant]); buildPkiQueueBody L56-L74 (keys in
 *   the order name, size, clusterWide, description, throttleDuration, throttleParallelism); create schema
 *   L76-L92 (clusterWide defaults to false and is always sent); update schema L94-L107; create L109-L116,
 *   L136; update L118-L125, L138; read tools L131-L134; delete L140-L144.
 * Errors are read by src/client/errors.ts: code suffix 002 validation, 003 not found, 004 exists, 005 referenced.
 */
import t from 'tap';
import type { Test } from 'tap';
import { ENROLLMENT_BOOTSTRAP, bootKernel } from '../helpers/kernel.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const mcp = new McpClient(kernel);
await mcp.init();

const CONNECTORS = { routeCollection: '/api/v1/pki/connectors', routeItem: '/api/v1/pki/connectors/{name}', stripFields: ['_id', 'status', 'tenant', 'account', 'accountUrl'] } as const;
const QUEUES = { routeCollection: '/api/v1/pki/queues', routeItem: '/api/v1/pki/queues/{name}', stripFields: ['_id', 'tenant'] } as const;
/** pki-connectors.ts CONNECTOR_TYPES (L46-L70). */
const CONNECTOR_TYPES = ['stream', 'acmeenroll', 'acmerevoke', 'evtadcs', 'awsacmpca', 'certeurope', 'cmp', 'digicert', 'ejbca', 'ejbca_rest', 'idca', 'integrated', 'fcms', 'gcp', 'gsatlas', 'gsmssl', 'otpki', 'metapki', 'nameshield', 'nexuscm', 'sectigo', 'swisssign'];

/** mergeBody of pki-connectors.ts: the subtype config first, then name and type. */
const connectorBody = (name: string, type: string, config: Json = {}): Json => ({ ...config, name, type });

/** buildPkiQueueBody of pki-queues.ts: the tool's snake_case arguments to the wire's keys, in its order. */
function queueBody(args: { name?: string; size?: number; cluster_wide?: boolean; description?: string | null; throttle_duration?: string | null; throttle_parallelism?: number | null }): Json {
  const o: Json = {};
  if (args.name !== undefined) o.name = args.name;
  if (args.size !== undefined) o.size = args.size;
  if (args.cluster_wide !== undefined) o.clusterWide = args.cluster_wide;
  if (args.description !== undefined) o.description = args.description;
  if (args.throttle_duration !== undefined) o.throttleDuration = args.throttle_duration;
  if (args.throttle_parallelism !== undefined) o.throttleParallelism = args.throttle_parallelism;
  return o;
}

/** getStripMergePutExplicit refuses, client-side, overrides that change an immutable key (`type`). */
function immutableCheck(t: Test, current: Json, overrides: Json): void {
  t.equal(current.type, overrides.type, 'the GET answers the type the tool sends back (else CONFIG-IMMUTABLE-OVERRIDE before any PUT)');
}

// ---------------------------------------------------------------------------------------------------------
// pki-queues.ts (first: the connector tests put a connector on an MCP-made queue)
// ---------------------------------------------------------------------------------------------------------

t.test('create_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L56-L74,L76-L92,L109-L116,L136', async (t) => {
  const body = queueBody({ name: 'mcp-issuance', size: 10, cluster_wide: true, description: 'Issuance through MCP', throttle_duration: '1 second', throttle_parallelism: 5 });
  const res = await mcp.post(QUEUES.routeCollection, body);
  expectOk(t, res, 'POST /api/v1/pki/queues');
  t.match(res.body, body, 'every field the tool sent is answered back');

  // The minimal call: name and size (mandatory), clusterWide always sent (default false).
  const minimal = await mcp.post(QUEUES.routeCollection, queueBody({ name: 'mcp-minimal', size: 1, cluster_wide: false }));
  expectOk(t, minimal, 'the minimal create');
  t.match(minimal.body, { name: 'mcp-minimal', size: 1, clusterWide: false, throttleDuration: null, throttleParallelism: null });

  expectProblem(t, await mcp.post(QUEUES.routeCollection, queueBody({ name: 'mcp-issuance', size: 3, cluster_wide: false })), 'the same name again', { status: [400, 409], suffix: '004' });
  const zero = expectProblem(t, await mcp.post(QUEUES.routeCollection, queueBody({ name: 'mcp-zero', size: 0, cluster_wide: false })), 'size 0 (the tool: must be > 0)', { status: 400, suffix: '002' });
  t.match(zero.detail, /size/);
  const lonely = expectProblem(t, await mcp.post(QUEUES.routeCollection, queueBody({ name: 'mcp-lonely', size: 5, cluster_wide: false, throttle_duration: '30 seconds' })), 'a throttle duration without parallelism', { status: 400, suffix: '002' });
  t.match(lonely.detail, /throttleParallelism/);
  expectProblem(t, await mcp.post(QUEUES.routeCollection, queueBody({ name: 'mcp-bad', size: 5, cluster_wide: false, throttle_duration: 'a while', throttle_parallelism: 1 })), 'a duration that is not one', { status: 400, suffix: '002' });
});

t.test('list_pki_queues — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L131-L134', async (t) => {
  const res = await mcp.get(QUEUES.routeCollection);
  expectOk(t, res, 'GET /api/v1/pki/queues', [200]);
  const items = normalizeItems(res.body);
  for (const item of items) t.type(item.name, 'string', 'name_contains filters on a string name');
  t.same(items.map((q) => q.name).filter((n) => String(n).startsWith('mcp-')).sort(), ['mcp-issuance', 'mcp-minimal']);
  t.ok(items.some((q) => q.name === 'default'));
});

t.test('get_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L131-L134', async (t) => {
  const res = await mcp.get(itemPath(QUEUES.routeItem, 'mcp-issuance'));
  expectOk(t, res, 'GET one queue', [200]);
  t.notOk(Array.isArray(res.body), 'one object');
  t.match(res.body, { name: 'mcp-issuance', size: 10, clusterWide: true, description: 'Issuance through MCP', throttleDuration: '1 second', throttleParallelism: 5 });
  expectProblem(t, await mcp.get(itemPath(QUEUES.routeItem, 'mcp-nope')), 'GET of an unknown queue', { status: 404, suffix: '003' });
});

t.test('update_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L94-L107,L118-L125,L138 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  // update_pki_queue {name, size: 20, throttle_parallelism: 2, clear_fields: ["description", "throttleDuration"]}:
  // the cleared fields are null in the merged body, the overrides set on top.
  const { current, res } = await getStripMergePut(t, mcp, QUEUES, 'mcp-issuance', { description: null, throttleDuration: null, ...queueBody({ size: 20, throttle_parallelism: 2 }) });
  expectOk(t, res, 'PUT /api/v1/pki/queues', [200]);
  t.match(res.body, { name: 'mcp-issuance', size: 20, throttleParallelism: 2, throttleDuration: null, description: null, clusterWide: true, retries: current.retries });
  const after = await mcp.get(itemPath(QUEUES.routeItem, 'mcp-issuance'));
  t.match(after.body, { size: 20, throttleParallelism: 2, throttleDuration: null, clusterWide: true });

  // The built-in queue round-trips as well (its bounds read null / false).
  const builtIn = await getStripMergePut(t, mcp, QUEUES, 'default', queueBody({ cluster_wide: false }));
  expectOk(t, builtIn.res, 'PUT of the built-in queue', [200]);
  t.match(builtIn.res.body, { name: 'default', size: null, clusterWide: false });

  const invalid = await getStripMergePut(t, mcp, QUEUES, 'mcp-minimal', queueBody({ throttle_duration: '5 seconds' }));
  expectProblem(t, invalid.res, 'a duration on a queue without parallelism', { status: 400, suffix: '002' });
  expectProblem(t, await mcp.put(QUEUES.routeCollection, { name: 'mcp-nope', size: 1 }), 'PUT of an unknown queue', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// pki-connectors.ts
// ---------------------------------------------------------------------------------------------------------

t.test('create_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L46-L70,L218-L233,L283-L309,L346', async (t) => {
  // Horizon's "Integrated CA": the CA the platform runs itself, Certwright's local-ca.
  const body = connectorBody('mcp-integrated', 'integrated', { queue: 'default' });
  const res = await mcp.post(CONNECTORS.routeCollection, body);
  expectOk(t, res, 'POST /api/v1/pki/connectors');
  t.match(res.body, { name: 'mcp-integrated', type: 'integrated', queue: 'default' });

  // With the Horizon fields of IntegratedCAConnector that mean something for the local CA.
  const described = connectorBody('mcp-integrated-2', 'integrated', { queue: 'mcp-issuance', cryptoType: 'legacy', crlLifetime: '7 days' });
  const withFields = await mcp.post(CONNECTORS.routeCollection, described);
  expectOk(t, withFields, 'a create with cryptoType and crlLifetime');
  t.match(withFields.body, { name: 'mcp-integrated-2', type: 'integrated', queue: 'mcp-issuance', configuration: { crlValidityHours: 168 } });

  expectProblem(t, await mcp.post(CONNECTORS.routeCollection, body), 'the same name again', { status: [400, 409], suffix: '004' });
  const noQueue = expectProblem(t, await mcp.post(CONNECTORS.routeCollection, connectorBody('mcp-lost', 'integrated', { queue: 'mcp-no-such-queue' })), 'an unknown queue', { status: 400, suffix: '002' });
  t.match(noQueue.detail, /mcp-no-such-queue/);
  const imported = expectProblem(t, await mcp.post(CONNECTORS.routeCollection, connectorBody('mcp-import', 'integrated', { caCert: '-----BEGIN CERTIFICATE-----', caKey: { value: 'secret' } })), 'Horizon fields with no local-ca counterpart', { status: 400, suffix: '002' });
  t.match(imported.detail, /"caCert", "caKey"/);
  t.notMatch(JSON.stringify(imported), /secret"/, 'the refused secret is not echoed');

  // A Horizon type Certwright has no plugin for: a clear 400 naming what is installed (PKI-CONN-006).
  const ejbca = await mcp.post(CONNECTORS.routeCollection, connectorBody('mcp-ejbca', 'ejbca', { endPoint: 'https://ejbca.example', profile: 'p', caName: 'ca', authenticationCredentials: 'creds' }));
  t.equal(ejbca.status, 400);
  t.equal(ejbca.contentType, 'application/problem+json');
  const problem = (ejbca.body ?? {}) as Json;
  t.equal(problem.error, 'PKI-CONN-006');
  t.ok(typeof problem.message === 'string' && problem.message.length > 0, 'a message the tool shows');
  t.match(problem.detail, /"ejbca" is not a PKI connector type; installed: .*local-ca.*Horizon "integrated" = local-ca/);
});

t.test('list_pki_connectors — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L341-L344', async (t) => {
  const res = await mcp.get(CONNECTORS.routeCollection);
  expectOk(t, res, 'GET /api/v1/pki/connectors', [200]);
  const items = normalizeItems(res.body);
  for (const item of items) t.type(item.name, 'string', 'name_contains filters on a string name');
  t.same(items.map((c) => c.name).sort(), ['local-ca', 'mcp-integrated', 'mcp-integrated-2']);
});

t.test('get_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L341-L344', async (t) => {
  const res = await mcp.get(itemPath(CONNECTORS.routeItem, 'mcp-integrated'));
  expectOk(t, res, 'GET one connector', [200]);
  t.notOk(Array.isArray(res.body), 'one object');
  t.match(res.body, { name: 'mcp-integrated', type: 'integrated' });
  t.ok(CONNECTOR_TYPES.includes((res.body as Json).type as string), 'its type is one the tool can send back');
  expectProblem(t, await mcp.get(itemPath(CONNECTORS.routeItem, 'mcp-nope')), 'GET of an unknown connector', { status: 404, suffix: '003' });
});

t.test('update_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L218-L233,L311-L323,L348 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  // update_pki_connector {name, type: "integrated", config: {queue: "mcp-minimal", crlLifetime: "2 days"}}.
  const overrides = connectorBody('mcp-integrated', 'integrated', { queue: 'mcp-minimal', crlLifetime: '2 days' });
  const before = await mcp.get(itemPath(CONNECTORS.routeItem, 'mcp-integrated'));
  immutableCheck(t, before.body as Json, overrides);
  const { current, res } = await getStripMergePut(t, mcp, CONNECTORS, 'mcp-integrated', overrides);
  expectOk(t, res, 'PUT /api/v1/pki/connectors', [200]);
  t.match(res.body, { name: 'mcp-integrated', type: 'integrated', queue: 'mcp-minimal', version: (current.version as number) + 1 });
  t.match((res.body as Json).configuration, { ...(current.configuration as Json), crlValidityHours: 48 }, 'settings not named in the call are kept by the merge');

  // clear_fields ["crlLifetime", "proxy"]: nulls in the merged body (back to the default; proxy has no meaning here).
  const cleared = await getStripMergePut(t, mcp, CONNECTORS, 'mcp-integrated', { crlLifetime: null, proxy: null, ...connectorBody('mcp-integrated', 'integrated') });
  expectOk(t, cleared.res, 'PUT with cleared fields', [200]);
  t.match((cleared.res.body as Json).configuration, { crlValidityHours: 24 });

  // The connector the first start made answers Certwright's own name, which the tool cannot send back;
  // once an administrator names it the Horizon way, the tool updates it too.
  const bootstrap = await mcp.get(itemPath(CONNECTORS.routeItem, 'local-ca'));
  t.equal((bootstrap.body as Json).type, 'local-ca', "Certwright's own wire is unchanged");
  const renamed = await mcp.put(CONNECTORS.routeCollection, { ...(bootstrap.body as Json), type: 'integrated' });
  expectOk(t, renamed, 'a PUT naming it "integrated"', [200]);
  const again = await getStripMergePut(t, mcp, CONNECTORS, 'local-ca', connectorBody('local-ca', 'integrated', { queue: 'default' }));
  expectOk(t, again.res, 'the tool updates the first-start connector', [200]);
  t.match(again.res.body, { name: 'local-ca', type: 'integrated', configuration: (bootstrap.body as Json).configuration });
});

t.test('delete_pki_connector — horizon-mcp src/tools/config/pki-connectors.ts:L34-L44,L350-L355', async (t) => {
  const res = await mcp.delete(itemPath(CONNECTORS.routeItem, 'mcp-integrated-2'));
  t.ok(res.status === 204 || (res.status === 200 && res.contentType === 'application/json'), `DELETE answered ${res.status}: 204, or 200 with JSON`);
  expectProblem(t, await mcp.get(itemPath(CONNECTORS.routeItem, 'mcp-integrated-2')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(CONNECTORS.routeItem, 'mcp-integrated-2')), 'a second delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(CONNECTORS.routeItem, 'local-ca')), 'the connector profile "default" uses', { status: [400, 409], suffix: '005' });
});

t.test('delete_pki_queue — horizon-mcp src/tools/config/pki-queues.ts:L28-L38,L140-L144', async (t) => {
  // mcp-integrated names mcp-minimal (update_pki_connector above).
  expectProblem(t, await mcp.delete(itemPath(QUEUES.routeItem, 'mcp-minimal')), 'a queue a connector names', { status: [400, 409], suffix: '005' });
  const res = await mcp.delete(itemPath(QUEUES.routeItem, 'mcp-issuance'));
  t.ok(res.status === 204 || (res.status === 200 && res.contentType === 'application/json'), `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(QUEUES.routeItem, 'mcp-issuance')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(QUEUES.routeItem, 'mcp-issuance')), 'a second delete', { status: 404, suffix: '003' });
});
