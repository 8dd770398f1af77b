/**
 * Contract tests: the configuration tools of the vendor's MCP server (evertrust/horizon-mcp) for roles (and
 * their members), teams (members, switch_team), password policies and identity providers (read-only), each
 * request sent exactly as the tool sends it and each answer checked as the client reads it (transport facts:
 * mcp-config-client.ts). Line ranges are those of the index's copy of src/tools/config/*.ts (16a96fa).
 *
 * MCP configuration tools whose routes Certwright does NOT serve yet; their contract tests arrive with the
 * issue that serves them:
 * - http-proxies.ts, terms-of-service.ts, system-configuration.ts, storages.ts: issue 25 "configuration objects";
 * - eab-policies.ts (ACME external account binding): issue 26 (ACME/EAB);
 * - dcv-policies.ts, dcv-providers.ts, dcv-provisioners.ts: issue 29 (DCV);
 * - automation-policies.ts, execution-policies.ts: issue 30 (automation/execution policies);
 * - archives.ts, certificate-grading-policies.ts, certificate-grading-rulesets.ts, service-accounts.ts,
 *   thirdparty-connectors.ts, wcce-forests.ts: a later issue.
 *
 * Known gaps (these client calls fail today; issue 23's note lists them): none. create_team with every field
 * (webhook, managers) and update_team's webhook PUT are replayed in teams-principal-infos.test.ts.
 */
import t, { type Test } from 'tap';
import { bootKernel } from '../helpers/kernel.js';
import { createPrincipal } from '../helpers/security.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t);
const mcp = new McpClient(kernel);
await mcp.init();
await createPrincipal(kernel, 'mcp-alice');
await createPrincipal(kernel, 'mcp-bob');

const deleted = (t: Test, status: number) => t.ok(status === 204 || status === 200, `DELETE answered ${status}`);

// ---------------------------------------------------------------------------------------------------------
// roles.ts — SPEC: /api/v1/security/roles, strip [_id, scim], PUT on the collection; members subroutes.
// ---------------------------------------------------------------------------------------------------------
const ROLES = { routeCollection: '/api/v1/security/roles', routeItem: '/api/v1/security/roles/{name}', stripFields: ['_id', 'scim'] } as const;

t.test('create_role — horizon-mcp src/tools/config/roles.ts:L27-L37,L72-L76,L90-L105,L132', async (t) => {
  // description is a free-text string in the tool's schema (descriptionSchema = z.string()).
  const body = { name: 'mcp_operators', description: 'Operators of the MCP', permissions: [{ value: 'configuration:roles:read' }, { value: 'configuration:teams:read', filter: 'name equals "x"' }] };
  const res = await mcp.post('/api/v1/security/roles', body);
  expectOk(t, res, 'POST /api/v1/security/roles with the MCP body');
  t.match(res.body, { name: 'mcp_operators', permissions: [{ value: 'configuration:roles:read' }, { value: 'configuration:teams:read' }] });
  const plain = await mcp.post('/api/v1/security/roles', { name: 'mcp_plain', permissions: [{ value: 'configuration:roles:read' }] });
  expectOk(t, plain, 'POST without a description');
  expectProblem(t, await mcp.post('/api/v1/security/roles', { name: 'mcp_plain' }), 'the same role twice', { status: [400, 409], suffix: '004' });
  expectProblem(t, await mcp.post('/api/v1/security/roles', { name: 'mcp_bad', permissions: [{ value: 'not a permission' }] }), 'a bad permission value', { status: 400, suffix: '002' });
});

t.test('list_roles — horizon-mcp src/tools/config/roles.ts:L27-L37,L127-L130', async (t) => {
  const res = await mcp.get('/api/v1/security/roles');
  expectOk(t, res, 'GET /api/v1/security/roles', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.some((r) => r.name === 'mcp_plain'));
  for (const item of items) t.type(item.name, 'string');
});

