import t from 'tap';
import { DiscoveryEventStore } from '../../../core/discovery/event-store.js';
import { DISCOVERY_EVENTS_SOURCE, DISCOVERY_SETTLE_MS, EVENTS_SOURCE } from '../../../core/events/analytics/sources.js';
import { AnalyticsUpdater } from '../../../core/events/analytics/updater.js';
import { EventStore, type EventStatus } from '../../../core/events/store.js';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

const EVENTS = '/api/v1/analytics/events';
const DISCOVERY = '/api/v1/analytics/discovery/events';
const DAY = 86_400_000;
const DAY1 = Date.UTC(2025, 2, 10);
const DAY2 = DAY1 + DAY;

const call = (kernel: Kernel, method: 'GET' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string> = ADMIN_HEADERS) => kernel.app.inject({ method, url, headers });
const json = async (kernel: Kernel, method: 'GET' | 'PATCH' | 'DELETE', url: string) => {
  const res = await call(kernel, method, url);
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};

/** Appends events stamped at `at` (the chain is shared with the kernel's store). */
async function appendAt(kernel: Kernel, at: number, events: [code: string, status: EventStatus, module?: string, tenant?: string][]) {
  const store = new EventStore(kernel.db.knex, kernel.db.engine, () => at);
  for (const [code, status, module = 'test', tenant = 'default'] of events) await store.append({ tenant, code, module, status, payload: {} });
}

t.test('event analytics: counts after PATCH, incremental updates, ranges, flush and rebuild', async (t) => {
  const kernel = await bootKernel(t);
  const empty = await json(kernel, 'GET', EVENTS);
  t.same(empty, { total: 0, byDay: [], byCode: {}, byModule: {}, byStatus: {}, lastUpdate: null }, 'nothing counted before the first update');

  await appendAt(kernel, DAY1 + 1000, [
    ['TEST-A', 'success'],
    ['TEST-A', 'success'],
    ['TEST-B', 'failure'],
    ['TEST-A', 'warning', 'other-module'],
    ['TEST-SECRET', 'success', 'test', 'other-tenant'],
  ]);
  await appendAt(kernel, DAY2 + 5000, [
    ['TEST-A', 'success'],
    ['TEST-B', 'success'],
  ]);
  t.equal((await json(kernel, 'GET', EVENTS)).total, 0, 'reads are precomputed: nothing until an update');

  const before = Date.now();
  const first = await call(kernel, 'PATCH', EVENTS);
  t.equal(first.statusCode, 200);
  t.equal(first.headers['content-type'], 'application/json');
  const counted = first.json();
  t.same(
    { ...counted, lastUpdate: undefined },
    {
      total: 6,
      byDay: [
        { day: DAY1, total: 4 },
        { day: DAY2, total: 2 },
      ],
      byCode: { 'TEST-A': 4, 'TEST-B': 2 },
      byModule: { 'other-module': 1, test: 5 },
      byStatus: { failure: 1, success: 4, warning: 1 },
      lastUpdate: undefined,
    },
    "PATCH counts every event of the tenant (not another tenant's)",
  );
  t.ok(counted.lastUpdate >= before, 'lastUpdate is when the update ran');
  t.same(await json(kernel, 'GET', EVENTS), counted, 'GET answers the same counts');

  t.same((await json(kernel, 'PATCH', EVENTS)).byCode, counted.byCode, 'an update with nothing new changes nothing');

  await appendAt(kernel, DAY2 + 9000, [
    ['TEST-A', 'success'],
    ['TEST-C', 'failure'],
  ]);
  const incremented = await json(kernel, 'PATCH', EVENTS);
  t.equal(incremented.total, 8, 'events appended after an update are added once');
  t.same(incremented.byCode, { 'TEST-A': 5, 'TEST-B': 2, 'TEST-C': 1 });
  t.same(incremented.byDay, [
    { day: DAY1, total: 4 },
    { day: DAY2, total: 4 },
  ]);

  const day2 = await json(kernel, 'GET', `${EVENTS}?from=${DAY2 + 10}&to=${DAY2 + 20}`);
  t.equal(day2.total, 4, 'from/to select whole UTC days');
  t.same(day2.byStatus, { failure: 1, success: 3 });
  t.equal((await json(kernel, 'GET', `${EVENTS}?to=${DAY1}`)).total, 4, 'to alone');
  t.equal((await json(kernel, 'GET', `${EVENTS}?from=${DAY2 + DAY}`)).total, 0, 'a range without events');
  const reversed = await call(kernel, 'GET', `${EVENTS}?from=${DAY2}&to=${DAY1}`);
  t.equal(reversed.statusCode, 400);
  t.equal(reversed.headers['content-type'], 'application/problem+json');
  t.equal(reversed.json().error, 'EVT-002');
  t.equal((await call(kernel, 'GET', `${EVENTS}?from=yesterday`)).statusCode, 400, 'from must be epoch ms');
  t.equal((await call(kernel, 'GET', `${EVENTS}?since=1`)).statusCode, 400, 'unknown parameters are refused');

  const flushed = await json(kernel, 'DELETE', EVENTS);
  t.same(flushed, { total: 0, byDay: [], byCode: {}, byModule: {}, byStatus: {}, lastUpdate: null }, 'DELETE empties the counts');
  const rebuilt = await json(kernel, 'PATCH', EVENTS);
  t.same({ ...rebuilt, lastUpdate: 0 }, { ...incremented, lastUpdate: 0 }, 'the next update rebuilds the same counts');
});

