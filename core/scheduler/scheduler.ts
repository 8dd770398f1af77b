import { Agenda, exponential, type Job } from 'agenda';
import type { Knex } from 'knex';
import type { JobOptions, JobRunContext, JobsFacade, ScheduleOptions } from '@certwright/sdk';
import type { Logger } from 'pino';
import { KnexBackend } from './knex-backend/index.js';

/** Job data carries its tenant beside the caller's fields; handlers see the fields only. */
const TENANT_KEY = '__tenant';
type Envelope = Record<string, unknown> & { [TENANT_KEY]?: string };

export interface SchedulerOptions {
  /** Identifies this node in locks and logs (lastModifiedBy). */
  name: string;
  /** How often each node polls for due jobs (ms). */
  processEvery: number;
  /** How long a run may hold its lock before another node may take the job over (ms). */
  defaultLockLifetime: number;
  /** On stop: how long running jobs may take to finish before their locks are released (ms). */
  stopTimeoutMs: number;
}

const PRIORITIES = { lowest: -20, low: -10, normal: 0, high: 10, highest: 20 } as const;

/**
 * The kernel's scheduler: a thin facade over Agenda 6 with our knex backend, so jobs persist in the
 * platform database and nodes share them. It carries the tenant and a logger into every job.
 */
export class Scheduler implements JobsFacade {
  readonly agenda: Agenda;
  private running = false;
  /** Jobs this node is running now, so a bounded stop can hand the unfinished ones back. */
  private readonly inFlight = new Set<string>();
  private readonly backend: KnexBackend;

  constructor(
    private readonly knex: Knex,
    private readonly logger: Logger,
    private readonly options: SchedulerOptions,
  ) {
    this.backend = new KnexBackend(knex);
    this.agenda = new Agenda({
      backend: this.backend,
      name: options.name,
      processEvery: options.processEvery,
      defaultLockLifetime: options.defaultLockLifetime,
      // Agenda's default (0, no limit) has a node lock a whole backlog before it runs any of it; past the
      // lock lifetime those locks expire under it. A bound keeps the rest of a backlog for other nodes.
      defaultLockLimit: 100,
    });
    // Agenda reports processing errors as events; an unhandled 'error' event would crash the process.
    this.agenda.on('error', (err: Error) => this.logger.error({ err }, 'scheduler error'));
  }

  define<Data extends Record<string, unknown>>(name: string, handler: (ctx: JobRunContext<Data>) => Promise<void>, options: JobOptions = {}): void {
    const log = this.logger.child({ job: name });
    this.agenda.define(
      name,
      async (job: Job<Envelope>) => {
        const { [TENANT_KEY]: tenant = 'default', ...data } = job.attrs.data ?? {};
        const jobId = String(job.attrs._id);
        this.inFlight.add(jobId);
        try {
          await handler({
            tenant,
            data: data as Data,
            jobId,
            failCount: job.attrs.failCount ?? 0,
            logger: log.child({ jobId, tenant }),
            touch: (progress) => job.touch(progress),
          });
        } finally {
          this.inFlight.delete(jobId);
        }
      },
      {
        concurrency: options.concurrency,
        lockLifetime: options.lockLifetime,
        priority: typeof options.priority === 'string' ? PRIORITIES[options.priority] : options.priority,
        backoff: options.retry
          ? exponential({ delay: options.retry.delayMs, maxRetries: options.retry.retries, maxDelay: options.retry.maxDelayMs, jitter: 0 })
          : undefined,
      },
    );
  }

  async every(interval: string | number, name: string, data: Record<string, unknown> = {}, options: ScheduleOptions = {}): Promise<{ id: string }> {
    const job = this.agenda.create<Envelope>(name, envelope(data, options));
    job.repeatEvery(interval, { timezone: options.timezone, skipImmediate: true });
    // One repeating job per name and data (Agenda's own every() would allow one per name only).
    job.unique(Object.fromEntries([[`data.${TENANT_KEY}`, options.tenant ?? 'default'], ...Object.entries(data).map(([k, v]) => [`data.${k}`, v])]));
    await job.save();
    return { id: String(job.attrs._id) };
  }

