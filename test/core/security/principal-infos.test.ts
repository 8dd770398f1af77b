import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal, login, type Method } from '../../helpers/security.js';

const INFOS = '/api/v1/security/principalinfos/';
const TASKS = '/api/v1/scheduler/tasks/';

const groupsOf = async (kernel: Kernel, identifier: string) =>
  ((await kernel.db.knex('security_memberships').where({ identifier }).orderBy(['kind', 'group_name']).select('kind', 'group_name', 'manager')) as {
    kind: string;
    group_name: string;
    manager: number | boolean;
  }[]).map((m) => `${m.kind}:${m.group_name}${m.manager ? ':manager' : ''}`);

async function setup(t: Test) {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  await admin('POST', '/api/v1/security/roles/', { name: 'schedulers', permissions: [{ value: 'configuration:scheduler:read' }] });
  await admin('POST', '/api/v1/security/roles/', { name: 'auditors', permissions: [{ value: 'search:events' }] });
  for (const name of ['pki', 'web']) await admin('POST', '/api/v1/security/teams/', { name });
  return { kernel, admin };
}

t.test('principal information: create, read, replace, delete; permissions apply at once', async (t) => {
  const { kernel, admin } = await setup(t);

  // What the secret engine sends (client-compat §7): the email as `contact`, roles and teams by name.
  const created = await admin('POST', INFOS, { identifier: 'vault-app', contact: 'app@example.com', roles: ['schedulers'], teams: ['pki'] });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  t.match(created.json(), { _id: /^[0-9a-f]{24}$/, identifier: 'vault-app', name: null, email: 'app@example.com', contact: 'app@example.com', permissions: [], roles: ['schedulers'], teams: ['pki'] });
  t.same((await admin('GET', `${INFOS}vault-app`)).json(), created.json());
  t.same(await groupsOf(kernel, 'vault-app'), ['role:schedulers', 'team:pki']);

  // An existing account: its own permissions through PUT apply from the next request.
  const alice = caller(kernel, (await createPrincipal(kernel, 'alice')).headers);
  t.equal((await alice('GET', TASKS)).statusCode, 403);
  const granted = await admin('PUT', INFOS, { identifier: 'alice', name: 'Alice', email: 'alice@example.com', permissions: [{ value: 'configuration:scheduler:read' }] });
  t.equal(granted.statusCode, 200, granted.body);
  t.match(granted.json(), { identifier: 'alice', name: 'Alice', email: 'alice@example.com', permissions: [{ value: 'configuration:scheduler:read' }], roles: [], teams: [] });
  t.equal((await alice('GET', TASKS)).statusCode, 200, 'own permission applies at once');

  // Roles and teams through PUT; a team membership that stays keeps its manager flag.
  await admin('POST', '/api/v1/security/teams/pki/members', { identifier: 'alice', manager: true });
  const replaced = await admin('PUT', INFOS, { ...(granted.json() as Record<string, unknown>), permissions: null, roles: ['schedulers'], teams: ['pki', 'web'] });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.match(replaced.json(), { permissions: [], roles: ['schedulers'], teams: ['pki', 'web'] });
  t.same(await groupsOf(kernel, 'alice'), ['role:schedulers', 'team:pki:manager', 'team:web']);
  t.equal((await alice('GET', TASKS)).statusCode, 200, 'now through the role');
  const self = (await alice('GET', '/api/v1/security/principals/self')).json();
  t.same(self.roles, ['schedulers']);
  // Team names in teams, the team objects in teamInfos (whoami to a caller without the v2 SDK's Accept, 332a340).
  t.same(self.teams, ['pki', 'web']);
  t.same(self.teamInfos.map((x: { name: string; manager: boolean }) => [x.name, x.manager]), [['pki', true], ['web', false]]);

  // PUT replaces: omitted lists mean none.
  t.match((await admin('PUT', INFOS, { identifier: 'alice', email: 'alice@example.com' })).json(), { name: null, roles: [], teams: [], permissions: [] });
  t.same(await groupsOf(kernel, 'alice'), []);
  t.equal((await alice('GET', TASKS)).statusCode, 403, 'the withdrawn role applies at once');

  // Preferences belong to the principal: a PUT leaves them.
  await kernel.db.knex('security_principal_infos').where({ identifier: 'alice' }).update({ preferences: '{"lang":"fr"}' });
  await admin('PUT', INFOS, { identifier: 'alice', roles: ['auditors'] });
  t.same((await alice('GET', '/api/v1/security/principals/self')).json().preferences, { lang: 'fr' });

  t.equal((await admin('DELETE', `${INFOS}alice`)).statusCode, 204);
  t.equal((await admin('GET', `${INFOS}alice`)).json().error, 'SEC-PRINC-003');
  t.same(await groupsOf(kernel, 'alice'), [], 'its memberships are gone');
  t.same((await alice('GET', '/api/v1/security/principals/self')).json().roles, []);

  // Memberships without information (e.g. an LDAP user added to a role) are deleted too.
  await admin('POST', '/api/v1/security/roles/auditors/members', { identifier: 'ldap-bob' });
  t.equal((await admin('DELETE', `${INFOS}ldap-bob`)).statusCode, 204);
  t.same(await groupsOf(kernel, 'ldap-bob'), []);

  const codes = ((await kernel.db.knex('events').where({ object_type: 'principal' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);
  t.same(codes, ['SEC-PRINC-CREATED', 'SEC-PRINC-UPDATED', 'SEC-PRINC-UPDATED', 'SEC-PRINC-UPDATED', 'SEC-PRINC-UPDATED', 'SEC-PRINC-DELETED', 'SEC-PRINC-DELETED']);
  const first = await kernel.db.knex('events').where({ code: 'SEC-PRINC-CREATED' }).first();
  t.same(JSON.parse(first.payload), { permissions: [], roles: ['schedulers'], teams: ['pki'] });
});

t.test('bad principal information is refused with a stable code and nothing is written', async (t) => {
  const { kernel, admin } = await setup(t);
  await admin('POST', INFOS, { identifier: 'carol', roles: ['auditors'] });
  const before = {
    infos: await kernel.db.knex('security_principal_infos').orderBy('identifier').select('identifier', 'permissions', 'email'),
    memberships: await kernel.db.knex('security_memberships').orderBy(['identifier', 'group_name']),
    events: (await kernel.db.knex('events').count({ n: '*' }).first()) as { n: number },
  };

  const cases: [string, Method, string, unknown, number, string, RegExp?][] = [
    ['malformed JSON', 'POST', INFOS, '{"identifier":', 400, 'HTTP-002'],
    ['unknown field', 'POST', INFOS, { identifier: 'x', password: 'secret' }, 400, 'HTTP-003'],
    ['missing identifier', 'POST', INFOS, { roles: [] }, 400, 'HTTP-003'],
    ['bad email', 'POST', INFOS, { identifier: 'x', email: 'x-at-example' }, 400, 'HTTP-003'],
    ['bad permission', 'POST', INFOS, { identifier: 'x', permissions: [{ value: 'configuration:roles:delete' }] }, 400, 'SEC-PRINC-002', /permissions\[0\]: "configuration:roles:delete" has an unknown segment "delete"/],
    ['unknown role and team', 'POST', INFOS, { identifier: 'x', roles: ['auditors', 'wizards'], teams: ['pki', 'ghosts', 'nobody'] }, 400, 'SEC-PRINC-002', /unknown roles: wizards; unknown teams: ghosts, nobody/],
    ['email and contact differ', 'POST', INFOS, { identifier: 'x', email: 'a@example.com', contact: 'b@example.com' }, 400, 'SEC-PRINC-002'],
    ['duplicate', 'POST', INFOS, { identifier: 'carol' }, 400, 'SEC-PRINC-004', /"carol" already exists/],
    ['unknown role on update', 'PUT', INFOS, { identifier: 'carol', permissions: [{ value: '*' }], roles: ['wizards'] }, 400, 'SEC-PRINC-002', /wizards/],
    ['bad permission on update', 'PUT', INFOS, { identifier: 'carol', permissions: [{ value: 'search' }] }, 400, 'SEC-PRINC-002'],
    ['update of an unknown principal', 'PUT', INFOS, { identifier: 'nobody' }, 404, 'SEC-PRINC-003'],
    ['read of an unknown principal', 'GET', `${INFOS}nobody`, undefined, 404, 'SEC-PRINC-003'],
    ['delete of an unknown principal', 'DELETE', `${INFOS}nobody`, undefined, 404, 'SEC-PRINC-003'],
  ];
  for (const [name, method, url, payload, status, code, message] of cases) {
    const res = await admin(method, url, payload);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json', name);
    t.equal(res.json().error, code, name);
    if (message) t.match(res.json().message, message, name);
  }
  t.same(await kernel.db.knex('security_principal_infos').orderBy('identifier').select('identifier', 'permissions', 'email'), before.infos, 'no information written');
  t.same(await kernel.db.knex('security_memberships').orderBy(['identifier', 'group_name']), before.memberships, 'no membership written (the refused update rolled back)');
  t.same(await kernel.db.knex('events').count({ n: '*' }).first(), before.events, 'no event written');

  // Nulls and echoed server-owned fields are accepted.
  const tolerant = await admin('POST', INFOS, { _id: 'x', createdAt: 1, updatedAt: 2, identifier: 'dave', name: null, email: '', contact: null, permissions: null, roles: null, teams: null });
  t.equal(tolerant.statusCode, 201, tolerant.body);
  t.match(tolerant.json(), { identifier: 'dave', name: null, email: null, permissions: [], roles: [], teams: [] });
});

t.test('principal search pages with hasMore and count', async (t) => {
  const { kernel, admin } = await setup(t);
  for (let i = 1; i <= 7; i++) {
    const id = `user-${String(i).padStart(2, '0')}`;
    const res = await admin('POST', INFOS, { identifier: id, name: `User ${i}`, email: `${id}@Example.com`, roles: i % 2 === 0 ? ['auditors'] : [], teams: i <= 2 ? ['web'] : [] });
    t.equal(res.statusCode, 201, res.body);
  }
  await admin('POST', INFOS, { identifier: 'percent%_user', name: 'Literal' });
  const search = (body?: unknown) => admin('POST', `${INFOS}search`, body);

  const pages: string[][] = [];
  for (let pageIndex = 1; ; pageIndex++) {
    const res = await search({ query: 'USER-', pageIndex, pageSize: 3, withCount: true });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers['content-type'], 'application/json');
    const page = res.json() as { results: { identifier: string }[]; pageIndex: number; pageSize: number; hasMore: boolean; count: number };
    t.match(page, { pageIndex, pageSize: 3, count: 7 });
    pages.push(page.results.map((r) => r.identifier));
    if (!page.hasMore) break;
  }
  t.same(pages, [['user-01', 'user-02', 'user-03'], ['user-04', 'user-05', 'user-06'], ['user-07']], 'pages in identifier order, hasMore false on the last');

  const first = (await search({ query: 'user-02' })).json();
  t.same(first, {
    results: [{ _id: first.results[0]._id, identifier: 'user-02', name: 'User 2', email: 'user-02@Example.com', contact: 'user-02@Example.com', permissions: [], roles: ['auditors'], teams: ['web'], enabled: true, creationDate: first.results[0].creationDate }],
    pageIndex: 1,
    pageSize: 50,
    hasMore: false,
  }, 'defaults: page 1 of 50, no count unless asked');

  const ids = async (body: unknown) => ((await search(body)).json().results as { identifier: string }[]).map((r) => r.identifier);
  t.same(await ids({ query: 'example.COM', roles: ['auditors'] }), ['user-02', 'user-04', 'user-06'], 'email substring, case-insensitive, and role members');
  t.same(await ids({ teams: ['web'], roles: ['auditors'] }), ['user-02'], 'role and team criteria combine');
  t.same(await ids({ query: 'user 7' }), ['user-07'], 'name substring');
  t.same(await ids({ query: '%_' }), ['percent%_user'], '% and _ are taken literally');
  t.same(await ids({ query: null, pageSize: 2 }), ['administrator', 'percent%_user'], 'a null query is everything');
  t.same((await search()).json().results.length, 9, 'no body: everything, first page');
  t.same((await search({ pageIndex: 9, withCount: true })).json(), { results: [], pageIndex: 9, pageSize: 50, hasMore: false, count: 9 });

  for (const [name, body] of [
    ['page size above 1000', { pageSize: 1001 }],
    ['page index 0', { pageIndex: 0 }],
    ['unknown field', { sortBy: 'name' }],
  ] as const) {
    const res = await search(body);
    t.equal(res.statusCode, 400, name);
    t.equal(res.json().error, 'HTTP-003', name);
  }
});

t.test('Horizon search criteria: identifier, contact, role, team, strictSearch, sortedBy', async (t) => {
  const { admin } = await setup(t);
  await admin('POST', '/api/v1/security/roles/', { name: 'Auditors-EU', permissions: [] });
  await admin('POST', '/api/v1/security/teams/', { name: 'pki-eu' });
  const people: [string, string | null, string | null, string[], string[]][] = [
    ['Zoe', 'Zoe', 'zoe@corp.example', ['auditors'], ['pki']],
    ['adam', 'adam', 'ADAM@corp.example', ['schedulers', 'auditors'], ['web']],
    ['adam.ops', null, null, ['Auditors-EU'], ['pki-eu', 'web']],
    ['bob', 'Bob', 'bob@other.example', [], []],
    ['x_y%', null, 'lit@corp.example', ['schedulers'], []],
  ];
  for (const [identifier, name, email, roles, teams] of people) {
    const res = await admin('POST', INFOS, { identifier, name, email, roles, teams });
    t.equal(res.statusCode, 201, res.body);
  }
  const search = (body: unknown) => admin('POST', `${INFOS}search`, body);
  const ids = async (body: unknown) => {
    const res = await search(body);
    t.equal(res.statusCode, 200, res.body);
    return (res.json().results as { identifier: string }[]).map((r) => r.identifier);
  };

  t.same(await ids({ identifier: 'ADAM' }), ['adam', 'adam.ops'], 'identifier: case-insensitive substring by default');
  t.same(await ids({ identifier: 'adam', strictSearch: true }), ['adam'], 'strictSearch: the identifier exactly');
  t.same(await ids({ identifier: 'ADAM', strictSearch: true }), [], 'strictSearch is case-sensitive (identifiers are)');
  t.same(await ids({ identifier: 'adam', strictSearch: false }), ['adam', 'adam.ops']);
  t.same(await ids({ identifier: '_y%' }), ['x_y%'], '% and _ are literal');
  t.same(await ids({ contact: 'CORP.example' }), ['Zoe', 'adam', 'x_y%'], 'contact: case-insensitive substring of the email');
  t.same(await ids({ contact: 'corp', strictSearch: true }), ['Zoe', 'adam', 'x_y%'], 'strictSearch does not apply to contact (Horizon: role, identifier, team)');
  t.same(await ids({ role: 'auditors' }), ['Zoe', 'adam', 'adam.ops'], 'role: substring of a role name, case-insensitive');
  t.same(await ids({ role: 'auditors', strictSearch: true }), ['Zoe', 'adam'], 'strictSearch: the role of exactly that name');
  t.same(await ids({ role: 'Auditors', strictSearch: true }), [], 'strict role names are case-sensitive');
  t.same(await ids({ team: 'pki' }), ['Zoe', 'adam.ops']);
  t.same(await ids({ team: 'pki', strictSearch: true }), ['Zoe']);
  t.same(await ids({ identifier: 'adam', role: 'sched', team: 'web' }), ['adam'], 'criteria combine (AND)');
  t.same(await ids({ query: 'corp', role: 'schedulers', strictSearch: true }), ['adam', 'x_y%'], 'with the Certwright criteria too');
  t.same(await ids({ identifier: '', contact: null, role: '', team: null, strictSearch: null }), ['Zoe', 'adam', 'adam.ops', 'administrator', 'bob', 'x_y%'], 'null and "" are no criterion');

  // sortedBy.
  t.same(await ids({ sortedBy: [{ element: 'identifier', order: 'Desc' }] }), ['x_y%', 'bob', 'administrator', 'adam.ops', 'adam', 'Zoe']);
  t.same(await ids({ sortedBy: [{ element: 'identifier', order: 'Asc' }] }), ['Zoe', 'adam', 'adam.ops', 'administrator', 'bob', 'x_y%'], 'identifiers sort exactly (binary) on both engines');
  t.same(await ids({ sortedBy: [{ element: 'name' }] }), ['adam.ops', 'x_y%', 'adam', 'administrator', 'bob', 'Zoe'], 'names case-insensitively, no name first, ties by identifier');
  t.same(await ids({ sortedBy: [{ element: 'contact', order: 'desc' }] }), ['Zoe', 'x_y%', 'bob', 'adam', 'adam.ops', 'administrator'], 'contact sorts by the email; order in any case');
  t.same(await ids({ role: 'a', sortedBy: [{ element: 'role', order: 'Asc' }] }), ['adam.ops', 'Zoe', 'adam'], 'role ascending: by first role name (binary: "Auditors-EU" < "auditors"), ties by identifier');
  t.same(await ids({ role: 'a', sortedBy: [{ element: 'role', order: 'Desc' }] }), ['adam', 'Zoe', 'adam.ops'], 'role descending: by last role name');
  t.same(await ids({ sortedBy: [{ element: 'team', order: 'Asc' }, { element: 'identifier', order: 'Desc' }] }), ['x_y%', 'bob', 'administrator', 'Zoe', 'adam.ops', 'adam'], 'no team first; then the next key');
  const byDate = (await search({ sortedBy: [{ element: 'creationDate', order: 'Desc' }, { element: 'identifier', order: 'Asc' }] })).json().results as { identifier: string; creationDate: number }[];
  t.equal(byDate.length, 6);
  t.ok(
    byDate.every((r, i) => i === 0 || byDate[i - 1]!.creationDate > r.creationDate || (byDate[i - 1]!.creationDate === r.creationDate && byDate[i - 1]!.identifier < r.identifier)),
    'creationDate descending, then identifier ascending',
  );
  t.same(await ids({ sortedBy: [{ element: 'identifier', order: 'Desc' }], pageIndex: 2, pageSize: 4 }), ['adam', 'Zoe'], 'pages follow the sort');

  const cases: [string, unknown, RegExp][] = [
    ['unknown sort element', { sortedBy: [{ element: 'lastAuthentication', order: 'Asc' }] }, /sortedBy\[0\]\.element "lastAuthentication" is not one of identifier, name, email, contact, role, team, enabled, creationDate/],
    ['sort element missing', { sortedBy: [{ order: 'Asc' }] }, /sortedBy\[0\]\.element is missing/],
    ['bad order', { sortedBy: [{ element: 'identifier', order: 'Up' }] }, /sortedBy\[0\]\.order "Up" is not Asc or Desc/],
    ['key order', { sortedBy: [{ element: 'role', order: 'KeyAsc' }] }, /not a key-value element/],
    ['too many sort keys', { sortedBy: Array.from({ length: 9 }, () => ({ element: 'identifier', order: 'Asc' })) }, /at most 8/],
    ['identifier too long', { identifier: 'x'.repeat(192) }, /identifier is 192 characters long, at most 191/],
    ['contact too long', { contact: 'x'.repeat(321) }, /contact is 321 characters long, at most 320/],
  ];
  for (const [name, body, message] of cases) {
    const res = await search(body);
    t.equal(res.statusCode, 400, `${name}: ${res.body}`);
    t.equal(res.headers['content-type'], 'application/problem+json', name);
    t.equal(res.json().error, 'SEC-PRINC-002', name);
    t.match(res.json().message, message, name);
  }
  for (const [name, body] of [
    ['strictSearch not a boolean', { strictSearch: 'maybe' }],
    ['role not a string', { role: { name: 'x' } }],
    ['unknown key in a sort element', { sortedBy: [{ element: 'identifier', order: 'Asc', nulls: 'first' }] }],
  ] as const) {
    const res = await search(body);
    t.equal(res.statusCode, 400, name);
    t.equal(res.json().error, 'HTTP-003', name);
  }
});

t.test('contact is answered with email and can be echoed back', async (t) => {
  const { admin } = await setup(t);
  const created = (await admin('POST', INFOS, { identifier: 'ivy', email: 'ivy@example.com' })).json();
  t.match(created, { email: 'ivy@example.com', contact: 'ivy@example.com' }, 'contact: the email under its Horizon name');
  t.match((await admin('POST', INFOS, { identifier: 'jack' })).json(), { email: null, contact: null }, 'none: both null');

  const put = async (body: Record<string, unknown>) => {
    const res = await admin('PUT', INFOS, body);
    t.equal(res.statusCode, 200, res.body);
    return res.json() as { email: string | null; contact: string | null };
  };
  const current = (await admin('GET', `${INFOS}ivy`)).json() as Record<string, unknown>;
  t.match(await put(current), { email: 'ivy@example.com', contact: 'ivy@example.com' }, 'the GET answer PUT back as it is');
  t.match(await put({ ...current, email: 'ivy@new.example' }), { email: 'ivy@new.example', contact: 'ivy@new.example' }, 'email edited, the stale contact echoed: the edit wins');
  t.match(await put({ ...current, email: 'ivy@new.example', contact: 'ivy@contact.example' }), { email: 'ivy@contact.example' }, 'contact edited, email echoed: the edit wins');
  t.match(await put({ identifier: 'ivy', email: 'ivy@contact.example', contact: null }), { email: null, contact: null }, 'contact cleared (SetContactNil), email echoed');
  t.match(await put({ identifier: 'ivy', email: null, contact: 'ivy@back.example' }), { email: 'ivy@back.example' }, 'contact set, the null email echoed');
  t.match(await put({ identifier: 'ivy', email: '', contact: 'ivy@back.example' }), { email: null, contact: null }, 'email cleared with "" (null), contact echoed');
  const conflict = await admin('PUT', INFOS, { identifier: 'ivy', email: 'one@example.com', contact: 'two@example.com' });
  t.equal(conflict.statusCode, 400, conflict.body);
  t.equal(conflict.json().error, 'SEC-PRINC-002');
  t.match(conflict.json().message, /email and contact \(the same field\) differ/);
  t.equal((await admin('GET', `${INFOS}ivy`)).json().email, null, 'nothing written');
  t.match((await admin('POST', INFOS, { identifier: 'kim', email: null, contact: 'kim@example.com' })).json(), { email: 'kim@example.com' }, 'create: a null email and a contact');
});

t.test('principal information routes need credentials and the principals permission', async (t) => {
  const { kernel, admin } = await setup(t);
  await admin('POST', INFOS, { identifier: 'carol' });
  const anonymous = caller(kernel, {});
  const reader = caller(kernel, (await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:principals:read' }] })).headers);
  const nobody = caller(kernel, (await createPrincipal(kernel, 'nobody')).headers);

  t.equal((await anonymous('GET', `${INFOS}carol`)).statusCode, 401);
  t.equal((await anonymous('POST', `${INFOS}search`, {})).statusCode, 401);
  t.equal((await nobody('GET', `${INFOS}carol`)).statusCode, 403);
  t.equal((await nobody('GET', `${INFOS}nobody`)).statusCode, 403, 'not even their own (the self route is for that)');
  t.equal((await nobody('POST', `${INFOS}search`, {})).statusCode, 403);
  t.equal((await reader('GET', `${INFOS}carol`)).statusCode, 200);
  t.equal((await reader('POST', `${INFOS}search`, {})).statusCode, 200);
  const escalation = await reader('PUT', INFOS, { identifier: 'reader', permissions: [{ value: '*' }] });
  t.equal(escalation.statusCode, 403, 'no self-promotion');
  t.equal(escalation.json().error, 'SEC-PERM-001');
  t.equal((await reader('DELETE', `${INFOS}carol`)).statusCode, 403);
  t.equal((await admin('GET', INFOS)).statusCode, 404, 'no GET of the collection (the spec has none)');
});

t.test('enabled: a disabled principal cannot log in, whoever vouches for it; creationDate is the creation time', async (t) => {
  const { kernel, admin } = await setup(t);
  const erin = await createPrincipal(kernel, 'erin');
  const asErin = caller(kernel, erin.headers);
  const session = await login(kernel, erin.headers);
  const bySession = () => kernel.app.inject({ url: '/api/v1/security/principals/self', headers: { host: 'localhost', cookie: session.cookie } });
  t.equal((await asErin('GET', '/api/v1/security/principals/self')).statusCode, 200);
  const before = (await admin('GET', `${INFOS}erin`)).json();
  t.match(before, { enabled: true });
  t.ok(Number.isInteger(before.creationDate), 'creationDate: integer epoch ms');
  const row = await kernel.db.knex('security_principal_infos').where({ identifier: 'erin' }).first('created_at');
  t.equal(before.creationDate, Number(row.created_at));

  const disabled = await admin('PUT', INFOS, { identifier: 'erin', enabled: false });
  t.equal(disabled.statusCode, 200, disabled.body);
  t.match(disabled.json(), { enabled: false, creationDate: before.creationDate });
  for (const [how, call] of [['API key', () => asErin('GET', '/api/v1/security/principals/self')], ['session', bySession]] as const) {
    const res = await call();
    t.equal(res.statusCode, 401, `${how}: refused from the next request`);
    t.equal(res.json().error, 'SEC-AUTH-005', how);
  }
  t.equal((await kernel.app.inject({ url: '/api/v1/security/principals/authenticate', headers: { host: 'localhost', ...erin.headers } })).statusCode, 401, 'no new session either');

  t.match((await admin('PUT', INFOS, { identifier: 'erin', name: 'Erin' })).json(), { enabled: false }, 'a PUT without enabled keeps it');
  t.match((await admin('PUT', INFOS, { identifier: 'erin', enabled: null })).json(), { enabled: false }, 'null too');
  t.match((await admin('PUT', INFOS, { identifier: 'erin', enabled: true })).json(), { enabled: true });
  t.equal((await asErin('GET', '/api/v1/security/principals/self')).statusCode, 200, 'enabled again');

  t.match((await admin('POST', INFOS, { identifier: 'frank', enabled: false })).json(), { identifier: 'frank', enabled: false }, 'created disabled');
  t.match((await admin('POST', INFOS, { identifier: 'gina' })).json(), { enabled: true }, 'enabled by default');
  const self = await admin('PUT', INFOS, { identifier: 'administrator', enabled: false });
  t.equal(self.statusCode, 400, self.body);
  t.equal(self.json().error, 'SEC-PRINC-002', 'no principal disables itself');
  t.equal((await admin('GET', `${INFOS}administrator`)).json().enabled, true, 'nothing written');
  const bad = await admin('POST', INFOS, { identifier: 'hank', enabled: 'no' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error, 'HTTP-003');
  t.equal((await asErin('PUT', INFOS, { identifier: 'erin', enabled: false })).statusCode, 403, 'the principals write permission is needed');
});
