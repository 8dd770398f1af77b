/** What a background job's handler receives. Jobs persist in the database and run on any node. */
export interface JobRunContext<Data = Record<string, unknown>> {
  /** The tenant the job was scheduled for. */
  tenant: string;
  data: Data;
  /** Job id (24 hex) and how many times this occurrence has failed before. */
  jobId: string;
  failCount: number;
  logger: { info(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void };
  /** Extends the lock of a long job so another node does not take it over. */
  touch(progress?: number): Promise<void>;
}

export interface JobOptions {
  /** Concurrent runs of this job per node. */
  concurrency?: number;
  /** How long a run may hold its lock before another node may take the job over (ms). */
  lockLifetime?: number;
  priority?: 'lowest' | 'low' | 'normal' | 'high' | 'highest' | number;
  /** Retries with exponential backoff: `retries` attempts after the first, starting at `delayMs`. */
  retry?: { retries: number; delayMs: number; maxDelayMs?: number };
}

export interface ScheduleOptions {
  tenant?: string;
  /** IANA time zone for cron intervals. */
  timezone?: string;
}

/** The scheduler as plugins see it: only the job names their manifest's `jobs` lists. */
export interface JobsFacade {
  define<Data extends Record<string, unknown>>(name: string, handler: (ctx: JobRunContext<Data>) => Promise<void>, options?: JobOptions): void;
  /** Repeats on a human interval ('5 minutes'), milliseconds, or a cron expression. One job per name and data. */
  every(interval: string | number, name: string, data?: Record<string, unknown>, options?: ScheduleOptions): Promise<{ id: string }>;
  schedule(when: Date | string, name: string, data?: Record<string, unknown>, options?: ScheduleOptions): Promise<{ id: string }>;
  now(name: string, data?: Record<string, unknown>, options?: ScheduleOptions): Promise<{ id: string }>;
  /** Removes jobs of that name (and matching data, if given); answers how many. */
  cancel(name: string, data?: Record<string, unknown>): Promise<number>;
}

/** What a scheduled task run reports; kept as the task's last result. */
export interface TaskResult {
  status: 'success' | 'failure';
  summary: string;
  details?: Record<string, unknown>;
}

/**
 * A type of scheduled task (spec "Scheduled task": lifecycle, reporting…), registered by the module that
 * owns it. Admins create tasks of a registered type with a CRON expression and parameters.
 */
export interface TaskType {
  category: 'lifecycle' | 'reporting';
  description: string;
  /** JSON Schema of the task's parameters; validated when a task is created or updated. */
  parametersSchema?: Record<string, unknown>;
  run(ctx: { tenant: string; taskName: string; parameters: Record<string, unknown>; logger: JobRunContext['logger'] }): Promise<TaskResult>;
}