t.test('event analytics: batches, concurrent updaters and the job', async (t) => {
  const kernel = await bootKernel(t, { database: { pool: { min: 0, max: 4 } } });
  const codes = ['TEST-A', 'TEST-B', 'TEST-C'];
  await appendAt(
    kernel,
    DAY1,
    Array.from({ length: 23 }, (_, i) => [codes[i % 3]!, 'success'] as [string, EventStatus]),
  );
  // Two nodes (or the job and a PATCH) at once, in batches of 4: each row is counted by exactly one of them.
  const one = new AnalyticsUpdater(kernel.db.knex, kernel.db.engine, Date.now, 4);
  const two = new AnalyticsUpdater(kernel.db.knex, kernel.db.engine, Date.now, 4);
  const [a, b] = await Promise.all([one.update(EVENTS_SOURCE), two.update(EVENTS_SOURCE)]);
  t.equal(a + b, 23, 'every event counted once across both updaters');
  const counts = await json(kernel, 'GET', EVENTS);
  t.same(counts.byCode, { 'TEST-A': 8, 'TEST-B': 8, 'TEST-C': 7 });
  t.equal((await one.cursor(EVENTS_SOURCE)).seq, 23, 'the cursor is at the last event');

  const jobs = await kernel.scheduler.agenda.queryJobs({ name: 'analytics.events' });
  t.equal(jobs.jobs.length, 1, 'a repeating update job is scheduled');
  t.ok(jobs.jobs[0]!.repeatInterval, 'it repeats');
  t.equal((await kernel.scheduler.agenda.queryJobs({ name: 'analytics.discovery-events' })).jobs.length, 1);
});

