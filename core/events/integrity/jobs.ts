import type { Logger } from 'pino';
import type { Scheduler } from '../../scheduler/scheduler.js';
import type { IntegrityServices } from './services.js';
import { verifyChain } from './verify-chain.js';

/** The verification run of GET /api/v1/events/integrity/run; data: {runId}. */
export const VERIFY_JOB = 'events.integrity';
/** Signs the chain head when it moved (every `events.checkpoint.everyMinutes`, and nudged every `everyEvents`). */
export const CHECKPOINT_JOB = 'events.checkpoint';

/** Thrown from a progress write when the run was closed meanwhile (declared abandoned): the walk stops. */
class RunClosed extends Error {}

export function defineIntegrityJobs(scheduler: Scheduler, integrity: IntegrityServices, logger: Logger): void {
  scheduler.define<{ runId: string }>(
    VERIFY_JOB,
    async (ctx) => {
      const { runId } = ctx.data;
      const run = await integrity.runs.get(runId);
      // Finished already (a repeated delivery of the job), or closed as abandoned.
      if (!run || run.status !== 'running') return;
      try {
        const result = await verifyChain(integrity, async (progress) => {
          if (!(await integrity.runs.progress(runId, progress))) throw new RunClosed();
          // Long chains: keep the job's lock so another node does not start the walk over.
          await ctx.touch(progress.headSeq > 0 ? Math.min(100, Math.floor((progress.checked * 100) / progress.headSeq)) : 100);
        });
        await integrity.runs.finish(runId, result);
        if (!result.ok) logger.warn({ runId, firstBroken: result.firstBroken }, 'event chain integrity check found a broken link');
        // What the check could not prove: the events no checkpoint signs yet (see VerificationResult).
        logger.info({ runId, unsignedTail: result.unsignedTail }, 'event chain integrity check finished');
      } catch (err) {
        if (err instanceof RunClosed) return;
        logger.error({ err, runId }, 'event chain integrity check could not finish');
        await integrity.runs.fail(runId, (err as Error).message);
      }
    },
    { concurrency: 1 },
  );

  scheduler.define(
    CHECKPOINT_JOB,
    async () => {
      const checkpoint = await integrity.checkpoints.signHead();
      if (checkpoint) logger.debug({ seq: checkpoint.seq, keyId: checkpoint.keyId }, 'event chain checkpoint signed');
    },
    { concurrency: 1 },
  );
}
