/**
 * RFC 7644's own examples replayed against a SCIM profile: create (§3.3), filter (§3.4.2.2), PATCH add,
 * remove and replace (§3.5.2.1–3, on users and on a group's members), PUT (§3.5.1) and DELETE (§3.6),
 * each checked through the platform's own API: the principal information and the team and role members.
 */
import t from 'tap';
import { createProfile, ENTERPRISE, GROUP, LIST, members, PATCH_OP, principalInfo, scimClient, scimKernel, SCIM_TYPE, USER } from './helpers.js';

const TOKEN = 'rfc-token-0123456789abcdef';

t.test('RFC 7644 examples, checked on the principals, teams and roles they change', async (t) => {
  const { kernel, admin } = await scimKernel(t);
  for (const team of ['Tour Guides', 'auditors']) t.equal((await admin('POST', '/api/v1/security/teams/', { name: team })).statusCode, 201);
  t.equal((await admin('POST', '/api/v1/security/roles/', { name: 'employee', permissions: [{ value: 'search:certificates' }] })).statusCode, 201);
  await createProfile(admin, 'directory', TOKEN, { defaultRoles: ['employee'] });
  const scim = scimClient(kernel, 'directory', TOKEN);

  // §3.3: creating a resource.
  const created = await scim('POST', '/Users', {
    schemas: [USER],
    userName: 'bjensen',
    externalId: 'bjensen',
    name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara' },
  });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], SCIM_TYPE);
  const user = created.json();
  t.match(user, {
    schemas: [USER],
    id: /^[0-9a-f-]{36}$/,
    externalId: 'bjensen',
    userName: 'bjensen',
    name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara' },
    active: true,
    meta: { resourceType: 'User', location: `http://localhost/security/scim/directory/Users/${user.id}` },
  });
  t.equal(created.headers.location, user.meta.location, 'Location names the new resource');
  t.equal(user.meta.created, user.meta.lastModified);
  t.match(await principalInfo(admin, 'bjensen'), { identifier: 'bjensen', name: 'Ms. Barbara J Jensen III', email: null, enabled: true, roles: ['employee'], teams: [] }, 'a principal with the default role');
  t.same(await members(admin, 'roles', 'employee'), ['bjensen']);

  // §3.4.2.2: filtering (userName is case-insensitive).
  const second = await scim('POST', '/Users', { schemas: [USER], userName: 'jsmith', name: { givenName: 'James', familyName: 'Smith' }, emails: [{ value: 'jsmith@example.com', type: 'work' }] });
  t.equal(second.statusCode, 201, second.body);
  const jsmith = second.json();
  const filtered = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "bjensen"')}`);
  t.equal(filtered.statusCode, 200);
  t.match(filtered.json(), { schemas: [LIST], totalResults: 1, itemsPerPage: 1, startIndex: 1, Resources: [{ id: user.id, userName: 'bjensen' }] });
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "BJENSEN"')}`)).json().totalResults, 1, 'userName compares case-insensitively');
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody"')}`)).json().totalResults, 0);
  const fromRfc: [string, string[]][] = [
    ['name.familyName co "ens"', ['bjensen']],
    ['userName sw "J"', ['jsmith']],
    ['title pr', []],
    ['externalId pr and not (userName eq "jsmith")', ['bjensen']],
    ['emails[type eq "work" and value co "@example.com"]', ['jsmith']],
    ['emails co "example.com" or userName ew "sen"', ['bjensen', 'jsmith']],
    [`meta.lastModified ge "${user.meta.lastModified}"`, ['bjensen', 'jsmith']],
    ['meta.lastModified lt "2000-01-01T00:00:00Z"', []],
    ['userName gt "c"', ['jsmith']],
    ['userName le "BJENSEN"', ['bjensen']],
    ['externalId eq "BJENSEN"', []],
    ['externalId eq "bjensen"', ['bjensen']],
    [`urn:ietf:params:scim:schemas:core:2.0:User:userName ne "bjensen"`, ['jsmith']],
  ];
  for (const [filter, expected] of fromRfc) {
    const res = await scim('GET', `/Users?filter=${encodeURIComponent(filter)}&sortBy=userName`);
    t.equal(res.statusCode, 200, `${filter}: ${res.body}`);
    t.same(res.json().Resources.map((r: { userName: string }) => r.userName), expected, filter);
  }
  // §3.4.2.4 paging, §3.4.2.3 sorting.
  const paged = (await scim('GET', '/Users?sortBy=userName&sortOrder=descending&startIndex=2&count=1')).json();
  t.match(paged, { totalResults: 2, itemsPerPage: 1, startIndex: 2 });
  t.same(paged.Resources.map((r: { userName: string }) => r.userName), ['bjensen'], 'the second of the descending order');
  t.same((await scim('GET', '/Users?count=0')).json(), { schemas: [LIST], totalResults: 2, itemsPerPage: 0, startIndex: 1, Resources: [] });

  // §3.5.2.1: add, without a path (nickname in another case than the schema's nickName).
  const added = await scim('PATCH', `/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', value: { emails: [{ value: 'babs@jensen.org', type: 'home' }], nickname: 'Babs' } }],
  });
  t.equal(added.statusCode, 200, added.body);
  t.match(added.json(), { nickName: 'Babs', emails: [{ value: 'babs@jensen.org', type: 'home' }] });
  t.match(await principalInfo(admin, 'bjensen'), { email: 'babs@jensen.org' }, 'its only email became the principal email');

  // §3.5.2.1: add members to a group.
  const groups = (await scim('GET', '/Groups')).json();
  t.same(groups.Resources.map((g: { id: string }) => g.id), ['auditors', 'Tour Guides'], 'the teams are the groups');
  const addMembers = await scim('PATCH', '/Groups/Tour%20Guides', {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: 'members', value: [{ display: 'Babs Jensen', $ref: user.meta.location, value: user.id }] }],
  });
  t.equal(addMembers.statusCode, 204, addMembers.body);
  t.same(await members(admin, 'teams', 'Tour Guides'), ['bjensen']);
  t.match(await principalInfo(admin, 'bjensen'), { teams: ['Tour Guides'] });
  t.match((await admin('GET', '/api/v1/security/teams/Tour%20Guides')).json(), { externallyManaged: true }, 'a team SCIM provisions is externally managed');
  t.match((await scim('GET', '/Groups/Tour%20Guides')).json(), { schemas: [GROUP], id: 'Tour Guides', displayName: 'Tour Guides', members: [{ value: user.id, display: 'bjensen' }] });
  t.match((await scim('GET', `/Users/${user.id}`)).json(), { groups: [{ value: 'Tour Guides', display: 'Tour Guides' }] }, 'the user lists its group');

  // §3.5.2.2: remove one member by a value filter; then all members.
  await scim('PATCH', '/Groups/Tour%20Guides', { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: jsmith.id }] }] });
  t.same(await members(admin, 'teams', 'Tour Guides'), ['bjensen', 'jsmith']);
  const removeOne = await scim('PATCH', '/Groups/Tour%20Guides', { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }] });
  t.equal(removeOne.statusCode, 204, removeOne.body);
  t.same(await members(admin, 'teams', 'Tour Guides'), ['jsmith']);
  t.equal((await scim('PATCH', '/Groups/Tour%20Guides', { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'members' }] })).statusCode, 204);
  t.same(await members(admin, 'teams', 'Tour Guides'), []);
  // §3.5.2.2: remove then add in one request; §3.5.2.3: replace the members.
  await scim('PATCH', '/Groups/Tour%20Guides', { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }] }] });
  const swap = await scim('PATCH', '/Groups/Tour%20Guides', {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'remove', path: `members[value eq "${user.id}"]` },
      { op: 'add', path: 'members', value: [{ display: 'James Smith', value: jsmith.id }] },
    ],
  });
  t.equal(swap.statusCode, 204, swap.body);
  t.same(await members(admin, 'teams', 'Tour Guides'), ['jsmith']);
  await scim('PATCH', '/Groups/Tour%20Guides', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'members', value: [{ value: user.id }, { value: jsmith.id }] }] });
  t.same(await members(admin, 'teams', 'Tour Guides'), ['bjensen', 'jsmith']);

  // §3.5.2.2: remove the work emails ending in example.com (there are none yet: nothing to remove).
  await scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'emails', value: [{ value: 'bjensen@example.com', type: 'work', primary: true }] }] });
  t.match(await principalInfo(admin, 'bjensen'), { email: 'bjensen@example.com' }, 'the primary email is the principal email');
  const removeWork = await scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'emails[type eq "work" and value ew "example.com"]' }] });
  t.equal(removeWork.statusCode, 200, removeWork.body);
  t.same(removeWork.json().emails, [{ value: 'babs@jensen.org', type: 'home' }]);
  t.match(await principalInfo(admin, 'bjensen'), { email: 'babs@jensen.org' });

  // §3.5.2.3: replace a whole address selected by a filter, then one of its sub-attributes.
  await scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'addresses', value: [{ type: 'work', streetAddress: '100 Old Street' }, { type: 'home', locality: 'Paris' }] }] });
  const address = {
    type: 'work',
    streetAddress: '911 Universal City Plaza',
    locality: 'Hollywood',
    region: 'CA',
    postalCode: '91608',
    country: 'US',
    formatted: '911 Universal City Plaza\nHollywood, CA 91608 US',
    primary: true,
  };
  const replaced = await scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'addresses[type eq "work"]', value: address }] });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.same(replaced.json().addresses, [address, { type: 'home', locality: 'Paris' }]);
  const street = await scim('PATCH', `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'addresses[type eq "work"].streetAddress', value: '1010 Broadway Ave' }] });
  t.equal(street.json().addresses[0].streetAddress, '1010 Broadway Ave');
  t.equal(street.json().addresses[0].locality, 'Hollywood', 'the other sub-attributes stay');
  // §3.5.2.3: replace several attributes without a path.
  const many = await scim('PATCH', `/Users/${user.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'replace', value: { emails: [{ value: 'bjensen@example.com', type: 'work', primary: true }, { value: 'babs@jensen.org', type: 'home' }], nickname: 'Barbie' } }],
  });
  t.equal(many.statusCode, 200, many.body);
  t.match(many.json(), { nickName: 'Barbie', emails: [{ value: 'bjensen@example.com', primary: true }, { value: 'babs@jensen.org' }] });
  t.match(await principalInfo(admin, 'bjensen'), { email: 'bjensen@example.com' });

  // §3.5.1: PUT replaces every attribute (nickName and addresses left out are gone).
  const put = await scim('PUT', `/Users/${user.id}`, {
    schemas: [USER, ENTERPRISE],
    id: user.id,
    userName: 'bjensen',
    externalId: 'bjensen',
    name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara', middleName: 'Jane' },
    roles: [],
    emails: [{ value: 'bjensen@example.com' }, { value: 'babs@jensen.org' }],
    [ENTERPRISE]: { employeeNumber: '701984', department: 'Tour Operations' },
  });
  t.equal(put.statusCode, 200, put.body);
  const after = put.json();
  t.notOk('nickName' in after, 'nickName cleared');
  t.notOk('addresses' in after, 'addresses cleared');
  t.same(after.schemas, [USER, ENTERPRISE]);
  t.match(after, { name: { middleName: 'Jane' }, [ENTERPRISE]: { employeeNumber: '701984' }, active: true });
  t.ok(Date.parse(after.meta.lastModified) >= Date.parse(user.meta.created));
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent(`${ENTERPRISE}:department eq "tour operations"`)}`)).json().totalResults, 1, 'an extension attribute filters');

  // §3.6: DELETE: the principal information, the default role and the team membership granted by SCIM go;
  // a membership the platform granted by hand stays.
  t.equal((await admin('POST', '/api/v1/security/teams/auditors/members', { identifier: 'bjensen' })).statusCode, 200);
  const deleted = await scim('DELETE', `/Users/${user.id}`);
  t.equal(deleted.statusCode, 204, deleted.body);
  t.equal(await principalInfo(admin, 'bjensen'), null, 'principal information removed');
  t.same(await members(admin, 'roles', 'employee'), ['jsmith']);
  t.same(await members(admin, 'teams', 'Tour Guides'), ['jsmith']);
  t.same(await members(admin, 'teams', 'auditors'), ['bjensen'], 'what SCIM did not grant stays');
  const gone = await scim('GET', `/Users/${user.id}`);
  t.equal(gone.statusCode, 404);
  t.match(gone.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
  t.equal((await scim('DELETE', `/Users/${user.id}`)).statusCode, 404, 'a second DELETE finds nothing');
  t.equal((await scim('GET', '/Users')).json().totalResults, 1);

  // Every change left an event naming the profile.
  const events = (await kernel.db.knex('events').where({ module: 'security', principal: 'scim:directory' }).orderBy('seq').select('code', 'object_id', 'payload')) as { code: string; object_id: string; payload: string }[];
  const codes = events.map((e) => `${e.code} ${e.object_id}`);
  t.same(codes.slice(0, 2), ['SEC-PRINC-CREATED bjensen', 'SEC-PRINC-CREATED jsmith']);
  t.ok(codes.includes('SEC-TEAM-MEMBERS-ADDED Tour Guides') && codes.includes('SEC-TEAM-MEMBERS-REMOVED Tour Guides'));
  t.equal(codes.at(-1), 'SEC-PRINC-DELETED bjensen');
  t.match(JSON.parse(events.at(-1)!.payload), { via: 'scim', profile: 'directory', userName: 'bjensen', roles: ['employee'], teams: ['Tour Guides'] });
});

