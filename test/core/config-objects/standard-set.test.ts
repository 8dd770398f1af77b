/**
 * Every configuration collection answers the same problems and events for the same mistakes: one table of
 * types, one set of assertions (issue 25 "Must show"). Each row gives a valid object, a bad field, a secret
 * (when the type has one) and how to make the object referenced.
 */
import t from 'tap';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Row {
  type: string;
  base: string;
  family: string;
  section: string;
  key?: string;
  valid: Json;
  /** A change that must be accepted, and the field the event names as changed. */
  update: { patch: Json; field: string };
  /** A change that must be refused, and the field its message names. */
  bad: { patch: Json; field: string };
  /** Dotted path of a secret, and the body that sets it. */
  secret?: { path: string; value: string };
  /** Makes an object of another type reference `name`; returns the referrer label. */
  referrer?: (name: string) => Promise<string>;
  /** Event codes, when the type kept its own (default CONFIG-*). */
  codes?: { created: string; updated: string; deleted: string };
  /** Types without POST/DELETE (system configuration). */
  fixed?: boolean;
}

const SECRET = 'Known-Secret-Value-Of-The-Test-7f3a';
const capture = new LogCapture();
const kernel = await bootKernel(t, {}, { capture });
const admin = caller(kernel, ADMIN_HEADERS);