  async schedule(when: Date | string, name: string, data: Record<string, unknown> = {}, options: ScheduleOptions = {}): Promise<{ id: string }> {
    const job = await this.agenda.schedule<Envelope>(when, name, envelope(data, options));
    return { id: String(job.attrs._id) };
  }

  async now(name: string, data: Record<string, unknown> = {}, options: ScheduleOptions = {}): Promise<{ id: string }> {
    const job = await this.agenda.now<Envelope>(name, envelope(data, options));
    return { id: String(job.attrs._id) };
  }

  cancel(name: string, data?: Record<string, unknown>): Promise<number> {
    return this.agenda.cancel(data ? { name, data } : { name });
  }

  /** When the next occurrence of a job of that name (and data) is due, if any. */
  async nextRunAt(name: string, data: Record<string, unknown>): Promise<number | null> {
    const { jobs } = await this.agenda.queryJobs({ name, data, limit: 1, sort: { nextRunAt: 'asc' } });
    return jobs[0]?.nextRunAt ? new Date(jobs[0].nextRunAt).getTime() : null;
  }

  /** The earliest next run of every job of that name, by the value of one data field (for lists). */
  async nextRunsByDataKey(name: string, key: string): Promise<Map<unknown, number>> {
    const { jobs } = await this.agenda.queryJobs({ name });
    const runs = new Map<unknown, number>();
    for (const job of jobs) {
      const at = job.nextRunAt ? new Date(job.nextRunAt).getTime() : null;
      const value = (job.data as Record<string, unknown> | null)?.[key];
      if (at !== null && value !== undefined && !(runs.get(value)! <= at)) runs.set(value, at);
    }
    return runs;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.backend.resume();
    await this.agenda.start();
    this.running = true;
  }

  /**
   * Graceful stop: no new jobs are taken, running ones get `stopTimeoutMs` to finish, then whatever is
   * still locked by this node is unlocked so another node picks it up at once.
   */
  async stop(): Promise<void> {
    if (!this.running) {
      // Agenda connects its backend from its constructor: let that finish before the owner closes the
      // pool, or a connection opened after the close keeps the process alive (bounded, never a hang).
      await Promise.race([this.agenda.ready, new Promise((r) => setTimeout(r, 5000).unref())]);
      return;
    }
    this.running = false;
    await this.agenda.drain({ timeout: this.options.stopTimeoutMs, closeConnection: false });
    await this.agenda.stop(false);
    // The queue filling Agenda was in the middle of ends before the owner may close the pool.
    await this.backend.quiesce();
    // Agenda keeps the locks of jobs still running (they would expire only after their lock lifetime);
    // this node is going away, so hand them back now. A one-off job is due again at once: its run did
    // not finish.
    const unfinished = [...this.inFlight];
    if (unfinished.length > 0) {
      this.logger.warn({ jobs: unfinished }, 'jobs still running at shutdown: released for another node');
      await this.knex('scheduler_jobs')
        .whereIn('id', unfinished)
        .whereNotNull('locked_at')
        .update({ locked_at: null, next_run_at: this.knex.raw('COALESCE(next_run_at, ?)', [Date.now()]) });
    }
  }

  /** The facade a plugin gets: only the job names its manifest declares. */
  facadeFor(pluginId: string, allowed: readonly string[]): JobsFacade {
    const check = (name: string) => {
      if (!allowed.includes(name)) throw new Error(`plugin ${pluginId} did not declare job "${name}" in its manifest (jobs)`);
    };
    return {
      define: (name, handler, options) => (check(name), this.define(name, handler, options)),
      every: (interval, name, data, options) => (check(name), this.every(interval, name, data, options)),
      schedule: (when, name, data, options) => (check(name), this.schedule(when, name, data, options)),
      now: (name, data, options) => (check(name), this.now(name, data, options)),
      cancel: (name, data) => (check(name), this.cancel(name, data)),
    };
  }
}

function envelope(data: Record<string, unknown>, options: ScheduleOptions): Envelope {
  return { ...data, [TENANT_KEY]: options.tenant ?? 'default' };
}
