/**
 * Execution policies (/api/v1/automation/executions/), issue 30 item 1: every outcome the spec's detailed
 * operations and its error table list for the four operations, as one table run in order, on SQLite and
 * (TEST_DATABASE_URL) MariaDB. Spec references are to ../shared/spec/interface-spec.md:
 *
 *   360-364 automation.execution.list: 200 JSON array of ExecutionPolicyResponse; 204 (no body) when no policy
 *           is defined or the caller has insufficient permissions; other outcomes 401, 403, 500.
 *   366-370 automation.execution.add: body required JSON of shape ExecutionPolicy; 201 ExecutionPolicyResponse;
 *           other outcomes 400, 401, 403, 500.
 *   372-376 automation.execution.update: the same body; 200 ExecutionPolicyResponse; 400, 401, 403, 404, 500.
 *   435     SecAuth001: 401 on execution add/update, also 500 on execution list/add/update.
 *   442-444 ExecutionPolicy001 500 (list, add, update), ExecutionPolicy002 400 (add, update),
 *           ExecutionPolicy004 400 (add only).
 *   448-449 rule 1: the list answers 204 (not an error) when no policy exists or permissions are insufficient;
 *           rule 2: SecAuth001 is a 500 on the list, not a 401.
 *   378     additional rule 1: a PUT updates an existing object, a POST registers a new one.
 *   307-309 the standard set (GET :name, DELETE :name) on the configuration capability; wrong host → 404.
 */
import t from 'tap';
import type { Test } from 'tap';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { executionAllowed } from '../../../core/automation/executions/config-type.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Answer = { statusCode: number; body: string; headers: Record<string, unknown>; json(): any }; // eslint-disable-line @typescript-eslint/no-explicit-any

