import type { JobLogEntry } from 'agenda';
import type { Test } from 'tap';
import { KnexJobLogger } from '../../../../../core/scheduler/knex-backend/index.js';
import type { DbFactory } from '../harness.js';

/** KnexJobLogger: log, getLogs (every filter, pagination, sort, total), clearLogs. */
export function loggerSuite(t: Test, db: DbFactory): void {
  t.test('job logs: write, filter, page, clear', async (t) => {
    const { knex } = await db.open(t);
    const logger = new KnexJobLogger(knex);
    await logger.connect();
    const base = Date.UTC(2030, 0, 1);
    const entries: Omit<JobLogEntry, '_id'>[] = [
      { timestamp: new Date(base), level: 'debug', event: 'locked', jobId: 'j1', jobName: 'mail', message: 'job locked' },
      { timestamp: new Date(base + 1000), level: 'info', event: 'start', jobId: 'j1', jobName: 'mail', message: 'job started', agendaName: 'node-a' },
      {
        timestamp: new Date(base + 2000),
        level: 'error',
        event: 'fail',
        jobId: 'j1',
        jobName: 'mail',
        message: 'job failed: boom',
        error: 'boom',
        failCount: 1,
        meta: { attempt: 1, host: 'smtp' },
      },
      { timestamp: new Date(base + 3000), level: 'info', event: 'retry', jobId: 'j1', jobName: 'mail', message: 'retry #1', retryDelay: 500, retryAttempt: 1 },
      { timestamp: new Date(base + 4000), level: 'info', event: 'success', jobId: 'j2', jobName: 'report', message: 'job succeeded', duration: 42 },
      { timestamp: new Date(base + 4000), level: 'info', event: 'complete', jobId: 'j2', jobName: 'Report', message: 'job complete', duration: 42 },
    ];
    for (const entry of entries) await logger.log(entry);

    const all = await logger.getLogs();
    t.equal(all.total, 6);
    t.same(
      all.entries.map((e) => e.message),
      ['job complete', 'job succeeded', 'retry #1', 'job failed: boom', 'job started', 'job locked'],
      'newest first by default; same millisecond in reverse insertion order',
    );
    const failed = all.entries.find((e) => e.event === 'fail')!;
    t.match(failed, { timestamp: new Date(base + 2000), level: 'error', jobId: 'j1', jobName: 'mail', error: 'boom', failCount: 1, meta: { attempt: 1, host: 'smtp' } });
    t.type(failed._id, 'string');
    t.equal(failed.duration, undefined, 'absent fields read back undefined');
    t.match(all.entries.find((e) => e.event === 'retry'), { retryDelay: 500, retryAttempt: 1 });
    t.equal(all.entries.find((e) => e.event === 'start')?.agendaName, 'node-a');

    const count = async (query: Parameters<KnexJobLogger['getLogs']>[0]) => (await logger.getLogs(query)).total;
    t.equal(await count({ jobId: 'j1' }), 4, 'jobId');
    t.equal(await count({ jobName: 'report' }), 1, 'jobName (exact)');
    t.equal(await count({ level: 'info' }), 4, 'one level');
    t.equal(await count({ level: ['debug', 'error'] }), 2, 'levels');
    t.equal(await count({ level: [] }), 0, 'no levels: nothing (as on PostgreSQL)');
    t.equal(await count({ event: 'fail' }), 1, 'one event');
    t.equal(await count({ event: ['start', 'success', 'complete'] }), 3, 'events');
    t.equal(await count({ from: new Date(base + 1000), to: new Date(base + 3000) }), 3, 'from/to inclusive');
    t.equal(await count({ jobId: 'j1', level: 'info', from: new Date(base + 2000) }), 1, 'filters combine');

    const page = await logger.getLogs({ jobName: 'mail', sort: 'asc', offset: 1, limit: 2 });
    t.same([page.total, page.entries.map((e) => e.event)], [4, ['start', 'fail']], 'sort asc, offset, limit; total ignores the page');
    for (let i = 0; i < 60; i++) await logger.log({ timestamp: new Date(base + 10_000 + i), level: 'debug', event: 'locked', jobName: 'bulk', message: `n${i}` });
    const bulk = await logger.getLogs({ jobName: 'bulk' });
    t.same([bulk.total, bulk.entries.length, bulk.entries[0]?.message], [60, 50, 'n59'], 'default limit 50');

    t.equal(await logger.clearLogs({ jobName: 'bulk', level: 'info' }), 0);
    t.equal(await logger.clearLogs({ jobName: 'bulk' }), 60, 'clear by filter');
    t.equal(await logger.clearLogs({ to: new Date(base + 1000) }), 2);
    t.equal((await logger.getLogs()).total, 4);
    t.equal(await logger.clearLogs(), 4, 'clear all');
    t.equal((await logger.getLogs()).total, 0);
  });
}