t.test('discovery event analytics: counts by campaign, settle window, flush', async (t) => {
  const kernel = await bootKernel(t);
  const old = Date.now() - 10 * 60_000;
  const store = (at: number) => new DiscoveryEventStore(kernel.db.knex, () => at);
  await store(old).append('default', [
    { campaign: 'lan', code: 'NETSCAN', status: 'success' },
    { campaign: 'lan', code: 'NETSCAN', status: 'failure' },
    { campaign: 'files', code: 'LOCALSCAN', status: 'success' },
  ]);
  await store(old).append('other', { campaign: 'lan', code: 'NETSCAN', status: 'success' });
  const counted = await json(kernel, 'PATCH', DISCOVERY);
  t.same(
    { ...counted, lastUpdate: undefined },
    {
      total: 3,
      byDay: [{ day: Math.floor(old / DAY) * DAY, total: 3 }],
      byCampaign: { files: 1, lan: 2 },
      byCode: { LOCALSCAN: 1, NETSCAN: 2 },
      byStatus: { failure: 1, success: 2 },
      lastUpdate: undefined,
    },
    "counts of this tenant's discovery events",
  );

  // A batch recorded just now may still be behind a slower one in flight: it is counted once it settles.
  let now = Date.now();
  const updater = new AnalyticsUpdater(kernel.db.knex, kernel.db.engine, () => now, 2);
  await store(now).append('default', [
    { campaign: 'lan', code: 'NETSCAN', status: 'warning' },
    { campaign: 'lan', code: 'SESSION-END', status: 'success' },
    { campaign: 'lan', code: 'SESSION-END', status: 'success' },
  ]);
  t.equal(await updater.update(DISCOVERY_EVENTS_SOURCE), 0, 'too recent: left for a later update');
  now += DISCOVERY_SETTLE_MS;
  t.equal(await updater.update(DISCOVERY_EVENTS_SOURCE), 3, 'counted once settled, across batches of 2');
  t.equal(await updater.update(DISCOVERY_EVENTS_SOURCE), 0, 'and only once');
  const after = await json(kernel, 'GET', DISCOVERY);
  t.equal(after.total, 6);
  t.same(after.byCode, { LOCALSCAN: 1, NETSCAN: 3, 'SESSION-END': 2 });

  t.equal((await json(kernel, 'DELETE', DISCOVERY)).total, 0, 'flushed');
  t.equal((await json(kernel, 'GET', EVENTS)).total, 0, 'event analytics untouched by the discovery flush');
  const rebuilt = await json(kernel, 'PATCH', DISCOVERY);
  t.same(rebuilt.byCode, { LOCALSCAN: 1, NETSCAN: 2 }, 'rebuilt from the start, up to the settle window (real time)');
  await updater.update(DISCOVERY_EVENTS_SOURCE);
  t.same((await json(kernel, 'GET', DISCOVERY)).byCode, after.byCode, 'and the settled rest: the same counts as before the flush');
});

t.test('analytics access: read permission, write permission, configuration capability', async (t) => {
  const kernel = await bootKernel(t, { certwright: { endpoints: [{ host: 'localhost', configuration: true }, { host: 'events.example', events: true, webra: true }] as never } });
  const reader = await createPrincipal(kernel, 'reader', { permissions: [{ value: 'search:events' }] });
  const admin = await createPrincipal(kernel, 'sysadmin', { permissions: [{ value: 'configuration:system:write' }] });
  t.equal((await call(kernel, 'GET', EVENTS, {})).statusCode, 401);
  t.equal((await call(kernel, 'GET', EVENTS, reader.headers)).statusCode, 200, 'search:events reads event analytics');
  t.equal((await call(kernel, 'GET', DISCOVERY, reader.headers)).statusCode, 403, 'but not discovery event analytics');
  for (const method of ['PATCH', 'DELETE'] as const) {
    const refused = await call(kernel, method, EVENTS, reader.headers);
    t.equal(refused.statusCode, 403, `${method} needs configuration:system:write`);
    t.equal(refused.json().error, 'SEC-PERM-001');
    t.equal((await call(kernel, method, DISCOVERY, admin.headers)).statusCode, 200, `${method} with configuration:system:write`);
  }
  const offHost = await call(kernel, 'GET', EVENTS, { ...ADMIN_HEADERS, host: 'events.example' });
  t.equal(offHost.statusCode, 404, 'analytics belong to the configuration capability');
  t.equal(offHost.json().error, 'HTTP-001');
});
