/**
 * Provisioning sequences as Entra ID and Okta send them, with their known deviations from RFC 7644:
 * capitalised `op` values, PATCH values without `path` (a map of attribute paths), boolean strings for
 * `active`, `emails[type eq "work"].value` paths for values that do not exist yet, and Okta's PUT full replace
 * and `members[value eq "…"]` removals. Checked on the principal information and the team members.
 */
import t from 'tap';
import { createProfile, ENTERPRISE, members, PATCH_OP, principalInfo, scimClient, scimKernel, USER } from './helpers.js';

const TOKEN = 'entra-secret-token-9f8e7d6c';

t.test('Entra ID: look up, create, update, disable, group membership added and removed', async (t) => {
  const { kernel, admin } = await scimKernel(t);
  t.equal((await admin('POST', '/api/v1/security/teams/', { name: 'pki-operators' })).statusCode, 201);
  await createProfile(admin, 'entra', TOKEN);
  const scim = scimClient(kernel, 'entra', TOKEN);
  // Entra sends application/json as often as application/scim+json.
  const json = (method: 'PATCH' | 'POST', path: string, payload: unknown) => scim(method, path, payload, { 'content-type': 'application/json' });

  const lookup = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "alice@contoso.com"')}`);
  t.equal(lookup.statusCode, 200);
  t.same(lookup.json().Resources, []);
  t.equal(lookup.json().totalResults, 0);

  const created = await json('POST', '/Users', {
    schemas: [USER, ENTERPRISE],
    externalId: '4f0c8a8e-alice',
    userName: 'alice@contoso.com',
    active: true,
    displayName: 'Alice Archer',
    emails: [{ primary: true, type: 'work', value: 'alice@contoso.com' }],
    meta: { resourceType: 'User' },
    name: { formatted: 'Alice Archer', familyName: 'Archer', givenName: 'Alice' },
    roles: [],
    [ENTERPRISE]: { department: 'PKI' },
  });
  t.equal(created.statusCode, 201, created.body);
  const alice = created.json();
  t.match(await principalInfo(admin, 'alice@contoso.com'), { identifier: 'alice@contoso.com', name: 'Alice Archer', email: 'alice@contoso.com', enabled: true });
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "alice@contoso.com"')}`)).json().totalResults, 1, 'found on the next lookup');

  const updated = await json('PATCH', `/Users/${alice.id}`, {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'alice.archer@contoso.com' },
      { op: 'Replace', value: { displayName: 'Alice B. Archer', 'name.givenName': 'Alicia', [`${ENTERPRISE}:department`]: 'Security' } },
      { op: 'Add', path: 'phoneNumbers[type eq "mobile"].value', value: '+33 6 12 34 56 78' },
    ],
  });
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), {
    displayName: 'Alice B. Archer',
    name: { givenName: 'Alicia', familyName: 'Archer' },
    emails: [{ type: 'work', value: 'alice.archer@contoso.com', primary: true }],
    phoneNumbers: [{ type: 'mobile', value: '+33 6 12 34 56 78' }],
    [ENTERPRISE]: { department: 'Security' },
  });
  t.match(await principalInfo(admin, 'alice@contoso.com'), { name: 'Alice B. Archer', email: 'alice.archer@contoso.com', enabled: true });

  // Entra's group lookup, then its membership add.
  const group = await scim('GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "pki-operators"')}`);
  t.equal(group.statusCode, 200);
  t.equal(group.json().totalResults, 1);
  t.same(Object.keys(group.json().Resources[0]).sort(), ['displayName', 'id', 'meta', 'schemas'], 'members left out as asked');
  const add = await json('PATCH', '/Groups/pki-operators', { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ value: alice.id }] }] });
  t.equal(add.statusCode, 204, add.body);
  t.same(await members(admin, 'teams', 'pki-operators'), ['alice@contoso.com']);
  t.match(await principalInfo(admin, 'alice@contoso.com'), { teams: ['pki-operators'] });

  // Disabled with Entra's boolean string.
  const disabled = await json('PATCH', `/Users/${alice.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', value: { active: 'False' } }] });
  t.equal(disabled.statusCode, 200, disabled.body);
  t.equal(disabled.json().active, false);
  t.match(await principalInfo(admin, 'alice@contoso.com'), { enabled: false }, 'the principal is disabled');
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent('active eq false')}`)).json().totalResults, 1);

  const remove = await json('PATCH', '/Groups/pki-operators', { schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: 'members', value: [{ value: alice.id }] }] });
  t.equal(remove.statusCode, 204, remove.body);
  t.same(await members(admin, 'teams', 'pki-operators'), []);
  t.match(await principalInfo(admin, 'alice@contoso.com'), { teams: [] });

  const enabled = await json('PATCH', `/Users/${alice.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: 'True' }] });
  t.equal(enabled.json().active, true);
  t.match(await principalInfo(admin, 'alice@contoso.com'), { enabled: true });

  const codes = ((await kernel.db.knex('events').where({ principal: 'scim:entra' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);
  t.same(codes, ['SEC-PRINC-CREATED', 'SEC-PRINC-UPDATED', 'SEC-TEAM-MEMBERS-ADDED', 'SEC-PRINC-UPDATED', 'SEC-TEAM-MEMBERS-REMOVED', 'SEC-PRINC-UPDATED']);
});

t.test('Okta: PUT full replace, members replaced and removed by a value filter, groups mapped to a role by prefix', async (t) => {
  const { kernel, admin } = await scimKernel(t);
  for (const role of ['okta-admins', 'okta-readers', 'local-only']) t.equal((await admin('POST', '/api/v1/security/roles/', { name: role, permissions: [] })).statusCode, 201);
  await createProfile(admin, 'okta', TOKEN, { users: { identifier: 'externalId', name: 'name.givenFamily' }, groups: { target: 'role', prefix: 'okta-' } });
  const scim = scimClient(kernel, 'okta', TOKEN);

  const ids: string[] = [];
  for (const [userName, externalId] of [['bob@example.org', '00u1'], ['carol@example.org', '00u2']] as const) {
    const res = await scim('POST', '/Users', { schemas: [USER], userName, externalId, name: { givenName: userName.split('@')[0], familyName: 'Okta' }, active: true, password: 'never-kept-1!' });
    t.equal(res.statusCode, 201, res.body);
    t.notOk('password' in res.json(), 'the password is neither kept nor answered');
    ids.push(res.json().id);
  }
  t.match(await principalInfo(admin, '00u1'), { identifier: '00u1', name: 'bob Okta' }, 'the identifier is the externalId, the name given + family');

  const groups = (await scim('GET', '/Groups')).json();
  t.same(groups.Resources.map((g: { id: string }) => g.id), ['admins', 'readers'], 'roles with the prefix, named without it');

  // Okta's PUT: the whole user, active as it wants it.
  const put = await scim('PUT', `/Users/${ids[0]}`, { schemas: [USER], id: ids[0], userName: 'bob@example.org', externalId: '00u1', name: { givenName: 'Robert', familyName: 'Okta' }, active: false, emails: [{ value: 'bob@example.org', primary: true, type: 'work' }] });
  t.equal(put.statusCode, 200, put.body);
  t.match(await principalInfo(admin, '00u1'), { name: 'Robert Okta', email: 'bob@example.org', enabled: false });

  t.equal((await scim('PATCH', '/Groups/admins', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'members', value: ids.map((value) => ({ value })) }] })).statusCode, 204);
  t.same(await members(admin, 'roles', 'okta-admins'), ['00u1', '00u2']);
  t.match(await principalInfo(admin, '00u2'), { roles: ['okta-admins'] });
  t.equal((await scim('PATCH', '/Groups/admins', { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${ids[1]}"]` }] })).statusCode, 204);
  t.same(await members(admin, 'roles', 'okta-admins'), ['00u1']);
  t.equal((await scim('GET', '/Groups/local-only')).statusCode, 404, 'a role without the prefix is not a group');
  t.equal((await scim('PATCH', '/Groups/readers', { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { members: [{ value: ids[1] }] } }] })).statusCode, 204);
  t.same(await members(admin, 'roles', 'okta-readers'), ['00u2'], 'members replaced through a value without path');
});
