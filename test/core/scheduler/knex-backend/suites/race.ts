import type { Test } from 'tap';
import { KnexJobRepository } from '../../../../../core/scheduler/knex-backend/index.js';
import { job, strategiesFor, type DbFactory } from '../harness.js';

const JOBS = 240;
const POLLERS = 40;

/** Concurrent find-and-lock from two pools (two nodes): a job is never handed out twice. */
export function raceSuite(t: Test, db: DbFactory): void {
  for (const strategy of strategiesFor(db.engine)) {
    t.test(`${strategy}: ${POLLERS} concurrent pollers on two pools over ${JOBS} due jobs`, async (t) => {
      const { knex, secondPool } = await db.open(t);
      const repos = [knex, secondPool()].map((pool) => new KnexJobRepository(pool, { lockStrategy: strategy }));
      const now = Date.now();
      for (let i = 0; i < JOBS; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, k) => repos[0]!.saveJob(job('race', { nextRunAt: new Date(now - 60_000 + i + k), priority: (i + k) % 3 }), undefined)),
        );
      }
      const scanUntil = new Date(now + 1000);
      const lockDeadline = new Date(now - 600_000);
      const grants = new Map<string, number>();
      const grant = (id: unknown) => grants.set(String(id), (grants.get(String(id)) ?? 0) + 1);

      const unlocked = async () => Number(((await knex('scheduler_jobs').whereNull('locked_at').count({ n: '*' })) as { n: number | string }[])[0]?.n);

      /** Takes jobs until told there is none; returns how many were in fact still unlocked then. */
      const poller = async (repo: KnexJobRepository, name: string): Promise<number> => {
        for (;;) {
          const next = await repo.getNextJobToRun('race', scanUntil, lockDeadline, undefined, { lastModifiedBy: name });
          if (!next) return unlocked();
          grant(next._id);
        }
      };
      const stoppedAt = await Promise.all(Array.from({ length: POLLERS }, (_, i) => poller(repos[i % 2]!, `poller-${i}`)));
      const concurrent = grants.size;
      t.comment(`pollers that found nothing while unlocked jobs remained: ${stoppedAt.filter((left) => left > 0).length} of ${POLLERS}`);
      // Under heavy contention a candidate-based path may report "nothing" (its retries are bounded) and the
      // next poll takes the rest: a sequential pass stands for that next poll.
      await poller(repos[0]!, 'sweeper');

      const twice = [...grants].filter(([, n]) => n > 1);
      t.same(twice, [], 'no job was handed out twice');
      t.equal(grants.size, JOBS, `every job was handed out once (${concurrent} while racing)`);
      t.equal(await unlocked(), 0, 'all are locked');
    });
  }
}
