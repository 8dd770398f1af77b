import type { JobParameters, JobState } from 'agenda';
import type { Test } from 'tap';
import { KnexJobRepository } from '../../../../../core/scheduler/knex-backend/index.js';
import { countJobs, job, type DbFactory } from '../harness.js';

const HOUR = 3_600_000;

/** Jobs with varied data, for the data-containment filters. */
async function seedData(repo: KnexJobRepository): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const datas: Record<string, unknown> = {
    plain: { tenant: 't1', kind: 'renew' },
    nested: { tenant: 't1', target: { host: 'a.example', port: 443 }, tags: ['x', 'y'] },
    deep: { tenant: 't2', target: { host: 'b.example', opts: { tls: true } }, list: [{ id: 1, v: 'a' }, { id: 2 }] },
    typed: { tenant: 't2', n: 1, s: '1', b: false, z: null },
    quoted: { 'we"ird.key': 'v', "it's": 'ok' },
    upper: { tenant: 'T1' },
    scalar: 'just-a-string',
    empty: null,
  };
  for (const [label, data] of Object.entries(datas)) ids[label] = String((await repo.saveJob(job('data-job', { data }), undefined))._id);
  return ids;
}

/** removeJobs / disableJobs / enableJobs / purgeAllJobs, queryJobs, overview, names, queue size. */
export function querySuite(t: Test, db: DbFactory): void {
  t.test('data containment (PostgreSQL @> semantics)', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const ids = await seedData(repo);
    const matches = async (data: unknown) =>
      (await repo.queryJobs({ data })).jobs
        .map((j) => Object.entries(ids).find(([, id]) => id === String(j._id))?.[0])
        .sort();
    t.same(await matches({ tenant: 't1' }), ['nested', 'plain'], 'a top-level key');
    t.same(await matches({ tenant: 't1', kind: 'renew' }), ['plain'], 'every key must match');
    t.same(await matches({ target: { host: 'a.example' } }), ['nested'], 'one level of nesting');
    t.same(await matches({ target: { opts: { tls: true } } }), ['deep'], 'two levels of nesting');
    t.same(await matches({ target: {} }), ['deep', 'nested'], 'an empty object matches any object there');
    t.same(await matches({ tags: ['y'] }), ['nested'], 'an array contains the wanted elements');
    t.same(await matches({ tags: ['y', 'x'] }), ['nested'], 'in any order');
    t.same(await matches({ tags: ['z'] }), [], 'not a missing element');
    t.same(await matches({ tags: 'x' }), [], 'a scalar is not found inside a nested array');
    t.same(await matches({ list: [{ id: 2 }] }), ['deep'], 'objects inside arrays, by containment');
    t.same(await matches({ list: [{ id: 3 }] }), []);
    t.same(await matches({ n: 1 }), ['typed'], 'the number 1');
    t.same(await matches({ s: 1 }), [], 'is not the string "1"');
    t.same(await matches({ n: '1' }), []);
    t.same(await matches({ n: true }), [], 'nor true');
    t.same(await matches({ b: false }), ['typed'], 'booleans');
    t.same(await matches({ b: 0 }), []);
    t.same(await matches({ z: null }), ['typed'], 'a JSON null');
    t.same(await matches({ missing: null }), [], 'is not a missing key');
    t.same(await matches({ tenant: 't1 ' }), []);
    t.same(await matches({ tenant: 'T1' }), ['upper'], 'strings compare exactly (case-sensitive)');
    t.same(await matches({ 'we"ird.key': 'v', "it's": 'ok' }), ['quoted'], 'keys with quotes and dots');
    t.same(await matches('just-a-string'), ['scalar'], 'a scalar document');
    t.same(await matches({}), ['deep', 'nested', 'plain', 'quoted', 'typed', 'upper'], '{} matches every object');
    t.same(await matches({ tenant: "t1' OR '1'='1" }), [], 'values are bound, never SQL');
  });

  t.test('removeJobs: by id, ids, name, names, notNames, data; nothing without a criterion', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const saved: JobParameters[] = [];
    for (const [name, data] of [
      ['alpha', { k: 1 }],
      ['alpha', { k: 2 }],
      ['beta', { k: 1 }],
      ['gamma', { k: 1, deep: { x: 'y' } }],
      ['Alpha', { k: 1 }],
      ['delta', { k: 9 }],
      ['delta', { k: 10 }],
    ] as const) {
      saved.push(await repo.saveJob(job(name, { data }), undefined));
    }
    t.equal(await repo.removeJobs({}), 0, 'no criteria: nothing removed');
    t.equal(await repo.removeJobs({ names: [], ids: [], notNames: [] }), 0, 'empty lists are no criteria');
    t.equal(await countJobs(knex), 7);
    t.equal(await repo.removeJobs({ id: String(saved[0]!._id) }), 1, 'by id');
    t.equal(await repo.removeJobs({ ids: [saved[5]!._id!, saved[6]!._id!] }), 2, 'by ids');
    t.equal(await repo.removeJobs({ name: 'alpha', data: { k: 1 } }), 0, 'name and data together (that one is gone)');
    t.equal(await repo.removeJobs({ name: 'gamma', data: { deep: { x: 'y' } } }), 1, 'name and nested data');
    t.equal(await repo.removeJobs({ notNames: ['alpha', 'Alpha'] }), 1, 'notNames: beta only');
    t.equal(await repo.removeJobs({ name: 'alpha' }), 1, 'by exact name: not "Alpha"');
    t.equal(await repo.removeJobs({ names: ['Alpha', 'nope'] }), 1, 'by names');
    t.equal(await countJobs(knex), 0);
  });

  t.test('disableJobs / enableJobs: same filters, counts', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    for (const n of [1, 2, 3]) await repo.saveJob(job('toggle', { data: { n, group: n < 3 ? 'a' : 'b' } }), undefined);
    await repo.saveJob(job('other'), undefined);
    t.equal(await repo.disableJobs({}), 0, 'no criteria: nothing');
    t.equal(await repo.disableJobs({ name: 'toggle', data: { group: 'a' } }), 2);
    t.equal((await repo.queryJobs({ state: 'paused' })).total, 2);
    t.equal((await repo.queryJobs({ includeDisabled: false })).total, 2);
    t.equal(await repo.enableJobs({ data: { n: 2 } }), 1);
    t.equal(await repo.enableJobs({}), 0);
    t.equal(await repo.disableJobs({ notNames: ['toggle'] }), 1);
    t.equal((await repo.queryJobs({ state: 'paused' })).total, 2);
    t.equal(await repo.purgeAllJobs(), 4, 'purgeAllJobs removes everything and counts it');
    t.equal(await countJobs(knex), 0);
  });

  t.test('queryJobs: computed states, filters, sort, pagination and totals', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const now = Date.now();
    const at = (offset: number) => new Date(now + offset);
    const make = async (name: string, over: Partial<JobParameters>, state: Partial<JobParameters> = {}) => {
      const saved = await repo.saveJob(job(name, over), undefined);
      if (Object.keys(state).length) await repo.saveJobState({ ...saved, ...state }, undefined);
      return saved;
    };
    const running = await make('q-running', { nextRunAt: at(-1000) }, { lockedAt: at(-500), lastRunAt: at(-500) });
    await make('q-scheduled', { nextRunAt: at(HOUR) });
    await make('q-queued', { nextRunAt: at(-HOUR) });
    await make('q-completed', { nextRunAt: at(-HOUR) }, { nextRunAt: null, lastRunAt: at(-2000), lastFinishedAt: at(-1000) });
    await make('q-failed', { nextRunAt: at(-HOUR) }, { nextRunAt: null, lastRunAt: at(-3000), lastFinishedAt: at(-1000), failedAt: at(-1000), failCount: 1, failReason: 'x' });
    await make('q-repeating', { nextRunAt: at(2 * HOUR), repeatInterval: '1 hour', type: 'single' });
    await make('q-paused', { nextRunAt: at(3 * HOUR), disabled: true });

    const all = await repo.queryJobs();
    t.equal(all.total, 7);
    const stateOf = Object.fromEntries(all.jobs.map((j) => [j.name, j.state]));
    t.same(stateOf, {
      'q-running': 'running',
      'q-scheduled': 'scheduled',
      'q-queued': 'queued',
      'q-completed': 'completed',
      'q-failed': 'failed',
      'q-repeating': 'repeating',
      'q-paused': 'scheduled',
    });
    t.same(
      all.jobs.map((j) => j.name),
      ['q-paused', 'q-repeating', 'q-scheduled', 'q-running', 'q-queued', 'q-completed', 'q-failed'],
      'default order: nextRunAt desc (nulls last), then lastRunAt desc',
    );
    t.equal(String(all.jobs.find((j) => j.name === 'q-running')?._id), String(running._id));

    for (const state of ['running', 'scheduled', 'queued', 'completed', 'failed', 'repeating', 'paused'] as JobState[]) {
      const result = await repo.queryJobs({ state });
      t.equal(result.total, state === 'scheduled' ? 2 : 1, `state ${state}`);
    }
    const page = await repo.queryJobs({ state: 'scheduled', limit: 1, skip: 1, sort: { nextRunAt: 'asc' } });
    t.same([page.total, page.jobs.map((j) => j.name)], [2, ['q-paused']], 'the page is cut after the state filter; total before it');

    const sorted = await repo.queryJobs({ sort: { name: 'asc' }, skip: 2, limit: 3 });
    t.same([sorted.total, sorted.jobs.map((j) => j.name)], [7, ['q-paused', 'q-queued', 'q-repeating']], 'sort, skip, limit; total of all');
    t.same((await repo.queryJobs({ sort: { name: 'asc' }, skip: 6 })).jobs.map((j) => j.name), ['q-scheduled'], 'skip without limit');
    t.same((await repo.queryJobs({ sort: { lastFinishedAt: 'asc', name: 'desc' }, limit: 2 })).jobs.map((j) => j.name), ['q-failed', 'q-completed']);

    t.equal((await repo.queryJobs({ name: 'q-queued' })).total, 1);
    t.equal((await repo.queryJobs({ names: ['q-queued', 'q-failed', 'nope'] })).total, 2);
    t.equal((await repo.queryJobs({ id: String(running._id) })).jobs[0]?.name, 'q-running');
    t.equal((await repo.queryJobs({ ids: [String(running._id)] })).total, 1);
    t.equal((await repo.queryJobs({ search: 'Q-RE' })).jobs[0]?.name, 'q-repeating', 'search: a case-insensitive substring');
    await repo.saveJob(job('odd_name%'), undefined);
    t.same((await repo.queryJobs({ search: '_' })).jobs.map((j) => j.name), ['odd_name%'], 'search text is literal (_ is no wildcard)');
    t.same((await repo.queryJobs({ search: '%' })).jobs.map((j) => j.name), ['odd_name%'], '(nor %)');
    t.equal((await repo.queryJobs({ includeDisabled: false })).total, 7);
  });

  t.test('overview, distinct names and queue size', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const now = Date.now();
    await repo.saveJob(job('b-job', { nextRunAt: new Date(now - 1000) }), undefined);
    await repo.saveJob(job('b-job', { nextRunAt: new Date(now + HOUR) }), undefined);
    await repo.saveJob(job('b-job', { nextRunAt: new Date(now + HOUR), disabled: true }), undefined);
    const running = await repo.saveJob(job('a-job', { nextRunAt: new Date(now - 2000) }), undefined);
    await repo.saveJobState({ ...running, lockedAt: new Date() }, undefined);
    await repo.saveJob(job('a-job', { nextRunAt: null }), undefined);
    await repo.saveJob(job('B-job', { nextRunAt: new Date(now - 500) }), undefined);

    t.same(await repo.getDistinctJobNames(), ['B-job', 'a-job', 'b-job'], 'exact names, byte order');
    t.same(await repo.getJobsOverview(), [
      { name: 'B-job', total: 1, running: 0, scheduled: 0, queued: 1, completed: 0, failed: 0, repeating: 0, paused: 0 },
      { name: 'a-job', total: 2, running: 1, scheduled: 0, queued: 0, completed: 1, failed: 0, repeating: 0, paused: 0 },
      { name: 'b-job', total: 3, running: 0, scheduled: 2, queued: 1, completed: 0, failed: 0, repeating: 0, paused: 1 },
    ]);
    t.equal(await repo.getQueueSize(), 3, 'jobs whose nextRunAt has passed (locked or not)');
  });
}