t.test('discovery: ServiceProviderConfig, ResourceTypes, Schemas', async (t) => {
  const { kernel, admin } = await scimKernel(t);
  await createProfile(admin, 'directory', TOKEN);
  const scim = scimClient(kernel, 'directory', TOKEN);
  const spc = await scim('GET', '/ServiceProviderConfig');
  t.equal(spc.statusCode, 200);
  t.equal(spc.headers['content-type'], SCIM_TYPE);
  t.match(spc.json(), { patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 200 }, sort: { supported: true }, authenticationSchemes: [{ type: 'oauthbearertoken' }] });
  t.same((await scim('GET', '/ResourceTypes')).json().Resources.map((r: { id: string }) => r.id), ['User', 'Group']);
  const schemas = (await scim('GET', '/Schemas')).json();
  t.same(schemas.Resources.map((s: { id: string }) => s.id), [USER, ENTERPRISE, GROUP]);
  const one = await scim('GET', `/Schemas/${USER}`);
  t.equal(one.statusCode, 200);
  t.match(one.json().attributes.find((a: { name: string }) => a.name === 'userName'), { type: 'string', required: true, uniqueness: 'server' });
  t.equal((await scim('GET', '/Schemas/urn:example:unknown')).statusCode, 404);

  // count is capped at filter.maxResults.
  for (let i = 0; i < 3; i++) await scim('POST', '/Users', { schemas: [USER], userName: `u${i}` });
  t.match((await scim('GET', '/Users?count=100000&startIndex=-4')).json(), { totalResults: 3, itemsPerPage: 3, startIndex: 1 });
});