t.test('get_role — horizon-mcp src/tools/config/roles.ts:L27-L37,L127-L130', async (t) => {
  const res = await mcp.get(itemPath(ROLES.routeItem, 'mcp_plain'));
  expectOk(t, res, 'GET one role', [200]);
  t.match(res.body, { name: 'mcp_plain', permissions: [{ value: 'configuration:roles:read' }] });
  expectProblem(t, await mcp.get(itemPath(ROLES.routeItem, 'nope')), 'GET of an unknown role', { status: 404, suffix: '003' });
});

t.test('update_role — horizon-mcp src/tools/config/roles.ts:L27-L37,L78-L88,L107-L125,L134', async (t) => {
  const { res } = await getStripMergePut(t, mcp, ROLES, 'mcp_plain', { permissions: [{ value: 'configuration:teams:read' }] });
  expectOk(t, res, 'PUT /api/v1/security/roles (permissions replaced)', [200]);
  t.match(res.body, { name: 'mcp_plain', permissions: [{ value: 'configuration:teams:read' }] });
  t.equal(((res.body ?? {}) as Json & { permissions: unknown[] }).permissions.length, 1, 'passing permissions REPLACES the set');
  const described = await getStripMergePut(t, mcp, ROLES, 'mcp_plain', { description: 'Now described' });
  expectOk(t, described.res, 'PUT with a string description', [200]);
});

t.test('add_role_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools (roles.ts:L144-L148)', async (t) => {
  const res = await mcp.post('/api/v1/security/roles/mcp_plain/members', ['mcp-alice', 'mcp-bob']);
  t.ok(res.status < 300, `POST members answered ${res.status}: ${res.raw.slice(0, 200)}`);
  if (res.raw) t.equal(res.contentType, 'application/json', 'a body, when any, is JSON');
});

t.test('list_role_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools (roles.ts:L144-L148)', async (t) => {
  const res = await mcp.get('/api/v1/security/roles/mcp_plain/members');
  expectOk(t, res, 'GET members', [200]);
  t.ok(JSON.stringify(res.body).includes('mcp-alice') && JSON.stringify(res.body).includes('mcp-bob'), `both members are listed: ${res.raw}`);
});

t.test('remove_role_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools deleteWithBody (roles.ts:L144-L148)', async (t) => {
  const res = await mcp.deleteWithBody('/api/v1/security/roles/mcp_plain/members', ['mcp-bob']);
  t.ok(res.status < 300, `DELETE members answered ${res.status}: ${res.raw.slice(0, 200)}`);
  const left = await mcp.get('/api/v1/security/roles/mcp_plain/members');
  t.ok(JSON.stringify(left.body).includes('mcp-alice') && !JSON.stringify(left.body).includes('mcp-bob'), `only mcp-alice is left: ${left.raw}`);
});

