import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { onTeamMigrated, type TeamMigration } from '../../../core/security/groups/team-migration.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal, type Method } from '../../helpers/security.js';

const TEAMS = '/api/v1/security/teams/';
const RA = (team: string) => `/api/v1/teams/${team}/members`;

const memberships = async (kernel: Kernel, team: string) =>
  ((await kernel.db.knex('security_memberships').where({ kind: 'team', group_name: team }).orderBy('identifier').select('identifier', 'manager')) as {
    identifier: string;
    manager: number | boolean;
  }[]).map((m) => ({ identifier: m.identifier, manager: Boolean(m.manager) }));

t.test('teams: the standard set, validated, and members with their manager flag', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);

  const created = await admin('POST', TEAMS, { name: 'pki', displayName: [{ lang: 'en', value: 'PKI team' }], contact: 'pki@example.com' });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  t.match(created.json(), { _id: /^[0-9a-f]{24}$/, name: 'pki', displayName: [{ lang: 'en', value: 'PKI team' }], description: [], contact: 'pki@example.com', externallyManaged: false });
  t.match((await admin('POST', TEAMS, { name: 'directory', contact: '', externallyManaged: true, description: null })).json(), { contact: null, externallyManaged: true }, 'an empty contact is none');

  const bad: [string, Method, unknown, number, string][] = [
    ['malformed JSON', 'POST', '{', 400, 'HTTP-002'],
    // Invalid input is the collection's own -002 naming the field (every configuration type alike).
    ['contact not an email', 'POST', { name: 'x', contact: 'someone' }, 400, 'SEC-TEAM-002'],
    ['unknown field', 'POST', { name: 'x', members: [] }, 400, 'SEC-TEAM-002'],
    ['name with a slash', 'POST', { name: 'x/y' }, 400, 'SEC-TEAM-002'],
    ['duplicate', 'POST', { name: 'pki' }, 400, 'SEC-TEAM-004'],
    ['update of an unknown team', 'PUT', { name: 'ghosts' }, 404, 'SEC-TEAM-003'],
  ];
  for (const [name, method, payload, status, code] of bad) {
    const res = await admin(method, TEAMS, payload);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.json().error, code, name);
  }
  t.same((await admin('GET', TEAMS)).json().map((x: { name: string }) => x.name), ['directory', 'pki'], 'nothing else written');

  const current = (await admin('GET', `${TEAMS}pki`)).json() as Record<string, unknown>;
  const updated = await admin('PUT', TEAMS, { ...current, contact: 'ops@example.com' });
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), { _id: current._id, contact: 'ops@example.com', displayName: [{ lang: 'en', value: 'PKI team' }] });

  // Members, with the manager flag: omitted keeps an existing member's flag.
  const mia = caller(kernel, (await createPrincipal(kernel, 'mia')).headers);
  t.same((await admin('POST', `${TEAMS}pki/members`, { identifier: 'mia', manager: true })).json(), [{ identifier: 'mia', name: 'mia', manager: true }]);
  await admin('POST', `${TEAMS}pki/members`, { identifiers: ['mia', 'pat'] });
  t.same((await admin('GET', `${TEAMS}pki/members`)).json(), [
    { identifier: 'mia', name: 'mia', manager: true },
    { identifier: 'pat', manager: false },
  ]);
  const self = (await mia('GET', '/api/v1/security/principals/self')).json();
  t.same(self.teams, ['pki'], 'self names the teams');
  t.same(self.teamInfos, [{ name: 'pki', displayName: [{ lang: 'en', value: 'PKI team' }], description: [], manager: true, externallyManaged: false }], 'and shows them as objects with the manager flag in teamInfos');
  t.same(self.roles, []);
  t.equal((await admin('GET', `${TEAMS}pki/members`)).statusCode, 200);
  t.equal((await mia('GET', `${TEAMS}pki/members`)).statusCode, 403, 'the configuration route is for configuration:teams holders only');

  await admin('POST', `${TEAMS}pki/members`, { identifier: 'mia', manager: false });
  t.same(await memberships(kernel, 'pki'), [{ identifier: 'mia', manager: false }, { identifier: 'pat', manager: false }]);
  t.equal((await admin('DELETE', `${TEAMS}pki/members?identifier=pat&identifier=mia`)).statusCode, 204);
  t.same(await memberships(kernel, 'pki'), []);

  await admin('POST', `${TEAMS}pki/members`, { identifier: 'mia' });
  t.equal((await admin('DELETE', `${TEAMS}pki`)).statusCode, 204);
  t.same(await memberships(kernel, 'pki'), [], 'deleting a team deletes its memberships');
  t.same((await mia('GET', '/api/v1/security/principals/self')).json().teams, []);
  t.equal((await admin('GET', `${TEAMS}pki`)).json().error, 'SEC-TEAM-003');

  const codes = ((await kernel.db.knex('events').where({ module: 'security' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);
  t.same(codes, [
    'SEC-TEAM-CREATED',
    'SEC-TEAM-CREATED',
    'SEC-TEAM-UPDATED',
    'SEC-TEAM-MEMBERS-ADDED',
    'SEC-TEAM-MEMBERS-ADDED',
    'SEC-TEAM-MEMBERS-ADDED',
    'SEC-TEAM-MEMBERS-REMOVED',
    'SEC-TEAM-MEMBERS-ADDED',
    'SEC-TEAM-DELETED',
  ]);
});

t.test('RA team members: a manager manages the plain members of their own team only', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  for (const name of ['pki', 'web']) await admin('POST', TEAMS, { name });
  await admin('POST', TEAMS, { name: 'directory', externallyManaged: true });
  const mia = caller(kernel, (await createPrincipal(kernel, 'mia', { teams: [{ name: 'pki', manager: true }, { name: 'directory', manager: true }] })).headers);
  await createPrincipal(kernel, 'max', { teams: [{ name: 'pki', manager: true }] });
  const pat = caller(kernel, (await createPrincipal(kernel, 'pat', { teams: [{ name: 'pki' }] })).headers);

  const listed = await mia('GET', RA('pki'));
  t.equal(listed.statusCode, 200, listed.body);
  t.equal(listed.headers['content-type'], 'application/json');
  t.same(listed.json(), [
    { identifier: 'max', name: 'max', manager: true },
    { identifier: 'mia', name: 'mia', manager: true },
    { identifier: 'pat', name: 'pat', manager: false },
  ]);
  t.equal((await mia('GET', RA('web'))).statusCode, 403, 'not a manager of that team');
  t.equal((await mia('POST', RA('web'), { identifier: 'sam' })).statusCode, 403);
  t.equal((await pat('GET', RA('pki'))).statusCode, 403, 'a plain member is not a manager');
  t.equal((await caller(kernel, {})('GET', RA('pki'))).statusCode, 401);

  const added = await mia('POST', RA('pki'), { identifier: 'sam' });
  t.equal(added.statusCode, 200, added.body);
  t.ok(added.json().some((m: { identifier: string; manager: boolean }) => m.identifier === 'sam' && !m.manager));
  t.equal((await mia('POST', RA('pki'), { identifier: 'max' })).statusCode, 200, 'naming a manager without the flag keeps it');
  t.equal((await mia('POST', RA('pki'), { identifier: 'pat', manager: false })).statusCode, 200, 'a plain member stays plain');

  const refusals: [string, Method, unknown, RegExp][] = [
    ['grant the flag', 'POST', { identifier: 'pat', manager: true }, /cannot make "pat" a manager/],
    ['grant it to a newcomer', 'POST', { identifiers: ['zoe'], manager: true }, /cannot make "zoe" a manager/],
    ['withdraw the flag', 'POST', { identifier: 'max', manager: false }, /cannot withdraw the manager flag of "max"/],
    ['remove another manager', 'DELETE', { identifiers: ['sam', 'max'] }, /cannot remove another manager \("max"\)/],
  ];
  const before = await memberships(kernel, 'pki');
  for (const [name, method, payload, message] of refusals) {
    const res = await mia(method, RA('pki'), payload);
    t.equal(res.statusCode, 400, `${name}: ${res.body}`);
    t.equal(res.json().error, 'SEC-TEAM-002', name);
    t.match(res.json().message, message, name);
  }
  t.same(await memberships(kernel, 'pki'), before, 'nothing written by the refused changes');

  t.equal((await mia('DELETE', `${RA('pki')}?identifier=sam`)).statusCode, 204, 'a plain member can be removed');

  // An externally managed team: its manager reads it, nobody writes it through the RA.
  t.equal((await mia('GET', RA('directory'))).statusCode, 200);
  for (const [who, call] of [['manager', mia], ['administrator', admin]] as const) {
    const res = await call('POST', RA('directory'), { identifier: 'sam' });
    t.equal(res.statusCode, 400, who);
    t.equal(res.json().error, 'SEC-TEAM-005', who);
    t.equal((await call('DELETE', RA('directory'), { identifier: 'mia' })).json().error, 'SEC-TEAM-005', who);
  }
  t.equal((await admin('POST', `${TEAMS}directory/members`, { identifier: 'sam' })).statusCode, 200, 'the directory sync uses the configuration route');

  // An administrator on the RA route may manage the flag.
  t.equal((await admin('POST', RA('pki'), { identifier: 'pat', manager: true })).statusCode, 200);
  t.equal((await pat('GET', RA('pki'))).statusCode, 200, 'pat manages the team from the next request');
  t.equal((await admin('DELETE', RA('pki'), { identifier: 'max' })).statusCode, 204);
  t.equal((await admin('GET', RA('ghosts'))).json().error, 'SEC-TEAM-003');

  // A manager may leave; then the team is no longer theirs.
  t.equal((await mia('DELETE', RA('pki'), { identifier: 'mia' })).statusCode, 204);
  t.equal((await mia('GET', RA('pki'))).statusCode, 403);

  const event = await kernel.db.knex('events').where({ code: 'SEC-TEAM-MEMBERS-ADDED', principal: 'mia' }).orderBy('seq').first();
  t.same(JSON.parse(event.payload), { identifiers: ['sam'], via: 'webra' });
});

