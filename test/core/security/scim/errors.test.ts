/**
 * What a SCIM client gets wrong, and what a caller without the right to be there tries: each answered with
 * the SCIM error body (`status` as a string, `scimType`) and its status, never a 500 or a stack, and nothing
 * written. Also the hosts: SCIM answers only on a host allowed capability `scim`; and the profiles collection's
 * own access rules.
 */
import t from 'tap';
import { createPrincipal, caller } from '../../../helpers/security.js';
import { createProfile, ERROR, PATCH_OP, PROFILES, principalInfo, scimClient, scimKernel, SCIM_TYPE, USER } from './helpers.js';

const TOKEN_A = 'profile-a-token-1111111111';
const TOKEN_B = 'profile-b-token-2222222222';
// The configuration API on localhost; SCIM on its own host only.
const ENDPOINTS = [
  { host: 'localhost', configuration: true, events: true, webra: true },
  { host: 'scim.example', scim: true },
];

t.test('SCIM errors, isolation between profiles, hosts and the profiles collection', async (t) => {
  const { kernel, admin } = await scimKernel(t, { certwright: { endpoints: ENDPOINTS as never } });
  t.equal((await admin('POST', '/api/v1/security/teams/', { name: 'ops' })).statusCode, 201);
  await createProfile(admin, 'a', TOKEN_A);
  await createProfile(admin, 'b', TOKEN_B);
  const a = scimClient(kernel, 'a', TOKEN_A, 'scim.example');
  const b = scimClient(kernel, 'b', TOKEN_B, 'scim.example');
  const created = await a('POST', '/Users', { schemas: [USER], userName: 'dana', emails: [{ value: 'dana@example.com' }] });
  t.equal(created.statusCode, 201, created.body);
  const dana = created.json();

  const expectError = (name: string, res: { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string }, status: number, scimType?: string) => {
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], SCIM_TYPE, `${name}: a SCIM error`);
    const body = res.json() as Record<string, unknown>;
    t.same(body.schemas, [ERROR], name);
    t.equal(body.status, String(status), `${name}: status as a string`);
    if (scimType) t.equal(body.scimType, scimType, `${name}: ${scimType}`);
    t.notMatch(res.body, /at .*\.ts:\d+|node_modules/, `${name}: no stack`);
  };

  // Authentication.
  expectError('no token', await scimClient(kernel, 'a', null, 'scim.example')('GET', '/Users'), 401);
  t.equal((await scimClient(kernel, 'a', null, 'scim.example')('GET', '/Users')).headers['www-authenticate'], 'Bearer realm="scim"');
  expectError('wrong token', await scimClient(kernel, 'a', 'not-the-token', 'scim.example')('GET', '/Users'), 401);
  expectError('basic instead of bearer', await scimClient(kernel, 'a', null, 'scim.example')('GET', '/Users', undefined, { authorization: `Basic ${Buffer.from(`a:${TOKEN_A}`).toString('base64')}` }), 401);
  expectError("another profile's token", await scimClient(kernel, 'a', TOKEN_B, 'scim.example')('GET', '/Users'), 401);
  expectError('unknown profile', await scimClient(kernel, 'nope', TOKEN_A, 'scim.example')('GET', '/Users'), 404);
  expectError('unauthenticated POST', await scimClient(kernel, 'a', null, 'scim.example')('POST', '/Users', { schemas: [USER], userName: 'mallory' }), 401);

  // A profile sees and changes its own users only.
  t.equal((await b('GET', '/Users')).json().totalResults, 0, "b does not list a's users");
  t.equal((await b('GET', `/Users?filter=${encodeURIComponent('userName eq "dana"')}`)).json().totalResults, 0);
  expectError("b reads a's user", await b('GET', `/Users/${dana.id}`), 404);
  expectError("b patches a's user", await b('PATCH', `/Users/${dana.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] }), 404);
  expectError("b deletes a's user", await b('DELETE', `/Users/${dana.id}`), 404);
  expectError("b adds a's user to a group", await b('PATCH', '/Groups/ops', { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: dana.id }] }] }), 400, 'invalidValue');
  expectError('b takes the same principal', await b('POST', '/Users', { schemas: [USER], userName: 'dana' }), 409, 'uniqueness');
  t.match(await principalInfo(admin, 'dana'), { enabled: true, teams: [] }, "a's user untouched");

  // Bodies.
  expectError('wrong content type', await a('POST', '/Users', 'userName=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
  expectError('malformed JSON', await a('POST', '/Users', '{"schemas": ['), 400, 'invalidSyntax');
  expectError('not an object', await a('POST', '/Users', '[1, 2]'), 400, 'invalidSyntax');
  expectError('prototype key', await a('POST', '/Users', `{"schemas": ["${USER}"], "userName": "p", "__proto__": {"admin": true}}`), 400, 'invalidSyntax');
  expectError('oversized body', await a('POST', '/Users', JSON.stringify({ schemas: [USER], userName: 'big', displayName: 'x'.repeat(600 * 1024) })), 413);
  expectError('unknown schema', await a('POST', '/Users', { schemas: [USER, 'urn:example:custom:2.0:User'], userName: 'eve' }), 400, 'invalidValue');
  expectError('no userName', await a('POST', '/Users', { schemas: [USER], displayName: 'Nobody' }), 400, 'invalidValue');
  expectError('wrong type', await a('POST', '/Users', { schemas: [USER], userName: 'frank', active: 'perhaps' }), 400, 'invalidValue');
  expectError('duplicate userName', await a('POST', '/Users', { schemas: [USER], userName: 'DANA' }), 409, 'uniqueness');
  await createPrincipal(kernel, 'grace');
  expectError('a principal of the platform', await a('POST', '/Users', { schemas: [USER], userName: 'grace' }), 409, 'uniqueness');
  t.equal((await a('GET', '/Users')).json().totalResults, 1, 'no user written by the refused requests');
  t.equal(await principalInfo(admin, 'eve'), null);
  t.equal(await principalInfo(admin, 'DANA'), null);

  // Filters and list parameters.
  for (const filter of ['userName eq', 'userName eq "a" junk', '(userName eq "a"', 'userName zz "a"', 'name eq "x"', 'active gt true']) {
    expectError(`bad filter ${filter}`, await a('GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
  }
  expectError('sortOrder', await a('GET', '/Users?sortOrder=sideways'), 400, 'invalidValue');
  expectError('startIndex not a number', await a('GET', '/Users?startIndex=abc'), 400, 'invalidValue');

  // PATCH.
  const patch = (Operations: unknown) => a('PATCH', `/Users/${dana.id}`, { schemas: [PATCH_OP], Operations });
  expectError('not a PatchOp', await a('PATCH', `/Users/${dana.id}`, { schemas: [USER], Operations: [] }), 400, 'invalidSyntax');
  expectError('unknown op', await patch([{ op: 'merge', path: 'title', value: 'x' }]), 400, 'invalidSyntax');
  expectError('unknown attribute', await patch([{ op: 'replace', path: 'favouriteColour', value: 'blue' }]), 400, 'invalidPath');
  expectError('bad value filter', await patch([{ op: 'replace', path: 'emails[type eq].value', value: 'x' }]), 400, 'invalidPath');
  expectError('remove without path', await patch([{ op: 'remove' }]), 400, 'noTarget');
  expectError('no match for a non-equality filter', await patch([{ op: 'replace', path: 'emails[value co "nowhere"].type', value: 'home' }]), 400, 'noTarget');
  expectError('read-only id', await patch([{ op: 'replace', path: 'id', value: 'mine' }]), 400, 'mutability');
  expectError('required userName', await patch([{ op: 'remove', path: 'userName' }]), 400, 'mutability');
  // A valid first operation and a failing second: nothing applied.
  expectError('half-valid', await patch([{ op: 'replace', path: 'displayName', value: 'Dana Half' }, { op: 'add', path: 'nope', value: 1 }]), 400, 'invalidPath');
  t.match(await principalInfo(admin, 'dana'), { name: null }, 'the first operation was not applied');
  t.notOk('displayName' in (await a('GET', `/Users/${dana.id}`)).json());
  expectError('rename a group', await a('PATCH', '/Groups/ops', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'ops2' }] }), 400, 'mutability');
  expectError('unknown group', await a('PATCH', '/Groups/nope', { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: dana.id }] }] }), 404);
  expectError('unknown user', await a('PUT', '/Users/00000000-0000-0000-0000-000000000000', { schemas: [USER], userName: 'ghost' }), 404);

  // Hosts: a host not allowed capability scim hides every SCIM route (the platform's 404).
  const wrongHost = await scimClient(kernel, 'a', TOKEN_A, 'localhost')('GET', '/Users');
  t.equal(wrongHost.statusCode, 404);
  t.equal(wrongHost.json().error, 'HTTP-001', 'the same 404 as a route that does not exist');
  t.equal((await scimClient(kernel, 'a', TOKEN_A, 'localhost')('GET', '/ServiceProviderConfig')).statusCode, 404);
  t.equal((await a('GET', '/ServiceProviderConfig')).statusCode, 200, 'the scim host answers');
  t.equal((await kernel.app.inject({ url: PROFILES, headers: { host: 'scim.example', 'x-api-id': 'administrator', 'x-api-key': 'Test-Admin-Secret-1!' } })).statusCode, 404, 'the profiles collection is configuration, not scim');

  // The profiles collection: authenticated, configuration:scim permissions.
  const noAuth = await kernel.app.inject({ url: PROFILES, headers: { host: 'localhost' } });
  t.equal(noAuth.statusCode, 401);
  const reader = caller(kernel, (await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:scim:read' }] })).headers);
  const teamsOnly = caller(kernel, (await createPrincipal(kernel, 'teams-only', { permissions: [{ value: 'configuration:teams:write' }] })).headers);
  t.equal((await teamsOnly('GET', PROFILES)).statusCode, 403, 'another section is not enough');
  const listed = await reader('GET', PROFILES);
  t.equal(listed.statusCode, 200);
  t.same(listed.json().map((p: { name: string }) => p.name), ['a', 'b']);
  t.notMatch(listed.body, TOKEN_A, 'the token itself is never answered');
  t.equal((await reader('POST', PROFILES, { name: 'c', token: 'a-token' })).statusCode, 403, 'read is not write');
  const invalid = await admin('POST', PROFILES, { name: 'c', token: 'no-such-credential' });
  t.equal(invalid.statusCode, 400);
  t.equal(invalid.json().error, 'SCIM-002');
  t.equal((await admin('POST', '/api/v1/security/credentials/', { name: 'pw', type: 'password', login: 'x', password: { value: 'y' } })).statusCode, 201);
  t.match((await admin('POST', PROFILES, { name: 'c', token: 'pw' })).json(), { error: 'SCIM-002', message: /raw credential/ });
  t.equal((await admin('DELETE', '/api/v1/security/credentials/a-token')).statusCode, 400, "a profile's credential cannot be deleted");

  // A disabled profile answers 404; a rotated token applies at once.
  const current = (await admin('GET', `${PROFILES}a`)).json();
  t.equal((await admin('PUT', PROFILES, { ...current, enabled: false })).statusCode, 200);
  expectError('disabled profile', await a('GET', '/Users'), 404);
  t.equal((await admin('PUT', PROFILES, { ...current, enabled: true })).statusCode, 200);
  t.equal((await admin('PUT', '/api/v1/security/credentials/', { name: 'a-token', type: 'raw', secret: { value: 'rotated-token-333333' } })).statusCode, 200);
  expectError('old token after rotation', await a('GET', '/Users'), 401);
  t.equal((await scimClient(kernel, 'a', 'rotated-token-333333', 'scim.example')('GET', '/Users')).statusCode, 200);
});