t.test('delete_role — horizon-mcp src/tools/config/roles.ts:L27-L37,L136-L142', async (t) => {
  deleted(t, (await mcp.delete(itemPath(ROLES.routeItem, 'mcp_plain'))).status);
  expectProblem(t, await mcp.get(itemPath(ROLES.routeItem, 'mcp_plain')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(ROLES.routeItem, 'mcp_plain')), 'a second delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// teams.ts — SPEC: /api/v1/security/teams, strip [_id, scim], PUT on the collection; members; switch_team.
// ---------------------------------------------------------------------------------------------------------
const TEAMS = { routeCollection: '/api/v1/security/teams', routeItem: '/api/v1/security/teams/{name}', stripFields: ['_id', 'scim'] } as const;

t.test('create_team — horizon-mcp src/tools/config/teams.ts:L34-L44,L84-L113,L139-L146', async (t) => {
  const minimal = await mcp.post('/api/v1/security/teams', { name: 'mcp_min', contact: 'min@example.com', displayName: [{ lang: 'en', value: 'Min' }] });
  expectOk(t, minimal, 'POST with name, contact and displayName');
  expectProblem(t, await mcp.post('/api/v1/security/teams', { name: 'mcp_min' }), 'the same team twice', { status: [400, 409], suffix: '004' });
});

t.test('list_teams — horizon-mcp src/tools/config/teams.ts:L34-L44,L134-L137', async (t) => {
  const res = await mcp.get('/api/v1/security/teams');
  expectOk(t, res, 'GET /api/v1/security/teams', [200]);
  t.ok(normalizeItems(res.body).some((team) => team.name === 'mcp_min'));
});

t.test('get_team — horizon-mcp src/tools/config/teams.ts:L34-L44,L134-L137', async (t) => {
  const res = await mcp.get(itemPath(TEAMS.routeItem, 'mcp_min'));
  expectOk(t, res, 'GET one team', [200]);
  t.match(res.body, { name: 'mcp_min', contact: 'min@example.com', displayName: [{ lang: 'en', value: 'Min' }] });
  expectProblem(t, await mcp.get(itemPath(TEAMS.routeItem, 'nope')), 'GET of an unknown team', { status: 404, suffix: '003' });
});

t.test('add_team_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools (teams.ts:L166-L170)', async (t) => {
  const res = await mcp.post('/api/v1/security/teams/mcp_min/members', ['mcp-alice', 'mcp-bob']);
  t.ok(res.status < 300, `POST members answered ${res.status}: ${res.raw.slice(0, 200)}`);
});

t.test('list_team_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools (teams.ts:L166-L170)', async (t) => {
  const res = await mcp.get('/api/v1/security/teams/mcp_min/members');
  expectOk(t, res, 'GET members', [200]);
  t.ok(JSON.stringify(res.body).includes('mcp-alice') && JSON.stringify(res.body).includes('mcp-bob'), `both members are listed: ${res.raw}`);
});

t.test('remove_team_members — horizon-mcp src/tools/config/_scaffold.ts registerMembershipTools deleteWithBody (teams.ts:L166-L170)', async (t) => {
  const res = await mcp.deleteWithBody('/api/v1/security/teams/mcp_min/members', ['mcp-bob']);
  t.ok(res.status < 300, `DELETE members answered ${res.status}: ${res.raw.slice(0, 200)}`);
  const left = await mcp.get('/api/v1/security/teams/mcp_min/members');
  t.ok(JSON.stringify(left.body).includes('mcp-alice') && !JSON.stringify(left.body).includes('mcp-bob'), `only mcp-alice is left: ${left.raw}`);
});

t.test('switch_team — horizon-mcp src/tools/config/teams.ts:L172-L227', async (t) => {
  // PATCH /api/v1/security/teams/{previousTeam}/{newTeam} with the JSON body {}.
  const target = await mcp.post('/api/v1/security/teams', { name: 'mcp_new-home', contact: 'home@example.com' });
  expectOk(t, target, 'the team to switch to');
  const res = await mcp.patch('/api/v1/security/teams/mcp_min/mcp_new-home', {});
  t.ok(res.status < 300, `PATCH answered ${res.status}: ${res.raw.slice(0, 300)}`);
  if (res.raw) t.equal(res.contentType, 'application/json');
  const members = await mcp.get('/api/v1/security/teams/mcp_new-home/members');
  t.ok(JSON.stringify(members.body).includes('mcp-alice'), `the members moved to the new team: ${members.raw}`);
});

t.test('delete_team — horizon-mcp src/tools/config/teams.ts:L34-L44,L157-L164', async (t) => {
  deleted(t, (await mcp.delete(itemPath(TEAMS.routeItem, 'mcp_new-home'))).status);
  expectProblem(t, await mcp.get(itemPath(TEAMS.routeItem, 'mcp_new-home')), 'GET after the delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// password-policies.ts — SPEC: /api/v1/security/passwordpolicies, strip [_id], PUT on the collection.
// ---------------------------------------------------------------------------------------------------------
const POLICIES = { routeCollection: '/api/v1/security/passwordpolicies', routeItem: '/api/v1/security/passwordpolicies/{name}', stripFields: ['_id'] } as const;

t.test('create_password_policy — horizon-mcp src/tools/config/password-policies.ts:L24-L34,L85-L116,L135-L144,L164', async (t) => {
  const body = { name: 'mcp-p12', minChar: 10, maxChar: 32, minUpChar: 1, minLoChar: 1, minDiChar: 1, spChar: '+-._', minSpChar: 1 };
  const res = await mcp.post('/api/v1/security/passwordpolicies', body);
  expectOk(t, res, 'POST /api/v1/security/passwordpolicies');
  t.match(res.body, body);
  const unbounded = await mcp.post('/api/v1/security/passwordpolicies', { name: 'mcp-long', minChar: 16, minLoChar: 1 });
  expectOk(t, unbounded, 'POST without maxChar (unbounded length)');
  expectProblem(t, await mcp.post('/api/v1/security/passwordpolicies', body), 'the same policy twice', { status: [400, 409], suffix: '004' });
  expectProblem(t, await mcp.post('/api/v1/security/passwordpolicies', { name: 'mcp-bad', minChar: 1, maxChar: 2, minUpChar: 2, minLoChar: 2 }), 'classes above maxChar', { status: 400, suffix: '002' });
});

t.test('list_password_policies — horizon-mcp src/tools/config/password-policies.ts:L24-L34,L159-L162', async (t) => {
  const res = await mcp.get('/api/v1/security/passwordpolicies');
  expectOk(t, res, 'GET /api/v1/security/passwordpolicies', [200]);
  t.ok(normalizeItems(res.body).some((p) => p.name === 'mcp-p12'));
});

t.test('get_password_policy — horizon-mcp src/tools/config/password-policies.ts:L24-L34,L159-L162', async (t) => {
  const res = await mcp.get(itemPath(POLICIES.routeItem, 'mcp-p12'));
  expectOk(t, res, 'GET one policy', [200]);
  t.match(res.body, { name: 'mcp-p12', minChar: 10, maxChar: 32 });
  expectProblem(t, await mcp.get(itemPath(POLICIES.routeItem, 'nope')), 'GET of an unknown policy', { status: 404, suffix: '003' });
});

t.test('update_password_policy — horizon-mcp src/tools/config/password-policies.ts:L24-L34,L118-L133,L146-L153,L166', async (t) => {
  const { res } = await getStripMergePut(t, mcp, POLICIES, 'mcp-p12', { minChar: 12 });
  expectOk(t, res, 'PUT /api/v1/security/passwordpolicies', [200]);
  t.match(res.body, { name: 'mcp-p12', minChar: 12, maxChar: 32, spChar: '+-._' });
  // clear_fields: ["maxChar"] sends maxChar: null (unbounded).
  const cleared = await getStripMergePut(t, mcp, POLICIES, 'mcp-p12', { maxChar: null });
  expectOk(t, cleared.res, 'PUT with maxChar cleared', [200]);
});

t.test('delete_password_policy — horizon-mcp src/tools/config/password-policies.ts:L24-L34,L168-L175', async (t) => {
  deleted(t, (await mcp.delete(itemPath(POLICIES.routeItem, 'mcp-long'))).status);
  expectProblem(t, await mcp.get(itemPath(POLICIES.routeItem, 'mcp-long')), 'GET after the delete', { status: 404, suffix: '003' });
});

// ---------------------------------------------------------------------------------------------------------
// identity-providers.ts — read-only: list / get on /api/v1/security/identity/providers.
// ---------------------------------------------------------------------------------------------------------
t.test('list_identity_providers — horizon-mcp src/tools/config/identity-providers.ts:L18-L28,L34-L43', async (t) => {
  const res = await mcp.get('/api/v1/security/identity/providers');
  expectOk(t, res, 'GET /api/v1/security/identity/providers', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.length >= 1, 'the local provider is listed');
  for (const item of items) t.type(item.name, 'string');
});

t.test('get_identity_provider — horizon-mcp src/tools/config/identity-providers.ts:L18-L28,L34-L43', async (t) => {
  const list = normalizeItems((await mcp.get('/api/v1/security/identity/providers')).body);
  const name = String(list[0]?.name);
  const res = await mcp.get(itemPath('/api/v1/security/identity/providers/{name}', name));
  expectOk(t, res, 'GET one provider', [200]);
  t.match(res.body, { name });
  expectProblem(t, await mcp.get(itemPath('/api/v1/security/identity/providers/{name}', 'nope')), 'GET of an unknown provider', { status: 404, suffix: '003' });
});
