import { computeJobState, toJobId, type JobId, type JobParameters, type JobState } from 'agenda';

export const JOBS_TABLE = 'scheduler_jobs';

/** BIGINT epoch milliseconds: a number (better-sqlite3, mysql2) or a string (pg returns int8 as text). */
type Millis = number | string | null;

/** A scheduler_jobs row as the drivers return it (see core/db/migrations/0003_scheduler.ts). */
export interface JobRow {
  id: string;
  name: string;
  priority: number | string;
  next_run_at: Millis;
  type: string;
  single_key: string | null;
  locked_at: Millis;
  last_finished_at: Millis;
  failed_at: Millis;
  fail_count: number | string | null;
  fail_reason: string | null;
  repeat_timezone: string | null;
  last_run_at: Millis;
  repeat_interval: string | null;
  data: string | null;
  repeat_at: string | null;
  disabled: boolean | number;
  progress: number | string | null;
  fork: boolean | number;
  last_modified_by: string | null;
  debounce_started_at: Millis;
  start_date: Millis;
  end_date: Millis;
  skip_days: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** A stored job always has its id. */
export type StoredJob = JobParameters & { _id: JobId };

const dateOrNull = (value: Millis): Date | null => (value === null || value === undefined ? null : new Date(Number(value)));
const dateOrUndefined = (value: Millis): Date | undefined => dateOrNull(value) ?? undefined;
const numberOrUndefined = (value: number | string | null): number | undefined => (value === null || value === undefined ? undefined : Number(value));

/** JSON text to a value; SQL NULL (a job saved without data) reads as null, as on PostgreSQL. */
export const parseJson = (text: string | null): unknown => (text === null || text === undefined ? null : JSON.parse(text));

export function rowToJob(row: JobRow): StoredJob {
  return {
    _id: toJobId(row.id),
    name: row.name,
    priority: Number(row.priority),
    nextRunAt: dateOrNull(row.next_run_at),
    type: row.type === 'single' ? 'single' : 'normal',
    lockedAt: dateOrUndefined(row.locked_at),
    lastFinishedAt: dateOrUndefined(row.last_finished_at),
    failedAt: dateOrUndefined(row.failed_at),
    failCount: numberOrUndefined(row.fail_count),
    failReason: row.fail_reason ?? undefined,
    repeatTimezone: row.repeat_timezone ?? undefined,
    lastRunAt: dateOrUndefined(row.last_run_at),
    repeatInterval: row.repeat_interval ?? undefined,
    data: parseJson(row.data),
    repeatAt: row.repeat_at ?? undefined,
    disabled: Boolean(row.disabled),
    progress: numberOrUndefined(row.progress),
    fork: Boolean(row.fork),
    lastModifiedBy: row.last_modified_by ?? undefined,
    debounceStartedAt: dateOrUndefined(row.debounce_started_at),
    startDate: dateOrUndefined(row.start_date),
    endDate: dateOrUndefined(row.end_date),
    skipDays: row.skip_days === null || row.skip_days === undefined ? undefined : (JSON.parse(row.skip_days) as number[]),
  };
}

/** The columns computeJobState reads. */
export const STATE_COLUMNS = ['name', 'locked_at', 'last_finished_at', 'failed_at', 'next_run_at', 'repeat_interval', 'disabled'] as const;
export type StateRow = Pick<JobRow, (typeof STATE_COLUMNS)[number]>;

/** Agenda's computed state of a row, from the state columns only (no data to parse). */
export function stateOf(row: StateRow, now: Date): JobState {
  return computeJobState(
    {
      name: row.name,
      priority: 0,
      type: 'normal',
      data: null,
      nextRunAt: dateOrNull(row.next_run_at),
      lockedAt: dateOrUndefined(row.locked_at),
      lastFinishedAt: dateOrUndefined(row.last_finished_at),
      failedAt: dateOrUndefined(row.failed_at),
      repeatInterval: row.repeat_interval ?? undefined,
    },
    now,
  );
}

/** A date (or anything Date accepts) as epoch milliseconds; null/undefined as NULL. */
export function toMillis(value: Date | string | number | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  const ms = value instanceof Date ? value.getTime() : new Date(value).getTime();
  if (Number.isNaN(ms)) throw new TypeError(`invalid date: ${String(value)}`);
  return ms;
}

/**
 * The columns a user save writes, with the PostgreSQL backend's coercions (`x || null`, `x || false`), so a
 * 0 interval or an empty time zone is stored as NULL there and here alike. JSON.stringify(undefined) is
 * undefined: a job without data stores NULL. single_key carries the "one single job per name" index.
 */
export function savedColumns(job: JobParameters, lastModifiedBy: string | null) {
  return {
    name: job.name,
    priority: job.priority ?? 0,
    next_run_at: toMillis(job.nextRunAt || null),
    type: job.type ?? 'normal',
    single_key: job.type === 'single' ? job.name : null,
    repeat_timezone: job.repeatTimezone || null,
    repeat_interval: job.repeatInterval ? String(job.repeatInterval) : null,
    data: JSON.stringify(job.data) ?? null,
    repeat_at: job.repeatAt || null,
    disabled: job.disabled || false,
    fork: job.fork || false,
    last_modified_by: lastModifiedBy,
    start_date: toMillis(job.startDate || null),
    end_date: toMillis(job.endDate || null),
    skip_days: job.skipDays ? JSON.stringify(job.skipDays) : null,
  };
}

export type SavedColumns = ReturnType<typeof savedColumns>;

/** A complete row for an insert (what the database holds afterwards, so it can be returned without reading back). */
export function newRow(id: string, columns: SavedColumns, now: number, debounceStartedAt: number | null): JobRow {
  return {
    id,
    ...columns,
    locked_at: null,
    last_finished_at: null,
    failed_at: null,
    fail_count: null,
    fail_reason: null,
    last_run_at: null,
    progress: null,
    debounce_started_at: debounceStartedAt,
    created_at: now,
    updated_at: now,
  };
}
