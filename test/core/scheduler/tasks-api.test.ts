import t, { type Test } from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';
import { writePlugin } from '../../helpers/plugins.js';
import { until } from '../../helpers/until.js';

declare global {
  // Runs recorded by the fixture task type below.
  var reportRuns: { taskName: string; parameters: Record<string, unknown> }[] | undefined;
}


async function setup(t: Test): Promise<Kernel> {
  globalThis.reportRuns = [];
  const plugins = tempDir(t);
  writePlugin(
    plugins,
    'report-fixture',
    { id: 'report-fixture', kind: 'storage' },
    `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.taskTypes.register('reporting', {
      category: 'reporting',
      description: 'Mails a report (fixture)',
      parametersSchema: { type: 'object', additionalProperties: false, properties: { recipients: { type: 'array', items: { type: 'string' } }, fail: { type: 'boolean' } } },
      async run({ taskName, parameters }) {
        globalThis.reportRuns.push({ taskName, parameters });
        if (parameters.fail) throw new Error('SMTP server refused the message');
        return { status: 'success', summary: 'report sent to ' + (parameters.recipients ?? []).length + ' recipients' };
      },
    });
  },
});
`,
  );
  const kernel = await bootKernel(t, { plugins: { paths: [plugins] }, scheduler: { processEveryMs: 50 } });
  return kernel;
}

const headers = { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS };

