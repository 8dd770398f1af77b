import knexFactory, { type Knex } from 'knex';
import type { Test } from 'tap';
import { KnexJobRepository } from '../../../../../core/scheduler/knex-backend/index.js';
import { job, ms, rawRow, strategiesFor, type DbFactory } from '../harness.js';

const MINUTE = 60_000;

/** lockJob, getNextJobToRun (with every lock strategy the engine has), unlockJob(s), lock strategy choice. */
export function lockSuite(t: Test, db: DbFactory): void {
  t.test('the lock strategy follows the server', async (t) => {
    const { knex, engine } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const info = await repo.serverInfo();
    t.ok(info.version.length > 0, `server version ${info.version}`);
    // The test servers: SQLite (none), MariaDB 10.11 / MySQL 8 and PostgreSQL (SKIP LOCKED).
    t.equal(await repo.lockStrategy(), engine === 'sqlite' ? 'conditional-update' : 'skip-locked');
    if (engine === 'sqlite') await t.rejects(new KnexJobRepository(knex, { lockStrategy: 'skip-locked' }).lockStrategy(), /SKIP LOCKED/);
  });

  t.test('getNextJobToRun', async (t) => {
    for (const strategy of strategiesFor(db.engine)) {
      t.test(`${strategy}: takes due jobs by nextRunAt then priority, skipping disabled, locked and later ones`, async (t) => {
        const { knex } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy });
        const now = Date.now();
        const at = (offset: number) => new Date(now + offset);
        const save = (label: string, over: Parameters<typeof job>[1]) => repo.saveJob(job('work', { data: { label }, ...over }), undefined);
        await save('b-prio-10', { nextRunAt: at(-1000), priority: 10 });
        await save('a-oldest', { nextRunAt: at(-3000) });
        await save('c-prio-20', { nextRunAt: at(-1000), priority: 20 });
        await save('d-in-scan-window', { nextRunAt: at(50) });
        await save('later', { nextRunAt: at(MINUTE) });
        await save('disabled', { nextRunAt: at(-5000), disabled: true });
        const locked = await save('locked', { nextRunAt: at(-4000) });
        await repo.saveJobState({ ...locked, lockedAt: at(-1000) }, undefined);
        await repo.saveJob(job('other-name', { nextRunAt: at(-9000) }), undefined);
        await repo.saveJob(job('Work', { nextRunAt: at(-9000) }), undefined);

        const scanUntil = at(100);
        const deadline = at(-10 * MINUTE);
        const taken: unknown[] = [];
        for (;;) {
          const next = await repo.getNextJobToRun('work', scanUntil, deadline, at(5), { lastModifiedBy: 'node-a' });
          if (!next) break;
          t.equal(next.lockedAt?.getTime(), now + 5, 'locked at the given now');
          t.equal(next.lastModifiedBy, 'node-a');
          t.equal(next.name, 'work', 'names match exactly');
          taken.push((next.data as { label: string }).label);
        }
        t.same(taken, ['a-oldest', 'c-prio-20', 'b-prio-10', 'd-in-scan-window']);
      });

      t.test(`${strategy}: takes over a job whose lock is older than lockDeadline`, async (t) => {
        const { knex } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy });
        const now = Date.now();
        const stale = await repo.saveJob(job('stale', { nextRunAt: new Date(now - 30 * MINUTE) }), undefined);
        await repo.saveJobState({ ...stale, lockedAt: new Date(now - 20 * MINUTE) }, undefined);
        // A one-off job whose worker died mid-run: nextRunAt was cleared when it started.
        const running = await repo.saveJob(job('stale', { nextRunAt: new Date(now + MINUTE) }), undefined);
        await repo.saveJobState({ ...running, nextRunAt: null, lockedAt: new Date(now - 15 * MINUTE) }, undefined);
        const fresh = await repo.saveJob(job('stale', { nextRunAt: new Date(now - 40 * MINUTE) }), undefined);
        await repo.saveJobState({ ...fresh, lockedAt: new Date(now - MINUTE) }, undefined);

        const deadline = new Date(now - 10 * MINUTE);
        const first = await repo.getNextJobToRun('stale', new Date(now), deadline, undefined, undefined);
        t.equal(String(first?._id), String(stale._id), 'the expired lock is taken over');
        t.ok(first!.lockedAt!.getTime() >= now, 'and renewed');
        const second = await repo.getNextJobToRun('stale', new Date(now), deadline, undefined, undefined);
        t.equal(String(second?._id), String(running._id), 'a running job with an expired lock too (its nextRunAt null sorts last)');
        t.equal(await repo.getNextJobToRun('stale', new Date(now), deadline, undefined, undefined), undefined, 'a fresh lock is kept');
      });

      t.test(`${strategy}: the sort option changes which due job comes first`, async (t) => {
        const { knex } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy, sort: { nextRunAt: 'desc', priority: 'asc' } });
        const now = Date.now();
        await repo.saveJob(job('sorted', { nextRunAt: new Date(now - 2000), data: 'old' }), undefined);
        await repo.saveJob(job('sorted', { nextRunAt: new Date(now - 1000), priority: 5, data: 'new-5' }), undefined);
        await repo.saveJob(job('sorted', { nextRunAt: new Date(now - 1000), priority: -5, data: 'new-minus-5' }), undefined);
        const order = [];
        for (let i = 0; i < 3; i++) order.push((await repo.getNextJobToRun('sorted', new Date(now), new Date(now - MINUTE), undefined, undefined))?.data);
        t.same(order, ['new-minus-5', 'new-5', 'old']);
      });

      t.test(`${strategy}: finished one-off jobs (no next run) are passed over`, async (t) => {
        const { knex } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy });
        const now = Date.now();
        const take = () => repo.getNextJobToRun('finished', new Date(now), new Date(now - MINUTE), undefined, undefined);
        for (let i = 0; i < 40; i++) {
          const done = await repo.saveJob(job('finished', { nextRunAt: new Date(now - 9000 + i) }), undefined);
          await repo.saveJobState({ ...done, nextRunAt: null, lastRunAt: new Date(now - 1000), lastFinishedAt: new Date(now - 900) }, undefined);
        }
        const due = [await repo.saveJob(job('finished', { nextRunAt: new Date(now - 2000) }), undefined), await repo.saveJob(job('finished', { nextRunAt: new Date(now - 1000) }), undefined)];
        // The first claim of a name also looks for expired locks; the next ones take the due path alone.
        t.same([String((await take())?._id), String((await take())?._id)], due.map((j) => String(j._id)));
        t.equal(await take(), undefined);
      });

      t.test(`${strategy}: jobs made lockable behind the ones already taken are taken first, and never missed`, async (t) => {
        const { knex, secondPool } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy });
        const otherNode = new KnexJobRepository(secondPool(), { lockStrategy: strategy });
        const now = Date.now();
        const at = (offset: number) => new Date(now + offset);
        const save = (label: string, offset: number, on = repo) => on.saveJob(job('behind', { nextRunAt: at(offset), data: label }), undefined);
        const take = () => repo.getNextJobToRun('behind', at(0), at(-10 * MINUTE), undefined, undefined);
        const label = (j: Awaited<ReturnType<typeof take>>) => j?.data;
        await save('a', -50_000);
        await save('c', -30_000);
        await save('e', -10_000);
        t.equal(label(await take()), 'a');
        const c = await take();
        t.equal(label(c), 'c');
        await save('b', -40_000);
        t.equal(label(await take()), 'b', 'a job saved before the ones taken');
        await repo.unlockJob(c!);
        t.equal(label(await take()), 'c', 'a job unlocked');
        const e = await take();
        t.equal(label(e), 'e');
        // A repeating job's run ended: its next run is already due, before every job left.
        await save('f', -5_000);
        await repo.saveJobState({ ...e!, lockedAt: undefined, nextRunAt: at(-20_000) }, undefined);
        t.equal(label(await take()), 'e', 'a finished run due again');
        await repo.unlockJobs([c!._id!]);
        t.equal(label(await take()), 'c', 'a job unlocked by id');
        // Another node's writes are not seen by this one: its job may come later, but it comes.
        await save('z', -90_000, otherNode);
        const rest = [label(await take()), label(await take())];
        t.same([...rest].sort(), ['f', 'z']);
        t.equal(await take(), undefined);
      });

      if (strategy === 'skip-locked') {
        t.test(`${strategy}: claims on a session that is not READ COMMITTED`, async (t) => {
          const { knex, engine } = await db.open(t);
          // knex types `client` as any; its config is the one the pool was opened with.
          const config = (knex.client as { config: Knex.Config }).config;
          const sql =
            engine === 'mysql'
              ? 'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ'
              : 'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ';
          const repeatable = knexFactory({
            ...config,
            pool: {
              min: 0,
              max: 2,
              afterCreate(conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
                conn.query(sql, (err) => done(err, conn));
              },
            },
          });
          t.teardown(() => repeatable.destroy());
          const repo = new KnexJobRepository(repeatable, { lockStrategy: strategy });
          t.equal((await repo.serverInfo()).readCommitted, false, 'the session runs REPEATABLE READ');
          const now = Date.now();
          const saved = [];
          for (const offset of [-3000, -2000, -1000]) saved.push(await repo.saveJob(job('repeatable', { nextRunAt: new Date(now + offset) }), undefined));
          const taken = [];
          for (let next; (next = await repo.getNextJobToRun('repeatable', new Date(now), new Date(now - MINUTE), undefined, undefined)); ) taken.push(String(next._id));
          t.same(taken, saved.map((j) => String(j._id)));
        });

        t.test(`${strategy}: a job another transaction holds is skipped, not waited for`, async (t) => {
          const { knex, secondPool } = await db.open(t);
          const repo = new KnexJobRepository(secondPool(), { lockStrategy: strategy });
          const now = Date.now();
          const first = await repo.saveJob(job('held', { nextRunAt: new Date(now - 2000) }), undefined);
          const second = await repo.saveJob(job('held', { nextRunAt: new Date(now - 1000) }), undefined);
          const trx = await knex.transaction();
          try {
            await trx('scheduler_jobs').where('id', String(first._id)).forUpdate().select('id');
            const started = Date.now();
            const next = await repo.getNextJobToRun('held', new Date(now), new Date(now - MINUTE), undefined, undefined);
            t.equal(String(next?._id), String(second._id), 'the next job is taken');
            t.ok(Date.now() - started < 2_000, 'without waiting for the other transaction');
          } finally {
            await trx.rollback();
          }
          t.equal(String((await repo.getNextJobToRun('held', new Date(now), new Date(now - MINUTE), undefined, undefined))?._id), String(first._id), 'then the released one');
        });
      }

      t.test(`${strategy}: lockJob locks only an unlocked, enabled job still due at the nextRunAt seen`, async (t) => {
        const { knex } = await db.open(t);
        const repo = new KnexJobRepository(knex, { lockStrategy: strategy });
        const saved = await repo.saveJob(job('lock-me', { nextRunAt: new Date(Date.now() - 1000) }), undefined);
        t.equal(await repo.lockJob({ ...saved, nextRunAt: new Date(Date.now() + MINUTE) }, undefined), undefined, 'not when nextRunAt moved');
        t.equal(await repo.lockJob({ ...saved, nextRunAt: null }, undefined), undefined, 'not without nextRunAt');
        t.equal(await repo.lockJob({ ...saved, name: 'LOCK-ME' }, undefined), undefined, 'not under another name');
        t.equal(await repo.lockJob(job('lock-me'), undefined), undefined, 'not without id');
        const locked = await repo.lockJob(saved, { lastModifiedBy: 'n1' });
        t.equal(String(locked?._id), String(saved._id));
        t.ok(locked?.lockedAt instanceof Date);
        t.equal(locked?.lastModifiedBy, 'n1');
        t.equal(await repo.lockJob(saved, undefined), undefined, 'not twice');
        await repo.unlockJob(saved);
        await repo.disableJobs({ id: String(saved._id) });
        t.equal(await repo.lockJob(saved, undefined), undefined, 'not when disabled');
      });
    }
  });

  t.test('unlockJob releases unless the job is running; unlockJobs releases the listed ids', async (t) => {
    const { knex } = await db.open(t);
    const repo = new KnexJobRepository(knex);
    const lockedAt = new Date();
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => repo.saveJob(job(`unlock-${n}`), undefined)));
    for (const j of [a!, b!, c!]) await repo.saveJobState({ ...j, lockedAt }, undefined);
    await repo.saveJobState({ ...b!, lockedAt, nextRunAt: null }, undefined);

    await repo.unlockJob(a!);
    t.equal((await rawRow(knex, a!._id)).locked_at, null, 'unlocked');
    await repo.unlockJob(b!);
    t.equal(ms((await rawRow(knex, b!._id)).locked_at), lockedAt.getTime(), 'kept: nextRunAt is null, the job is being processed');
    await repo.unlockJob(job('no-id'));

    await repo.unlockJobs([]);
    await repo.unlockJobs([b!._id!, c!._id!]);
    t.equal((await rawRow(knex, b!._id)).locked_at, null);
    t.equal((await rawRow(knex, c!._id)).locked_at, null);
  });
}