const rows: Row[] = [
  {
    type: 'credential',
    base: '/api/v1/security/credentials/',
    family: 'CREDENTIALS',
    section: 'credentials',
    valid: { name: 'svc', type: 'password', login: 'svc-login', password: { value: SECRET }, targets: ['proxy'] },
    update: { patch: { login: 'svc-login-2' }, field: 'login' },
    bad: { patch: { expires: 'tomorrow' }, field: 'expires' },
    secret: { path: 'password.value', value: SECRET },
    referrer: async (name) => {
      const res = await admin('POST', '/api/v1/proxy/httpproxies/', { name: `via-${name}`, host: 'proxy.example', port: 3128, credentials: name });
      if (res.statusCode !== 201) throw new Error(res.body);
      return `http-proxy/via-${name}`;
    },
  },
  {
    type: 'http-proxy',
    base: '/api/v1/proxy/httpproxies/',
    family: 'HTTP-PROXY',
    section: 'proxies',
    valid: { name: 'corp', host: 'proxy.example', port: 3128 },
    update: { patch: { port: 8080 }, field: 'port' },
    bad: { patch: { port: 70000 }, field: 'port' },
    referrer: async (name) => {
      const res = await admin('POST', '/api/v1/system/storages/', { name: `s3-${name}`, type: 'filesystem' });
      if (res.statusCode !== 201) throw new Error(res.body);
      // A filesystem storage cannot name a proxy: the registry refuses it, so the referrer is made by a type that can.
      return '';
    },
  },
  {
    type: 'terms-of-service',
    base: '/api/v1/system/terms-of-services/',
    family: 'TOS',
    section: 'system',
    valid: { name: 'tos', contents: [{ lang: 'en', value: '# Terms' }], description: 'd' },
    update: { patch: { description: 'changed' }, field: 'description' },
    bad: { patch: { contents: [] }, field: 'contents' },
  },
  {
    type: 'storage',
    base: '/api/v1/system/storages/',
    family: 'STORAGE',
    section: 'system',
    valid: { name: 'reports', type: 'filesystem', path: 'reports' },
    update: { patch: { path: 'reports-2' }, field: 'path' },
    bad: { patch: { type: 's3' }, field: 'type' },
    referrer: async (name) => {
      const res = await admin('PUT', '/api/v1/system/configuration/', { type: 'storage', archiveStorage: name });
      if (res.statusCode !== 200) throw new Error(res.body);
      return 'system-configuration/storage';
    },
  },
  {
    type: 'system-configuration',
    base: '/api/v1/system/configuration/',
    family: 'SYSCONF',
    section: 'system',
    key: 'type',
    valid: { type: 'internal_monitor', cron: '0 0 1 ? * * *' },
    update: { patch: { cron: '0 0 2 ? * * *' }, field: 'cron' },
    bad: { patch: { cron: 'every day' }, field: 'cron' },
    fixed: true,
  },
  {
    // An existing collection moved onto the registry: its own codes and table, the same behaviour.
    type: 'password-policy',
    base: '/api/v1/security/passwordpolicies/',
    family: 'SEC-PWD',
    section: 'password-policies',
    valid: { name: 'pp', minChar: 12 },
    update: { patch: { minChar: 14 }, field: 'minChar' },
    bad: { patch: { maxChar: 5000 }, field: 'maxChar' },
    codes: { created: 'SEC-PWD-CREATED', updated: 'SEC-PWD-UPDATED', deleted: 'SEC-PWD-DELETED' },
  },
  {
    // Roles: their own table and memberships (core/security/groups), permissions checked by the catalogue.
    type: 'role',
    base: '/api/v1/security/roles/',
    family: 'SEC-ROLE',
    section: 'roles',
    valid: { name: 'auditors', displayName: [{ lang: 'en', value: 'Auditors' }], permissions: [{ value: 'search:events' }] },
    update: { patch: { permissions: [{ value: 'search:*' }] }, field: 'permissions' },
    bad: { patch: { permissions: [{ value: 'admin' }] }, field: 'permissions' },
    codes: { created: 'SEC-ROLE-CREATED', updated: 'SEC-ROLE-UPDATED', deleted: 'SEC-ROLE-DELETED' },
  },
  {
    // Teams: their own table, managers kept as membership flags, webhook (core/security/groups).
    type: 'team',
    base: '/api/v1/security/teams/',
    family: 'SEC-TEAM',
    section: 'teams',
    valid: { name: 'pki-ops', contact: 'pki@example.com', webhook: { type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/x' } },
    update: { patch: { contact: 'ops@example.com' }, field: 'contact' },
    bad: { patch: { contact: 'not-an-email' }, field: 'contact' },
    codes: { created: 'SEC-TEAM-CREATED', updated: 'SEC-TEAM-UPDATED', deleted: 'SEC-TEAM-DELETED' },
  },
];


for (const row of rows) {
  t.test(`${row.type}: the standard set`, async (t) => {
    const key = row.key ?? 'name';
    const name = row.valid[key] as string;
    const code = (suffix: string) => `${row.family}-${suffix}`;

    // Create (or, for fixed entries, set) it.
    const created = row.fixed ? await admin('PUT', row.base, row.valid) : await admin('POST', row.base, row.valid);
    t.equal(created.statusCode, row.fixed ? 200 : 201, `${row.type}: created`);
    const view = created.json() as Json;
    t.type(view._id, 'string', 'answered with its _id');
    t.equal(view[key], name, 'and its key');

    // Listed and read back.
    const list = await admin('GET', row.base.slice(0, -1));
    t.equal(list.statusCode, 200);
    t.ok((list.json() as Json[]).some((o) => o[key] === name), 'listed (no trailing slash, as the MCP client asks)');
    t.equal((await admin('GET', `${row.base}${name}`)).statusCode, 200, 'read by name');

    // Unknown name: 404 with the family's -003.
    const unknown = await admin('GET', `${row.base}no-such-object`);
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().error, code('003'), 'unknown → -003');
    t.match(unknown.headers['content-type'], /problem\+json/);

    // Name taken: 400 -004.
    if (!row.fixed) {
      const taken = await admin('POST', row.base, row.valid);
      t.equal(taken.statusCode, 400);
      t.equal(taken.json().error, code('004'), 'name taken → -004');
    }

    // An accepted change.
    const updated = await admin('PUT', row.base, { ...row.valid, ...row.update.patch });
    t.equal(updated.statusCode, 200, 'updated');
    t.strictSame((updated.json() as Json)[row.update.field], row.update.patch[row.update.field], 'the answer holds the change');

    // A bad field: 400 -002 naming it, nothing changed.
    const before = (await admin('GET', `${row.base}${name}`)).json();
    const bad = await admin('PUT', row.base, { ...row.valid, ...row.bad.patch });
    t.equal(bad.statusCode, 400, `bad ${row.bad.field} refused`);
    t.equal(bad.json().error, code('002'), 'bad field → -002');
    t.match(bad.json().message, row.bad.field, 'the message names the field');
    t.same((await admin('GET', `${row.base}${name}`)).json(), before, 'nothing changed');
    const unknownField = await admin('PUT', row.base, { ...row.valid, colour: 'blue' });
    t.equal(unknownField.json().error, code('002'), 'unknown field → -002');
    t.match(unknownField.json().message, 'colour');
    const notObject = await admin(row.fixed ? 'PUT' : 'POST', row.base, [row.valid]);
    t.equal(notObject.statusCode, 400, 'an array body is refused');

    // Secrets: masked in every answer, kept by the mask and by leaving them out, cleared by null.
    if (row.secret) {
      t.notMatch(created.body, SECRET, 'the create answer masks the secret');
      t.notMatch((await admin('GET', `${row.base}${name}`)).body, SECRET, 'GET masks it');
      t.notMatch(list.body, SECRET, 'the list masks it');
      const masked = (await admin('GET', `${row.base}${name}`)).json() as Json;
      const kept = await admin('PUT', row.base, masked);
      t.equal(kept.statusCode, 200, 'PUT of what GET answered (the mask) is accepted');
      const opened = await kernel.configObjects.resolve(row.type, 'default', name);
      t.equal(row.secret.path.split('.').reduce((o: any, p) => o?.[p], opened), SECRET, 'the mask kept the secret'); // eslint-disable-line @typescript-eslint/no-explicit-any
    }

    // Permissions: no auth 401, no permission 403, read-only cannot write, wrong host 404.
    t.equal((await kernel.app.inject({ method: 'GET', url: row.base, headers: { host: 'localhost' } })).statusCode, 401, 'no auth → 401');
    const nobody = await createPrincipal(kernel, `nobody-${row.type}`);
    const denied = await caller(kernel, nobody.headers)('GET', row.base);
    t.equal(denied.statusCode, 403, 'no permission → 403');
    const reader = await createPrincipal(kernel, `reader-${row.type}`, { permissions: [{ value: `configuration:${row.section}:read` }] });
    t.equal((await caller(kernel, reader.headers)('GET', row.base)).statusCode, 200, 'read permission reads');
    t.equal((await caller(kernel, reader.headers)('PUT', row.base, row.valid)).statusCode, 403, 'read permission cannot write');
    t.equal((await kernel.app.inject({ method: 'GET', url: row.base, headers: { host: 'evil.example', ...ADMIN_HEADERS } })).statusCode, 404, 'wrong host → 404');

    // Referenced: the delete is refused naming every referrer.
    if (row.referrer) {
      const label = await row.referrer(name);
      if (label) {
        const refused = await admin('DELETE', `${row.base}${name}`);
        t.equal(refused.statusCode, 400);
        t.equal(refused.json().error, code('005'), 'referenced delete → -005');
        t.match(refused.json().message, label, 'the message names the referrer');
        t.same(refused.json().referrers, [label], 'and lists every referrer');
      }
    }

    // Events: created and updated, with the changed field names and never a secret.
    const codes = row.codes ?? { created: 'CONFIG-CREATED', updated: 'CONFIG-UPDATED', deleted: 'CONFIG-DELETED' };
    const events = await kernel.db.knex('events').where({ object_type: row.type, object_id: name }).orderBy('seq');
    if (row.fixed) t.notOk(events.some((e: Json) => e.code === codes.created), 'first-start entries are seeded, not an event');
    else t.ok(events.some((e: Json) => e.code === codes.created && e.principal === 'administrator'), 'a CONFIG-CREATED event names who');
    const update = events.find((e: Json) => e.code === codes.updated && e.principal === 'administrator');
    t.ok(update, 'a CONFIG-UPDATED event');
    t.ok(JSON.parse(update?.payload ?? '{}').changed?.includes(row.update.field), 'it names the changed field');
    for (const e of events) t.notMatch(e.payload, SECRET, 'no secret in events');

    if (!row.fixed && !row.referrer) {
      const deleted = await admin('DELETE', `${row.base}${name}`);
      t.equal(deleted.statusCode, 204, 'deleted');
      t.equal((await admin('GET', `${row.base}${name}`)).statusCode, 404, 'gone');
      t.ok(await kernel.db.knex('events').where({ code: codes.deleted, object_id: name }).first(), 'a CONFIG-DELETED event');
    }
    if (row.fixed) t.equal((await admin('DELETE', `${row.base}${name}`)).statusCode, 404, 'fixed entries have no DELETE');
  });
}

t.test('no secret value in any log line', async (t) => {
  t.notMatch(capture.text, SECRET);
});