t.test('scheduled tasks: create, validate, run on their CRON, run now, update, delete', async (t) => {
  const kernel = await setup(t);
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    kernel.app.inject({ method, url: `/api/v1/scheduler/tasks/${url}`, headers: payload === undefined ? { host: 'localhost', ...ADMIN_HEADERS } : headers, payload: payload as object });

  const anonymous = await kernel.app.inject({ method: 'GET', url: '/api/v1/scheduler/tasks/', headers: { host: 'localhost' } });
  t.equal(anonymous.statusCode, 401, 'no credentials: 401');
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'configuration:scheduler:read' }] });
  const readOnly = await kernel.app.inject({ method: 'GET', url: '/api/v1/scheduler/tasks/', headers: { host: 'localhost', ...reader.headers } });
  t.equal(readOnly.statusCode, 200, 'configuration:scheduler:read lists tasks');
  const refused = await kernel.app.inject({ method: 'POST', url: '/api/v1/scheduler/tasks/', headers: { host: 'localhost', ...reader.headers }, payload: { name: 'x', type: 'reporting', cron: '0 2 * * *' } });
  t.match(refused.json(), { status: 403, error: 'SEC-PERM-001' }, 'creating needs configuration:scheduler:write');

  const created = await api('POST', '', { name: 'weekly-report', type: 'reporting', cron: '* * * * * *', timezone: 'Europe/Paris', parameters: { recipients: ['pki@example.com'] } });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['content-type'], 'application/json');
  const task = created.json() as Record<string, unknown>;
  t.match(task, { _id: /^[0-9a-f]{24}$/, name: 'weekly-report', type: 'reporting', category: 'reporting', cron: '* * * * * *', timezone: 'Europe/Paris', enabled: true, lastRun: null, lastResult: null });
  t.ok(Number(task.nextRun) > Date.now() - 1000 && Number(task.nextRun) <= Date.now() + 2000, 'next run is the next second (epoch ms)');

  const problems: [string, unknown, string, RegExp][] = [
    ['bad cron', { name: 'x', type: 'reporting', cron: '61 * * * *' }, 'SCHED-002', /cron: "61 \* \* \* \*" is not a valid CRON expression/],
    ['too few fields', { name: 'x', type: 'reporting', cron: '* *' }, 'SCHED-002', /expected 5 or 6 fields/],
    ['bad time zone', { name: 'x', type: 'reporting', cron: '0 2 * * *', timezone: 'Mars/Olympus' }, 'SCHED-002', /timezone: "Mars\/Olympus"/],
    // `report` is built in (Horizon's report task); `reporting` is the fixture plugin's.
    ['unknown type', { name: 'x', type: 'teleport', cron: '0 2 * * *' }, 'SCHED-002', /type: "teleport" is not a registered task type \(known: lifecycle, report, reporting\)/],
    ['bad parameters', { name: 'x', type: 'reporting', cron: '0 2 * * *', parameters: { recipients: 'all' } }, 'SCHED-002', /parameters\.recipients: must be array/],
    ['duplicate name', { name: 'weekly-report', type: 'reporting', cron: '0 2 * * *' }, 'SCHED-004', /already exists/],
    ['unknown field', { name: 'x', type: 'reporting', cron: '0 2 * * *', colour: 'red' }, 'HTTP-003', /./],
    ['missing cron', { name: 'x', type: 'reporting' }, 'HTTP-003', /./],
  ];
  for (const [name, body, code, message] of problems) {
    const res = await api('POST', '', body);
    t.equal(res.statusCode, 400, `${name}: 400`);
    t.equal(res.headers['content-type'], 'application/problem+json');
    t.match(res.json(), { error: code, message }, name);
  }
  const listed = (await api('GET', '')).json();
  t.equal(listed.length, 1, 'nothing half-written by the refused requests');
  t.ok(listed[0].nextRun > Date.now() - 1000 && listed[0].nextRun <= Date.now() + 2000, 'the list shows the next run too');

  await until('the task to run on its CRON', async () => (await api('GET', 'weekly-report')).json().lastResult !== null);
  const ran = (await api('GET', 'weekly-report')).json();
  t.match(ran.lastResult, { status: 'success', summary: 'report sent to 1 recipients' });
  t.ok(ran.lastRun > 0 && ran.lastFinished >= ran.lastRun, 'last run and finish times recorded');
  t.same(globalThis.reportRuns![0], { taskName: 'weekly-report', parameters: { recipients: ['pki@example.com'] } });
  const byId = await api('GET', String(task._id));
  t.equal(byId.json().name, 'weekly-report', ':key accepts the id');
  t.equal((await api('GET', 'no-such-task')).statusCode, 404);
  t.match((await api('GET', 'no-such-task')).json(), { error: 'SCHED-003' });
  const event = await kernel.db.knex('events').where({ code: 'SCHEDULED-TASK-RUN', object_id: 'weekly-report' }).first();
  t.equal(event?.status, 'success', 'each run writes an event');

  // Disable it: no more runs, no next run.
  const disabled = await api('PUT', '', { ...ran, enabled: false });
  t.equal(disabled.statusCode, 200, disabled.body);
  t.match(disabled.json(), { enabled: false, nextRun: null });
  const runsWhenDisabled = globalThis.reportRuns!.length;
  await new Promise((r) => setTimeout(r, 1500));
  t.ok(globalThis.reportRuns!.length <= runsWhenDisabled + 1, 'a disabled task stops running (at most one run already under way)');

  // Run now works on a disabled task, and a failure is kept as the last result.
  await api('PUT', '', { name: 'weekly-report', type: 'reporting', cron: '0 3 * * *', enabled: false, parameters: { fail: true } });
  const before = globalThis.reportRuns!.length;
  const runNow = await api('GET', 'weekly-report/run');
  t.equal(runNow.statusCode, 202);
  await until('the manual run', () => globalThis.reportRuns!.length > before);
  await until('its result', async () => (await api('GET', 'weekly-report')).json().lastResult?.status === 'failure');
  t.match((await api('GET', 'weekly-report')).json().lastResult, { status: 'failure', summary: 'SMTP server refused the message' });

  t.equal((await api('PUT', '', { name: 'ghost', type: 'reporting', cron: '0 3 * * *' })).statusCode, 404, 'PUT of an unknown task');
  const renamed = await api('PUT', '', { _id: task._id, name: 'monthly-report', type: 'reporting', cron: '0 3 1 * *', timezone: 'UTC' });
  t.equal(renamed.json().name, 'monthly-report', 'PUT by _id renames');

  const deleted = await api('DELETE', 'monthly-report');
  t.equal(deleted.statusCode, 204);
  t.equal((await api('GET', 'monthly-report')).statusCode, 404);
  const leftover = await kernel.db.knex('scheduler_jobs').where({ name: 'scheduled-task' }).count({ n: '*' });
  t.equal(Number(leftover[0]!.n), 0, 'its job is gone too');

  const wrongHost = await kernel.app.inject({ method: 'GET', url: '/api/v1/scheduler/tasks/', headers: { host: 'evil.example' } });
  t.equal(wrongHost.statusCode, 404, 'wrong host → 404');
});