t.test('team migration renames or merges, memberships follow, listeners run in the transaction', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const seen: TeamMigration[] = [];
  let fail = false;
  const listener = async (trx: import('knex').Knex.Transaction, migration: TeamMigration) => {
    // Sees the migration's own writes: proof it runs inside the transaction.
    t.ok(await trx('security_teams').where({ name: migration.newTeam }).first(), 'the new team is visible to the listener');
    seen.push(migration);
    if (fail) throw new Error('inventory could not move the certificates');
  };
  onTeamMigrated.add(listener);
  t.teardown(() => onTeamMigrated.delete(listener));

  await admin('POST', TEAMS, { name: 'pki', contact: 'pki@example.com' });
  await admin('POST', TEAMS, { name: 'web' });
  const mia = caller(kernel, (await createPrincipal(kernel, 'mia', { teams: [{ name: 'pki', manager: true }] })).headers);
  await createPrincipal(kernel, 'pat', { teams: [{ name: 'pki' }, { name: 'web', manager: true }] });
  await createPrincipal(kernel, 'wes', { teams: [{ name: 'web' }] });

  // Rename: pki → security (which does not exist).
  const renamed = await admin('PATCH', `${TEAMS}pki/security`);
  t.equal(renamed.statusCode, 200, renamed.body);
  t.match(renamed.json(), { name: 'security', contact: 'pki@example.com' });
  t.same(await memberships(kernel, 'security'), [{ identifier: 'mia', manager: true }, { identifier: 'pat', manager: false }]);
  t.equal((await admin('GET', `${TEAMS}pki`)).statusCode, 404);
  t.equal((await mia('GET', RA('security'))).statusCode, 200, 'the manager manages the renamed team at once');
  t.same(seen.at(-1), { tenant: 'default', previousTeam: 'pki', newTeam: 'security', mode: 'renamed', members: ['mia', 'pat'] });

  // Merge: security → web (exists). pat is in both: one membership, manager kept from web.
  const merged = await admin('PATCH', `${TEAMS}security/web`);
  t.equal(merged.statusCode, 200, merged.body);
  t.equal(merged.json().name, 'web');
  t.same(await memberships(kernel, 'web'), [
    { identifier: 'mia', manager: true },
    { identifier: 'pat', manager: true },
    { identifier: 'wes', manager: false },
  ]);
  t.same(await memberships(kernel, 'security'), []);
  t.equal((await admin('GET', `${TEAMS}security`)).json().error, 'SEC-TEAM-003');
  t.same((await mia('GET', '/api/v1/security/principals/self')).json().teamInfos.map((x: { name: string; manager: boolean }) => [x.name, x.manager]), [['web', true]]);
  t.match(seen.at(-1), { previousTeam: 'security', newTeam: 'web', mode: 'merged', members: ['mia', 'pat'] });
  const event = await kernel.db.knex('events').where({ code: 'SEC-TEAM-MIGRATED' }).orderBy('seq', 'desc').first();
  t.match(event, { object_type: 'team', object_id: 'web', principal: 'administrator' });
  t.same(JSON.parse(event.payload), { previousTeam: 'security', newTeam: 'web', mode: 'merged', members: ['mia', 'pat'] });

  // A failing listener rolls the whole migration back.
  fail = true;
  await admin('POST', TEAMS, { name: 'ops' });
  const failed = await admin('PATCH', `${TEAMS}web/ops`);
  t.equal(failed.statusCode, 500);
  t.equal(failed.json().error, 'SRV-001');
  t.equal((await admin('GET', `${TEAMS}web`)).statusCode, 200, 'the team is still there');
  t.equal((await memberships(kernel, 'web')).length, 3, 'its members too');
  t.same(await memberships(kernel, 'ops'), []);
  fail = false;

  const refusals: [string, string, number, string][] = [
    ['same team', 'web/web', 400, 'SEC-TEAM-002'],
    ['unknown team', 'ghosts/web', 404, 'SEC-TEAM-003'],
    ['bad new name', 'web/%2Fx', 400, 'HTTP-003'],
  ];
  for (const [name, path, status, code] of refusals) {
    const res = await admin('PATCH', `${TEAMS}${path}`);
    t.equal(res.statusCode, status, `${name}: ${res.body}`);
    t.equal(res.json().error, code, name);
  }
  t.equal((await mia('PATCH', `${TEAMS}web/other`)).statusCode, 403, 'a team manager cannot migrate a team');
  t.equal((await admin('GET', `${TEAMS}web`)).statusCode, 200);
});