const BASE = '/api/v1/automation/executions/';
const kernel = await bootKernel(t);
const admin = caller(kernel, ADMIN_HEADERS);
const nobody = await createPrincipal(kernel, 'exec-nobody');
const reader = await createPrincipal(kernel, 'exec-reader', { permissions: [{ value: 'configuration:automation:read' }] });
const writer = await createPrincipal(kernel, 'exec-writer', { permissions: [{ value: 'configuration:automation:write' }] });
const anonymous = (method: 'GET' | 'POST' | 'PUT', payload?: unknown) =>
  kernel.app.inject({ method, url: BASE, headers: { host: 'localhost', ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

const policy = {
  name: 'night-window',
  description: 'Nights only',
  authorizedPeriods: [{ timeRange: { start: '22:00', end: '23:59:59' }, weekDays: ['MONDAY', 'MONDAY', 'FRIDAY'] }],
  forbiddenPeriods: [{ dateRange: { start: '2031-01-01', end: '2031-01-02' } }],
};

/** Makes the store fail once (a database error the registry does not answer itself) → ExecutionPolicy001. */
function failingStoreOnce(): void {
  const registry = kernel.configObjects as unknown as Record<string, unknown>;
  for (const method of ['list', 'create', 'update'] as const) {
    const original = registry[method] as (...args: unknown[]) => Promise<unknown>;
    registry[method] = async (...args: unknown[]) => {
      for (const m of ['list', 'create', 'update']) delete registry[m];
      if (args[0] === 'execution-policy') throw new Error('database unavailable (test)');
      return original.apply(kernel.configObjects, args);
    };
  }
}

interface Row {
  what: string;
  spec: string;
  call: () => Promise<Answer>;
  status: number;
  error?: string;
  /** 204: no body at all. */
  empty?: boolean;
  body?: (t: Test, json: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any
  before?: () => void;
}

const rows: Row[] = [
  // ---- list (360-364, 435, 442, 448-449)
  { what: 'list, none defined → 204, no body', spec: '363, rule 1 (448)', call: () => admin('GET', BASE), status: 204, empty: true },
  { what: 'list without credentials → SecAuth001 as 500', spec: '435, rule 2 (449)', call: () => anonymous('GET'), status: 500, error: 'SEC-AUTH-001' },
  { what: 'list with wrong credentials → 401 SEC-AUTH-002', spec: '436 (SecAuth002, all operations)', call: () => caller(kernel, { 'x-api-id': 'administrator', 'x-api-key': 'wrong-secret' })('GET', BASE), status: 401, error: 'SEC-AUTH-002' },
  // ---- add (366-370, 435, 443-444)
  { what: 'add → 201 ExecutionPolicyResponse', spec: '369', call: () => admin('POST', BASE, policy), status: 201, body: (t, j) => t.match(j, { _id: String, name: 'night-window', description: 'Nights only', forbiddenPeriods: policy.forbiddenPeriods }) },
  { what: 'add: week days de-duplicated as stored', spec: 'horizon-mcp: de-duplicated server-side', call: () => admin('GET', `${BASE}night-window`), status: 200, body: (t, j) => t.same(j.authorizedPeriods[0].weekDays, ['MONDAY', 'FRIDAY']) },
  { what: 'add, name taken → ExecutionPolicy004', spec: '444', call: () => admin('POST', BASE, policy), status: 400, error: 'EXECUTION-POLICY-004' },
  { what: 'add, invalid field → ExecutionPolicy002 naming it', spec: '443', call: () => admin('POST', BASE, { name: 'bad-days', authorizedPeriods: [{ weekDays: ['FUNDAY'] }] }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'weekDays') },
  { what: 'add, unknown field → ExecutionPolicy002 naming it', spec: '443', call: () => admin('POST', BASE, { name: 'extra', colour: 'blue' }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'colour') },
  { what: 'add, start after end → ExecutionPolicy002', spec: '443', call: () => admin('POST', BASE, { name: 'backwards', forbiddenPeriods: [{ dateRange: { start: '2031-02-01', end: '2031-01-01' } }] }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'dateRange') },
  { what: 'add, not a calendar date → ExecutionPolicy002', spec: '443', call: () => admin('POST', BASE, { name: 'feb30', forbiddenPeriods: [{ dateRange: { start: '2031-02-30', end: '2031-03-01' } }] }), status: 400, error: 'EXECUTION-POLICY-002' },
  { what: 'add, no name → ExecutionPolicy002', spec: '443', call: () => admin('POST', BASE, { description: 'nameless' }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'name') },
  { what: 'add, malformed JSON → ExecutionPolicy002', spec: '368 (body required JSON), 443', call: () => admin('POST', BASE, '{"name": "x",'), status: 400, error: 'EXECUTION-POLICY-002' },
  { what: 'add, no body → ExecutionPolicy002', spec: '368, 443', call: () => kernel.app.inject({ method: 'POST', url: BASE, headers: { host: 'localhost', ...ADMIN_HEADERS, 'content-type': 'application/json' } }), status: 400, error: 'EXECUTION-POLICY-002' },
  { what: 'add without credentials → SecAuth001 401', spec: '435', call: () => anonymous('POST', { name: 'anon' }), status: 401, error: 'SEC-AUTH-001' },
  { what: 'add without the write permission → 403', spec: '370 (403), 437 SecPerm001', call: () => caller(kernel, reader.headers)('POST', BASE, { name: 'by-reader' }), status: 403, error: 'SEC-PERM-001' },
  { what: 'add by a writer → 201', spec: '369', call: () => caller(kernel, writer.headers)('POST', BASE, { name: 'by-writer' }), status: 201 },
  { what: 'add, store failure → ExecutionPolicy001', spec: '442', before: failingStoreOnce, call: () => admin('POST', BASE, { name: 'lost' }), status: 500, error: 'EXECUTION-POLICY-001' },
  // ---- list again (362-363)
  { what: 'list → 200 JSON array of ExecutionPolicyResponse', spec: '362', call: () => admin('GET', BASE), status: 200, body: (t, j) => t.same(j.map((p: Json) => p.name).sort(), ['by-writer', 'night-window']) },
  { what: 'list by a reader → 200', spec: '362', call: () => caller(kernel, reader.headers)('GET', BASE), status: 200 },
  { what: 'list, caller without the permission → 204, no body', spec: '363, rule 1 (448)', call: () => caller(kernel, nobody.headers)('GET', BASE), status: 204, empty: true },
  { what: 'list, store failure → ExecutionPolicy001', spec: '442', before: failingStoreOnce, call: () => admin('GET', BASE), status: 500, error: 'EXECUTION-POLICY-001' },
  // ---- update (372-376)
  { what: 'update → 200 ExecutionPolicyResponse', spec: '375, rule 1 (378)', call: () => admin('PUT', BASE, { ...policy, description: 'Nights, changed' }), status: 200, body: (t, j) => t.match(j, { _id: String, name: 'night-window', description: 'Nights, changed' }) },
  { what: 'update, echoing _id back → 200', spec: '375 (tolerant reader)', call: async () => admin('PUT', BASE, { ...((await admin('GET', `${BASE}night-window`)).json() as Json), description: 'Echoed' }), status: 200 },
  { what: 'update, unknown name → 404', spec: '376 (404), rule 4 (451)', call: () => admin('PUT', BASE, { name: 'no-such-policy' }), status: 404, error: 'EXECUTION-POLICY-003' },
  { what: 'update, invalid → ExecutionPolicy002', spec: '443', call: () => admin('PUT', BASE, { name: 'night-window', authorizedPeriods: [{ weeks: [54] }] }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'weeks') },
  { what: 'update, time range backwards → ExecutionPolicy002', spec: '443', call: () => admin('PUT', BASE, { name: 'night-window', authorizedPeriods: [{ timeRange: '18:00-08:00' }] }), status: 400, error: 'EXECUTION-POLICY-002', body: (t, j) => t.match(j.message, 'timeRange') },
  { what: 'update, malformed JSON → ExecutionPolicy002', spec: '374, 443', call: () => admin('PUT', BASE, '[not json'), status: 400, error: 'EXECUTION-POLICY-002' },
  { what: 'update without credentials → SecAuth001 401', spec: '435', call: () => anonymous('PUT', { name: 'night-window' }), status: 401, error: 'SEC-AUTH-001' },
  { what: 'update without the write permission → 403', spec: '376 (403)', call: () => caller(kernel, reader.headers)('PUT', BASE, { name: 'night-window' }), status: 403, error: 'SEC-PERM-001' },
  { what: 'update, store failure → ExecutionPolicy001', spec: '442', before: failingStoreOnce, call: () => admin('PUT', BASE, { name: 'night-window' }), status: 500, error: 'EXECUTION-POLICY-001' },
  // ---- GET :name, DELETE :name (the standard set, 309)
  { what: 'get :name → 200', spec: '309', call: () => admin('GET', `${BASE}night-window`), status: 200, body: (t, j) => t.equal(j.description, 'Echoed') },
  { what: 'get unknown :name → 404', spec: '309 (registry -003)', call: () => admin('GET', `${BASE}nothing-here`), status: 404, error: 'EXECUTION-POLICY-003' },
  { what: 'get :name without the permission → 403', spec: '437', call: () => caller(kernel, nobody.headers)('GET', `${BASE}night-window`), status: 403, error: 'SEC-PERM-001' },
  { what: 'wrong host (configuration not allowed) → 404', spec: 'Authentication rule 11', call: () => kernel.app.inject({ method: 'GET', url: BASE, headers: { host: 'evil.example', ...ADMIN_HEADERS } }), status: 404, error: 'HTTP-001' },
  { what: 'delete :name → 204', spec: '309', call: () => admin('DELETE', `${BASE}by-writer`), status: 204, empty: true },
  { what: 'delete unknown :name → 404', spec: '309 (registry -003)', call: () => admin('DELETE', `${BASE}by-writer`), status: 404, error: 'EXECUTION-POLICY-003' },
  { what: 'delete the last → list 204 again', spec: '363', call: async () => (await admin('DELETE', `${BASE}night-window`), admin('GET', BASE)), status: 204, empty: true },
];

for (const row of rows) {
  t.test(`${row.what} [spec ${row.spec}]`, async (t) => {
    row.before?.();
    const res = await row.call();
    t.equal(res.statusCode, row.status, res.body);
    if (row.empty) {
      t.equal(res.body, '', 'no body');
      t.notOk(res.headers['content-type'], 'no content type');
    } else if (res.statusCode < 300) {
      t.equal(res.headers['content-type'], 'application/json', 'application/json exactly');
    }
    if (row.error) {
      t.match(res.headers['content-type'], /^application\/problem\+json/, 'problem+json');
      t.match(res.json(), { error: row.error, status: row.status, title: String, message: String }, `${row.error}, status ${row.status} in the body`);
    }
    row.body?.(t, res.json());
  });
}

t.test('every change is an event naming who, the type and the changed fields', async (t) => {
  const events = await kernel.db.knex('events').where({ object_type: 'execution-policy' }).orderBy('seq');
  const codes = events.map((e: Json) => `${e.code}:${e.object_id}:${e.principal}`);
  t.ok(codes.includes('CONFIG-CREATED:night-window:administrator'));
  t.ok(codes.includes('CONFIG-CREATED:by-writer:exec-writer'));
  t.ok(codes.includes('CONFIG-UPDATED:night-window:administrator'));
  t.ok(codes.includes('CONFIG-DELETED:night-window:administrator'));
  t.match(events.find((e: Json) => e.code === 'CONFIG-UPDATED')?.payload ?? '', 'description', 'the changed field');
});

t.test('export and import carry execution policies', async (t) => {
  t.equal((await admin('POST', BASE, policy)).statusCode, 201);
  const exported = await admin('POST', '/api/v1/system/configurations/export', { executionPolicies: [{ name: 'night-window' }] });
  t.equal(exported.statusCode, 200, exported.body);
  t.match(exported.json().items.executionPolicies, [{ name: 'night-window', description: 'Nights only' }]);
});

t.test('executionAllowed: authorized and forbidden periods (UTC)', async (t) => {
  const at = (iso: string) => Date.parse(iso);
  const p = { name: 'p', authorizedPeriods: [{ weekDays: ['MONDAY'], timeRange: { start: '08:00', end: '18:00' } }], forbiddenPeriods: [{ dateRange: { start: '2031-01-06', end: '2031-01-06' } }] };
  t.ok(executionAllowed(p, at('2031-01-13T09:00:00Z')), 'a Monday at 09:00');
  t.notOk(executionAllowed(p, at('2031-01-13T19:00:00Z')), 'a Monday at 19:00');
  t.notOk(executionAllowed(p, at('2031-01-14T09:00:00Z')), 'a Tuesday');
  t.notOk(executionAllowed(p, at('2031-01-06T09:00:00Z')), 'a forbidden Monday');
  t.ok(executionAllowed({ name: 'always' }, at('2031-01-06T03:00:00Z')), 'no period: always');
  t.ok(executionAllowed({ name: 'w', authorizedPeriods: [{ weeks: [1] }] }, at('2031-01-07T00:00:00Z')), 'day 7 is in aligned week 1');
  t.notOk(executionAllowed({ name: 'w', authorizedPeriods: [{ weeks: [1] }] }, at('2031-01-08T00:00:00Z')), 'day 8 is in week 2');
});
