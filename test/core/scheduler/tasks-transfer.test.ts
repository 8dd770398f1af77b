/**
 * Scheduled tasks through configuration export/import: a report task naming a team, imported into a fresh
 * instance (after the team it names) where it is planned on its CRON expression; the team cannot be deleted
 * while the task names it.
 */
import t from 'tap';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller, createPrincipal } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';

const TASKS = '/api/v1/scheduler/tasks/';
const TEAMS = '/api/v1/security/teams/';
const EXPORT = '/api/v1/system/configurations/export';
const IMPORT = '/api/v1/system/configurations/import';

const task = {
  name: 'expiring',
  type: 'report',
  cron: '0 0 8 ? * MON',
  timezone: 'Europe/Paris',
  parameters: {
    reportType: 'attachment_email',
    recipients: [{ type: 'team_contact', team: 'pki' }],
    from: 'certwright@example.com',
    title: 'Expiring certificates',
    isHtml: false,
    hqlType: 'hcql',
    hqlQuery: 'valid.until before 30d',
  },
};

t.test('a task created through its routes is exported, imported into a fresh instance and planned there', async (t) => {
  const a = await bootKernel(t);
  const adminA = caller(a, ADMIN_HEADERS);
  t.equal((await adminA('POST', TEAMS, { name: 'pki', contact: 'pki@example.com' })).statusCode, 201);
  const created = await adminA('POST', TASKS, task);
  t.equal(created.statusCode, 201, created.body);

  const exported = (await adminA('POST', EXPORT, { teams: [{ name: 'pki' }], scheduledTasks: [{ name: 'expiring' }] })).json();
  t.same(exported.items.scheduledTasks, [{ ...task, enabled: true, description: null }], "Certwright's form, the defaults filled in, no run state");
  t.same(Object.keys(exported.items), ['teams', 'scheduledTasks'], 'the team first: the task references it');

  const b = await bootKernel(t);
  const adminB = caller(b, ADMIN_HEADERS);
  const withoutTeam = await adminB('POST', IMPORT, { ...exported, items: { scheduledTasks: exported.items.scheduledTasks }, dryRun: true });
  t.match(withoutTeam.json().items.scheduledTasks, [{ name: 'expiring', action: 'conflict', reason: 'parameters.recipients.team: no team is named "pki"' }], 'a task naming a team that is not there');

  const imported = await adminB('POST', IMPORT, exported);
  t.equal(imported.statusCode, 200, imported.body);
  t.same(imported.json().imported, { teams: ['pki'], scheduledTasks: ['expiring'] });
  const read = await adminB('GET', `${TASKS}expiring`);
  t.equal(read.statusCode, 200, 'answered by its own route');
  t.match(read.json(), { ...task, enabled: true, lastRun: null, lastResult: null, category: 'reporting' });
  t.type(read.json().nextRun, 'number', 'planned on its CRON expression');
  const jobOf = () => b.scheduler.nextRunAt('scheduled-task', { taskId: read.json()._id });
  // The import plans it once committed (the registry's afterChange), after answering.
  await until('the task job', async () => (await jobOf()) !== null);
  t.ok((await jobOf())! > Date.now(), 'its job is planned in the scheduler');
  t.equal((await b.db.knex('events').where({ code: 'CONFIG-CREATED', object_type: 'scheduled-task', object_id: 'expiring' })).length, 1, 'a CONFIG-CREATED event');
  t.same((await adminB('POST', IMPORT, { ...exported, dryRun: true })).json().items.scheduledTasks, [{ name: 'expiring', action: 'unchanged' }], 'a second import changes nothing');

  // A disabled task in the document: its job is cancelled.
  const disabled = structuredClone(exported);
  disabled.items.scheduledTasks[0].enabled = false;
  const updated = await adminB('POST', IMPORT, disabled);
  t.same(updated.json().items.scheduledTasks, [{ name: 'expiring', action: 'update', changed: ['enabled'] }]);
  await until('the job cancelled', async () => (await jobOf()) === null);
  t.pass('disabled: its job is cancelled');
  t.equal((await adminB('GET', `${TASKS}expiring`)).json().nextRun, null);

  const refused = await adminB('DELETE', `${TEAMS}pki`);
  t.equal(refused.statusCode, 400, 'the team a task names cannot be deleted');
  t.match(refused.json(), { error: 'SEC-TEAM-005', referrers: ['scheduled-task/expiring'] });
  t.match(refused.json().message, 'scheduled-task/expiring', 'the message names the task');
  t.equal((await adminB('DELETE', `${TASKS}expiring`)).statusCode, 204);
  t.equal((await adminB('DELETE', `${TEAMS}pki`)).statusCode, 204, 'deleted once no task names it');
});

t.test('importing a report task needs search:certificates with no filter, as saving one through its route does', async (t) => {
  const k = await bootKernel(t);
  const admin = caller(k, ADMIN_HEADERS);
  t.equal((await admin('POST', TEAMS, { name: 'pki', contact: 'pki@example.com' })).statusCode, 201);
  // A document as an export writes it, holding the report task.
  const document = { info: (await admin('POST', EXPORT, { teams: [{ name: 'pki' }] })).json().info, items: { scheduledTasks: [task] } };
  const base = [{ value: 'configuration:scheduler:write' }, { value: 'configuration:scheduler:read' }, { value: 'configuration:security:read' }];
  const filtered = await createPrincipal(k, 'filtered-reporter', { permissions: [...base, { value: 'search:certificates', filter: 'team is "pki"' }] });
  const routeRefusal = await caller(k, filtered.headers)('POST', TASKS, task);
  t.equal(routeRefusal.statusCode, 403, 'the route refuses a filtered principal');
  const imported = await caller(k, filtered.headers)('POST', IMPORT, { ...document, dryRun: true });
  t.equal(imported.statusCode, 200, imported.body);
  t.match(imported.json().items.scheduledTasks, [{ name: 'expiring', action: 'conflict', reason: /needs search:certificates with no filter/ }], 'so does an import');
  t.equal((await caller(k, filtered.headers)('POST', IMPORT, document)).statusCode, 400, 'and the real import is refused');
  t.equal((await admin('GET', `${TASKS}expiring`)).statusCode, 404, 'nothing was created');

  const full = await createPrincipal(k, 'reporter', { permissions: [...base, { value: 'search:certificates' }] });
  const allowed = await caller(k, full.headers)('POST', IMPORT, document);
  t.equal(allowed.statusCode, 200, allowed.body);
  t.same(allowed.json().imported, { scheduledTasks: ['expiring'] }, 'an unfiltered principal imports it');
});
