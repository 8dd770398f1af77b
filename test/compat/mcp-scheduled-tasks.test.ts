/**
 * Contract tests: the scheduled-task configuration tools of the vendor's MCP server (evertrust/horizon-mcp,
 * src/tools/config/scheduled-tasks.ts), each request sent exactly as the tool sends it and each answer checked
 * as the client reads it (transport facts: mcp-config-client.ts). Line ranges are those of the index's copy of
 * src/tools/config/scheduled-tasks.ts (16a96fa).
 *
 * What the tool does (facts, none of its code copied):
 * - SPEC (L36-L55): collection /api/v1/scheduler/tasks, item /api/v1/scheduler/tasks/{name}, id field `name`,
 *   immutable keys [name, _id, type, reportType], strip fields [_id, tenant, host, status, lastExecutionDate,
 *   lastCompletionDate, detail, executionId], PUT on the collection.
 * - buildScheduledTaskBody (L166-L209): the body is flat: `{...config, type, name, cron, enabled}` then
 *   `reportType` (report_type) — a Horizon report task: reportType attachment_email | link_email, recipients
 *   [{type: static|team_*, email|team}], from, title, isHtml, hqlType, hqlQuery…; `cron` is a Quartz expression
 *   (`0 0 8 * * ?`). create (L267-L276, L315) POSTs it and hands the whole answer to the model.
 * - update (L278-L292, L317): _scaffold getStripMergePutExplicit: GET the item, refuse (client side,
 *   CONFIG-IMMUTABLE-OVERRIDE) when an override of type or reportType differs from the GET's, strip, null the
 *   clear_fields, set the overrides (the same flat body as create), PUT the whole on the collection.
 * - list/get (L310-L313), delete (L319-L324): the scaffold's GET collection (normalizeItems, filter on `name`),
 *   GET item, DELETE item.
 */
import t, { type Test } from 'tap';
import { bootKernel } from '../helpers/kernel.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t);
const mcp = new McpClient(kernel);
await mcp.init();

const SPEC = {
  routeCollection: '/api/v1/scheduler/tasks',
  routeItem: '/api/v1/scheduler/tasks/{name}',
  stripFields: ['_id', 'tenant', 'host', 'status', 'lastExecutionDate', 'lastCompletionDate', 'detail', 'executionId'],
} as const;
const IMMUTABLE = ['name', '_id', 'type', 'reportType'] as const;
const NAME = 'mcp-expiring-report';
const DAY = 86_400_000;

/** buildScheduledTaskBody: the config first, then the typed parameters, then reportType. */
const toolBody = (args: { type: 'report' | 'thirdparty'; name: string; cron: string; enabled: boolean; report_type?: string; config?: Json }): Json => ({
  ...(args.config ?? {}),
  type: args.type,
  name: args.name,
  cron: args.cron,
  enabled: args.enabled,
  ...(args.report_type !== undefined ? { reportType: args.report_type } : {}),
});

const REPORT_CONFIG = {
  recipients: [{ type: 'static', email: 'pki-team@example.com' }],
  from: 'horizon@example.com',
  title: 'Certificates expiring within 30 days',
  isHtml: false,
  hqlType: 'hcql',
  hqlQuery: 'valid.until before 30d and status is valid',
};

t.test('create_scheduled_task — horizon-mcp src/tools/config/scheduled-tasks.ts:L36-L55,L166-L209,L267-L276,L315', async (t) => {
  const body = toolBody({ type: 'report', name: NAME, cron: '0 0 8 * * ?', enabled: true, report_type: 'attachment_email', config: REPORT_CONFIG });
  const before = Date.now();
  const res = await mcp.post(SPEC.routeCollection, body);
  expectOk(t, res, 'POST /api/v1/scheduler/tasks with the Horizon report body');
  const task = (res.body ?? {}) as Json;
  t.match(task, { name: NAME, type: 'report', cron: '0 0 8 * * ?', enabled: true, reportType: 'attachment_email', ...REPORT_CONFIG }, 'the answer carries the Horizon keys as sent');
  t.match(task.parameters, { reportType: 'attachment_email', ...REPORT_CONFIG }, "and Certwright's parameters beside them");
  const next = Number(task.nextRun);
  t.equal(next % DAY, 8 * 3_600_000, 'the Quartz cron runs at 08:00:00 (UTC)');
  t.ok(next > before && next <= before + DAY, 'the next 08:00');

  expectProblem(t, await mcp.post(SPEC.routeCollection, body), 'the same task twice', { status: [400, 409], suffix: '004' });
  const badCron = toolBody({ type: 'report', name: 'mcp-bad-cron', cron: '0 0 25 * * ?', enabled: true, report_type: 'attachment_email', config: REPORT_CONFIG });
  const refused = expectProblem(t, await mcp.post(SPEC.routeCollection, badCron), 'a cron that does not parse', { status: 400, suffix: '002' });
  t.match(refused.message, /cron/, 'the message names the cron');
  const link = toolBody({ type: 'report', name: 'mcp-link', cron: '0 0 8 * * ?', enabled: true, report_type: 'link_email', config: { ...REPORT_CONFIG, retentionPeriod: '7 days' } });
  const linked = await mcp.post(SPEC.routeCollection, link);
  expectOk(t, linked, 'a link_email report (the CSV stored, its link mailed)');
  t.match(linked.body, { name: 'mcp-link', reportType: 'link_email' }, 'answered with its report type');
  expectOk(t, await mcp.delete(itemPath(SPEC.routeItem, 'mcp-link')), 'and deleted again', [200, 204]);
  const thirdParty = toolBody({ type: 'thirdparty', name: 'mcp-tp', cron: '0 0 8 * * ?', enabled: true, config: { dryRun: true, module: 'intune', profile: 'p', connector: 'c', enroll: true, revoke: true, renew: true } });
  t.match(expectProblem(t, await mcp.post(SPEC.routeCollection, thirdParty), 'a thirdparty task', { status: 400, suffix: '002' }).message, /thirdparty/);
  const listed = normalizeItems((await mcp.get(SPEC.routeCollection)).body).map((i) => i.name);
  t.same(listed, [NAME], 'nothing half-written by the refused creates');
});

