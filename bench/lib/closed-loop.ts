/**
 * A closed-loop load: `concurrency` workers take the next job as soon as their previous one is answered.
 * Answers the rate (jobs per second) of the whole batch; any failed job fails the batch (a benchmark counts
 * only checked answers).
 */
export async function closedLoopRate<J>(jobs: readonly J[], concurrency: number, one: (job: J) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < jobs.length) await one(jobs[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return jobs.length / ((performance.now() - started) / 1000);
}
