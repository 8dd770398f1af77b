import type { Test } from 'tap';
import { KnexJobRepository } from '../../../../../core/scheduler/knex-backend/index.js';
import { countJobs, job, ms, rawRow, type DbFactory } from '../harness.js';

const HOUR = 3_600_000;

/** saveJob (insert, update by id, single upsert, unique/insertOnly/debounce) and saveJobState. */
export function saveSuite(t: Test, db: DbFactory): void {
  t.test('insert: a new job gets a 24-hex id and is stored as given', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const nextRunAt = new Date(Date.now() + HOUR);
    const saved = await repo.saveJob(
      job('insert', { priority: 10, nextRunAt, data: { a: 1, nested: { b: 'x' } }, repeatInterval: 5000, skipDays: [0, 6], fork: true }),
      { lastModifiedBy: 'node-a' },
    );
    t.match(String(saved._id), /^[0-9a-f]{24}$/);
    t.same(saved.data, { a: 1, nested: { b: 'x' } });
    t.equal(saved.nextRunAt?.getTime(), nextRunAt.getTime());
    t.equal(saved.repeatInterval, '5000', 'a numeric interval is stored as text, as on PostgreSQL');
    t.same(await repo.getJobById(String(saved._id)), saved, 'getJobById reads back what saveJob returned');
    const row = await rawRow(knex, saved._id);
    t.equal(ms(row.next_run_at), nextRunAt.getTime(), 'dates are epoch milliseconds');
    t.equal(row.single_key, null, 'a normal job has no single key');
    t.equal(row.last_modified_by, 'node-a');
    t.equal(row.skip_days, '[0,6]');
    t.equal(await repo.getJobById('0123456789abcdef01234567'), null, 'an unknown id is null');
  });

  t.test('insert: a job without data stores NULL and reads back null', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const saved = await repo.saveJob(job('no-data', { data: undefined }), undefined);
    t.equal((await rawRow(knex, saved._id)).data, null);
    t.equal((await repo.getJobById(String(saved._id)))?.data, null);
  });

  t.test('update by id: user fields change, processor fields stay, failure fields follow the caller', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const first = await repo.saveJob(job('update', { data: { v: 1 } }), undefined);
    const lockedAt = new Date(Date.now() - 1000);
    await repo.saveJobState({ ...first, lockedAt, lastRunAt: lockedAt, failReason: 'boom', failCount: 2, failedAt: lockedAt }, undefined);
    const nextRunAt = new Date(Date.now() + HOUR);
    const updated = await repo.saveJob({ ...first, data: { v: 2 }, priority: 5, nextRunAt, disabled: true }, { lastModifiedBy: 'node-b' });
    t.equal(String(updated._id), String(first._id), 'same job');
    t.same(updated.data, { v: 2 });
    t.equal(updated.priority, 5);
    t.equal(updated.disabled, true);
    t.equal(updated.nextRunAt?.getTime(), nextRunAt.getTime());
    t.equal(updated.lockedAt?.getTime(), lockedAt.getTime(), 'the lock is the processor’s, not touched by a save');
    t.equal(updated.lastRunAt?.getTime(), lockedAt.getTime());
    // Agenda's Job.save() leaves the failure fields out; the PostgreSQL backend then writes them as NULL.
    t.equal(updated.failReason, undefined, 'failure fields not given are cleared');
    t.equal(updated.failCount, undefined);
    t.equal(updated.lastModifiedBy, 'node-b');
  });

  t.test('update by id: a job that is gone (or renamed) is returned as given, nothing inserted', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const saved = await repo.saveJob(job('gone'), undefined);
    const renamed = await repo.saveJob({ ...saved, name: 'other-name', data: { changed: true } }, undefined);
    t.equal(renamed.name, 'other-name', 'returned as given');
    t.same((await repo.getJobById(String(saved._id)))?.data, {}, 'the stored job is untouched: id and name must both match');
    await repo.removeJobs({ id: String(saved._id) });
    const ghost = { ...saved, data: { x: 1 } };
    t.equal(await repo.saveJob(ghost, undefined), ghost);
    t.equal(await countJobs(knex), 0, 'not re-inserted');
  });

  t.test('single: one job per name, upserted; a past nextRunAt does not replace a stored one', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const future = new Date(Date.now() + HOUR);
    const first = await repo.saveJob(job('tick', { type: 'single', nextRunAt: future, repeatInterval: '1 hour', data: { v: 1 } }), undefined);
    t.equal((await rawRow(knex, first._id)).single_key, 'tick');

    const later = new Date(Date.now() + 2 * HOUR);
    const second = await repo.saveJob(job('tick', { type: 'single', nextRunAt: later, repeatInterval: '2 hours', data: { v: 2 } }), undefined);
    t.equal(String(second._id), String(first._id), 'the same job, updated');
    t.equal(second.nextRunAt?.getTime(), later.getTime(), 'a future nextRunAt replaces the stored one');
    t.equal(second.repeatInterval, '2 hours');
    t.same(second.data, { v: 2 });

    const third = await repo.saveJob(job('tick', { type: 'single', nextRunAt: new Date(Date.now() - 1000), data: { v: 3 } }), undefined);
    t.equal(third.nextRunAt?.getTime(), later.getTime(), 'a past nextRunAt keeps the planned one (COALESCE)');
    t.same(third.data, { v: 3 }, 'while the other fields are updated');

    await knex('scheduler_jobs').where('id', String(first._id)).update({ next_run_at: null });
    const past = new Date(Date.now() - 500);
    const fourth = await repo.saveJob(job('tick', { type: 'single', nextRunAt: past }), undefined);
    t.equal(fourth.nextRunAt?.getTime(), past.getTime(), 'with no stored nextRunAt, the past one is taken');

    await repo.saveJob(job('tick', { type: 'normal' }), undefined);
    t.equal(await countJobs(knex, 'tick'), 2, 'normal jobs of that name do not collide with it');
  });

  t.test('single: names are exact (case-sensitive)', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const lower = await repo.saveJob(job('report', { type: 'single', data: { v: 'lower' } }), undefined);
    // On MySQL/MariaDB too: the migration gives the name columns a binary collation.
    const upper = await repo.saveJob(job('Report', { type: 'single', data: { v: 'upper' } }), undefined);
    t.not(String(upper._id), String(lower._id), 'two jobs');
    t.same((await repo.getJobById(String(lower._id)))?.data, { v: 'lower' }, 'the other job is not overwritten');
  });

  t.test('unique: matches name and every key, updates the match, else inserts', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const key = { 'data.user': 'u1', 'data.scope.org': 7 };
    const a = await repo.saveJob(job('sync', { data: { user: 'u1', scope: { org: 7 }, n: 1 }, unique: key }), undefined);
    const b = await repo.saveJob(job('sync', { data: { user: 'u1', scope: { org: 7 }, n: 2 }, unique: key, nextRunAt: new Date(Date.now() + HOUR) }), undefined);
    t.equal(String(b._id), String(a._id), 'the same job (nested path data.scope.org)');
    t.same(b.data, { user: 'u1', scope: { org: 7 }, n: 2 });
    t.equal(b.debounceStartedAt, undefined);
    const c = await repo.saveJob(job('sync', { data: { user: 'U1', scope: { org: 7 } }, unique: { 'data.user': 'U1', 'data.scope.org': 7 } }), undefined);
    t.not(String(c._id), String(a._id), 'string values compare exactly (case-sensitive)');
    const d = await repo.saveJob(job('other', { data: { user: 'u1', scope: { org: 7 } }, unique: key }), undefined);
    t.not(String(d._id), String(a._id), 'another name is another job');

    // As on PostgreSQL (data->>'key' = String(value)): values compare as text.
    const e = await repo.saveJob(job('sync', { data: { user: 'u1', scope: { org: '7' } }, unique: key }), undefined);
    t.equal(String(e._id), String(a._id), 'the number 7 matches the stored "7" (text comparison)');

    const byColumn = await repo.saveJob(job('sync', { priority: 3, data: {}, unique: { priority: 3 } }), undefined);
    const again = await repo.saveJob(job('sync', { priority: 3, data: { again: true }, unique: { priority: 3 } }), undefined);
    t.equal(String(again._id), String(byColumn._id), 'a column key (allow-listed)');
    await t.rejects(repo.saveJob(job('sync', { unique: { 'name = name; --': 1 } }), undefined), /Invalid unique constraint field/);
    await t.rejects(repo.saveJob(job('sync', { unique: { singleKey: 'x' } }), undefined), /Invalid unique constraint field/);
  });

  t.test('unique + insertOnly: an existing job is returned untouched', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const first = await repo.saveJob(job('once', { data: { k: 1, v: 'first' }, unique: { 'data.k': 1 }, uniqueOpts: { insertOnly: true } }), undefined);
    const second = await repo.saveJob(job('once', { data: { k: 1, v: 'second' }, unique: { 'data.k': 1 }, uniqueOpts: { insertOnly: true } }), undefined);
    t.equal(String(second._id), String(first._id));
    t.same(second.data, { k: 1, v: 'first' }, 'not updated');
  });

  t.test('debounce trailing: each save pushes the run; maxWait forces it', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const opts = { debounce: { delay: 60_000, maxWait: 300_000, strategy: 'trailing' as const } };
    const save = (n: number) => repo.saveJob(job('index', { data: { e: 'x', n }, unique: { 'data.e': 'x' }, uniqueOpts: opts }), undefined);
    const before = Date.now();
    const first = await save(1);
    t.ok(first.nextRunAt!.getTime() >= before + 60_000, 'a new job waits for the quiet period');
    t.ok(first.debounceStartedAt!.getTime() >= before, 'its window starts now');
    await knex('scheduler_jobs').where('id', String(first._id)).update({ next_run_at: before + 1 });
    const second = await save(2);
    t.equal(String(second._id), String(first._id));
    t.ok(second.nextRunAt!.getTime() >= before + 60_000, 'a later save pushes the run again');
    t.equal(second.debounceStartedAt?.getTime(), first.debounceStartedAt?.getTime(), 'the window start is kept');
    t.same(second.data, { e: 'x', n: 2 });
    // The window opened longer ago than maxWait: run now, and reset the window.
    await knex('scheduler_jobs').where('id', String(first._id)).update({ debounce_started_at: Date.now() - 400_000 });
    const third = await save(3);
    t.ok(Math.abs(third.nextRunAt!.getTime() - Date.now()) < 5_000, 'maxWait reached: runs now');
    t.equal(third.debounceStartedAt, undefined, 'and the window is reset');
  });

  t.test('debounce leading: the first save runs as scheduled, later ones only update data', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const opts = { debounce: { delay: 60_000, strategy: 'leading' as const } };
    const now = new Date();
    const first = await repo.saveJob(job('notify', { nextRunAt: now, data: { c: '#a', n: 1 }, unique: { 'data.c': '#a' }, uniqueOpts: opts }), undefined);
    t.equal(first.nextRunAt?.getTime(), now.getTime(), 'runs immediately');
    const second = await repo.saveJob(job('notify', { nextRunAt: new Date(Date.now() + HOUR), data: { c: '#a', n: 2 }, unique: { 'data.c': '#a' }, uniqueOpts: opts }), undefined);
    t.equal(String(second._id), String(first._id));
    t.equal(second.nextRunAt?.getTime(), now.getTime(), 'nextRunAt kept');
    t.same(second.data, { c: '#a', n: 2 });
    t.equal(second.debounceStartedAt?.getTime(), first.debounceStartedAt?.getTime());
  });

  t.test('saveJobState: writes the processor fields; throws when the job is gone', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const saved = await repo.saveJob(job('state'), undefined);
    const at = new Date(Date.now() - 5000);
    await repo.saveJobState({ ...saved, lockedAt: at, lastRunAt: at, lastFinishedAt: at, nextRunAt: null, progress: 42.5, failCount: 1, failReason: 'r', failedAt: at }, { lastModifiedBy: 'w' });
    const read = await repo.getJobById(String(saved._id));
    t.match(read, { lockedAt: at, lastRunAt: at, lastFinishedAt: at, nextRunAt: null, progress: 42.5, failCount: 1, failReason: 'r', failedAt: at, lastModifiedBy: 'w' });
    // Writing the same values again still counts as one row (MySQL: found rows, not changed rows).
    await repo.saveJobState({ ...saved, lockedAt: at, lastRunAt: at }, undefined);
    await repo.saveJobState({ ...saved, lockedAt: at, lastRunAt: at }, undefined);
    await t.rejects(repo.saveJobState({ ...saved, name: 'renamed' }, undefined), /cannot be updated in the database/);
    await repo.removeJobs({ id: String(saved._id) });
    await t.rejects(repo.saveJobState(saved, undefined), /cannot be updated in the database, maybe it does not exist anymore/);
    await t.rejects(repo.saveJobState(job('no-id'), undefined), /without job ID/);
  });
}