t.test('list_scheduled_tasks — horizon-mcp src/tools/config/scheduled-tasks.ts:L36-L55,L310-L313', async (t) => {
  const res = await mcp.get(SPEC.routeCollection);
  expectOk(t, res, 'GET /api/v1/scheduler/tasks', [200]);
  const items = normalizeItems(res.body);
  for (const item of items) t.type(item.name, 'string');
  const found = items.filter((i) => typeof i.name === 'string' && i.name.toLowerCase().includes('expiring'));
  t.equal(found.length, 1, 'name_contains "expiring" finds the report');
  t.match(found[0], { name: NAME, type: 'report', reportType: 'attachment_email', cron: '0 0 8 * * ?', enabled: true });
});

t.test('get_scheduled_task — horizon-mcp src/tools/config/scheduled-tasks.ts:L36-L55,L310-L313', async (t) => {
  const res = await mcp.get(itemPath(SPEC.routeItem, NAME));
  expectOk(t, res, 'GET one scheduled task', [200]);
  t.ok(res.body !== null && typeof res.body === 'object' && !Array.isArray(res.body), 'one object');
  t.match(res.body, { name: NAME, type: 'report', cron: '0 0 8 * * ?', enabled: true, reportType: 'attachment_email', ...REPORT_CONFIG, status: null, lastExecutionDate: null });
  expectProblem(t, await mcp.get(itemPath(SPEC.routeItem, 'nope')), 'GET of an unknown task', { status: 404, suffix: '003' });
});

t.test('update_scheduled_task — horizon-mcp src/tools/config/scheduled-tasks.ts:L36-L55,L278-L292,L317', async (t) => {
  const recipients = [{ type: 'static', email: 'pki-team@example.com' }, { type: 'static', email: 'security@example.com' }];
  const overrides = toolBody({ type: 'report', name: NAME, cron: '0 30 7 ? * MON-FRI', enabled: false, report_type: 'attachment_email', config: { title: 'Expiring certificates (weekdays)', recipients } });
  const { current, res } = await getStripMergePut(t, mcp, SPEC, NAME, overrides);
  // The tool's own guard runs between its GET and its PUT: an immutable key answered otherwise fails the update.
  for (const k of IMMUTABLE) if (k !== 'name' && overrides[k] !== undefined && current[k] !== undefined) t.same(current[k], overrides[k], `${k} as the GET answers it is what the tool re-sends`);
  expectOk(t, res, 'PUT /api/v1/scheduler/tasks with the merged Horizon body', [200]);
  t.match(res.body, { name: NAME, type: 'report', cron: '0 30 7 ? * MON-FRI', enabled: false, nextRun: null, title: 'Expiring certificates (weekdays)', recipients, from: REPORT_CONFIG.from, hqlQuery: REPORT_CONFIG.hqlQuery });
  t.match((res.body as Json).parameters, { title: 'Expiring certificates (weekdays)', recipients }, 'the parameters follow the flat keys');

  // clear_fields, as the tool documents it (["hqlQuery", "description"]): both sent as null.
  const cleared = await getStripMergePut(t, mcp, SPEC, NAME, { ...toolBody({ type: 'report', name: NAME, cron: '0 30 7 ? * MON-FRI', enabled: true, report_type: 'attachment_email' }), hqlQuery: null, description: null });
  expectOk(t, cleared.res, 'PUT with hqlQuery and description cleared', [200]);
  const after = (cleared.res.body ?? {}) as Json;
  t.equal(after.hqlQuery, undefined, 'the query is gone (every certificate)');
  t.equal((after.parameters as Json).hqlQuery, undefined);
  t.equal(after.description, null);
  t.equal(after.title, 'Expiring certificates (weekdays)', 'the rest is kept by the merge');
  const weekday = new Date(Number(after.nextRun)).getUTCDay();
  t.ok(weekday >= 1 && weekday <= 5 && Number(after.nextRun) % DAY === 7.5 * 3_600_000, 'MON-FRI at 07:30 (UTC)');
});

t.test('delete_scheduled_task — horizon-mcp src/tools/config/scheduled-tasks.ts:L36-L55,L319-L324', async (t: Test) => {
  const res = await mcp.delete(itemPath(SPEC.routeItem, NAME));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(SPEC.routeItem, NAME)), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(SPEC.routeItem, NAME)), 'a second delete', { status: 404, suffix: '003' });
});