t.test('team managers are the members with the manager flag; the webhook is an http(s) URL', async (t) => {
  const kernel = await bootKernel(t);
  const admin = caller(kernel, ADMIN_HEADERS);
  const mia = caller(kernel, (await createPrincipal(kernel, 'mia')).headers);
  const pat = caller(kernel, (await createPrincipal(kernel, 'pat')).headers);
  const slack = { type: 'slack', url: 'https://hooks.slack.com/services/T000/B000/XXXX' };

  const created = await admin('POST', TEAMS, { name: 'ops', managers: ['mia', 'mia'], webhook: slack });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { name: 'ops', managers: ['mia'], webhook: slack });
  t.same(await memberships(kernel, 'ops'), [{ identifier: 'mia', manager: true }], 'a manager named at creation joins the team with the flag');
  t.equal((await mia('GET', RA('ops'))).statusCode, 200, 'and manages its members from the next request');
  t.match((await admin('POST', TEAMS, { name: 'web' })).json(), { managers: [], webhook: null }, 'none by default');
  t.same(
    (await admin('GET', TEAMS)).json().map((x: { name: string; managers: string[]; webhook: unknown }) => [x.name, x.managers, x.webhook]),
    [['ops', ['mia'], slack], ['web', [], null]],
  );

  // The flag set through the members routes shows in `managers`; a PUT without `managers` keeps the flags.
  await admin('POST', `${TEAMS}ops/members`, { identifier: 'pat', manager: true });
  t.same((await admin('GET', `${TEAMS}ops`)).json().managers, ['mia', 'pat']);
  const kept = await admin('PUT', TEAMS, { name: 'ops', contact: 'ops@example.com' });
  t.equal(kept.statusCode, 200, kept.body);
  t.match(kept.json(), { managers: ['mia', 'pat'], webhook: null }, 'managers kept; the webhook, like the contact, is replaced');

  // `managers` names exactly the managers: one not named stays a plain member.
  const replaced = await admin('PUT', TEAMS, { name: 'ops', managers: ['pat', 'zoe'], webhook: { type: 'teams', url: 'http://teams.example.com/hook?sig=a%2Fb' } });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.match(replaced.json(), { managers: ['pat', 'zoe'], webhook: { type: 'teams', url: 'http://teams.example.com/hook?sig=a%2Fb' } });
  t.same(await memberships(kernel, 'ops'), [
    { identifier: 'mia', manager: false },
    { identifier: 'pat', manager: true },
    { identifier: 'zoe', manager: true },
  ]);
  t.equal((await mia('GET', RA('ops'))).statusCode, 403, 'mia no longer manages the team');
  t.equal((await pat('GET', RA('ops'))).statusCode, 200);
  t.match((await admin('PUT', TEAMS, { name: 'ops', managers: null, webhook: null })).json(), { managers: [], webhook: null }, 'null: none');
  t.equal((await admin('PUT', TEAMS, { name: 'ops', managers: [] })).json().managers.length, 0);
  t.equal((await memberships(kernel, 'ops')).length, 3, 'nobody left the team');

  const before = { teams: await kernel.db.knex('security_teams').orderBy('name'), members: await memberships(kernel, 'ops') };
  const bad: [string, Method, unknown, string][] = [
    ['a webhook URL that is not http(s)', 'POST', { name: 'x', webhook: { type: 'slack', url: 'ftp://hooks.example.com/x' } }, 'SEC-TEAM-002'],
    ['a webhook URL that is not a URL', 'PUT', { name: 'ops', managers: ['mia'], webhook: { type: 'slack', url: 'hooks.example.com/x' } }, 'SEC-TEAM-002'],
    ['a webhook URL without a host', 'POST', { name: 'x', webhook: { type: 'teams', url: 'https://' } }, 'SEC-TEAM-002'],
    ['an unknown webhook type', 'POST', { name: 'x', webhook: { type: 'discord', url: 'https://example.com' } }, 'SEC-TEAM-002'],
    ['a webhook without its URL', 'POST', { name: 'x', webhook: { type: 'slack' } }, 'SEC-TEAM-002'],
    ['a webhook as a string', 'POST', { name: 'x', webhook: 'https://example.com' }, 'SEC-TEAM-002'],
    ['managers not identifiers', 'PUT', { name: 'ops', managers: [{ identifier: 'mia' }] }, 'SEC-TEAM-002'],
    ['an empty manager identifier', 'POST', { name: 'x', managers: [''] }, 'SEC-TEAM-002'],
  ];
  for (const [name, method, payload, code] of bad) {
    const res = await admin(method, TEAMS, payload);
    t.equal(res.statusCode, 400, `${name}: ${res.body}`);
    t.equal(res.json().error, code, name);
  }
  t.same({ teams: await kernel.db.knex('security_teams').orderBy('name'), members: await memberships(kernel, 'ops') }, before, 'nothing written by the refused writes');

  // A rename keeps both; an unknown team's PUT writes no flag.
  await admin('PUT', TEAMS, { name: 'ops', managers: ['mia'], webhook: slack });
  t.match((await admin('PATCH', `${TEAMS}ops/operations`)).json(), { name: 'operations', managers: ['mia'], webhook: slack });
  t.equal((await admin('PUT', TEAMS, { name: 'ghosts', managers: ['mia'] })).statusCode, 404);
  t.same(await memberships(kernel, 'ghosts'), []);
  t.equal((await mia('PUT', TEAMS, { name: 'operations', managers: ['mia', 'pat'] })).statusCode, 403, 'a manager cannot name managers (configuration:teams:write)');
  t.equal((await caller(kernel, {})('GET', `${TEAMS}operations`)).statusCode, 401);

  const event = await kernel.db.knex('events').where({ code: 'SEC-TEAM-UPDATED' }).orderBy('seq', 'desc').first();
  t.notMatch(event.payload, /hooks\.slack\.com/, 'the webhook URL (often a credential) is not written to events');
});
