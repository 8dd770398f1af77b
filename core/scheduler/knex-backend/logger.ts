import type { JobLogEntry, JobLogEvent, JobLogger, JobLogQuery, JobLogQueryResult, LogLevel } from 'agenda';
import type { Knex } from 'knex';
import { detectEngine, missingTableError, type Engine } from './engine.js';
import { affected, whereTextEquals, whereTextIn } from './sql.js';

export const LOGS_TABLE = 'scheduler_job_logs';

const DEFAULT_LIMIT = 50;
/** agenda_name is varchar(191); a longer Agenda name is cut rather than failing every log write on MySQL. */
const NAME_MAX = 191;

interface LogRow {
  id: number | string;
  timestamp: number | string;
  level: string;
  event: string;
  job_id: string | null;
  job_name: string;
  message: string;
  duration: number | null;
  error: string | null;
  fail_count: number | null;
  retry_delay: number | null;
  retry_attempt: number | null;
  agenda_name: string | null;
  meta: string | null;
}

/**
 * Agenda's persistent job log on scheduler_job_logs (migration 0003), with the PostgreSQL backend's
 * filters: job id, job name, level(s), event(s), from/to (inclusive), then sort, offset and limit (default 50).
 */
export class KnexJobLogger implements JobLogger {
  readonly engine: Engine;

  constructor(
    private readonly knex: Knex,
    options: { engine?: Engine } = {},
  ) {
    this.engine = options.engine ?? detectEngine(knex);
  }

  /** Checks that the table exists (the migration has run). */
  async connect(): Promise<void> {
    if (!(await this.knex.schema.hasTable(LOGS_TABLE))) throw missingTableError(LOGS_TABLE);
  }

  async log(entry: Omit<JobLogEntry, '_id'>): Promise<void> {
    await this.knex(LOGS_TABLE).insert({
      timestamp: entry.timestamp.getTime(),
      level: entry.level,
      event: entry.event,
      job_id: entry.jobId ?? null,
      job_name: entry.jobName,
      message: entry.message,
      duration: entry.duration ?? null,
      error: entry.error ?? null,
      fail_count: entry.failCount ?? null,
      retry_delay: entry.retryDelay ?? null,
      retry_attempt: entry.retryAttempt ?? null,
      agenda_name: entry.agendaName?.slice(0, NAME_MAX) ?? null,
      meta: entry.meta ? JSON.stringify(entry.meta) : null,
    });
  }

  async getLogs(query?: JobLogQuery): Promise<JobLogQueryResult> {
    const dir = query?.sort === 'asc' ? 'asc' : 'desc';
    const filtered = () => this.knex(LOGS_TABLE).where((qb) => this.filter(qb, query));
    const [rows, counted] = await Promise.all([
      filtered()
        .select('*')
        .orderBy('timestamp', dir)
        // Entries of the same millisecond keep their insertion order, so pages never overlap.
        .orderBy('id', dir)
        .limit(query?.limit ?? DEFAULT_LIMIT)
        .offset(query?.offset ?? 0) as Promise<LogRow[]>,
      filtered().count({ n: '*' }) as Promise<{ n: number | string }[]>,
    ]);
    return { entries: rows.map(toEntry), total: Number(counted[0]?.n ?? 0) };
  }

  /** Deletes the entries matching the query's filters (all entries without a query or filter). */
  async clearLogs(query?: JobLogQuery): Promise<number> {
    return affected(await this.knex(LOGS_TABLE).where((qb) => this.filter(qb, query)).del());
  }

  private filter(qb: Knex.QueryBuilder, query: JobLogQuery | undefined): void {
    if (!query) return;
    if (query.jobId) qb.where('job_id', query.jobId);
    if (query.jobName) whereTextEquals(qb, this.engine, 'job_name', query.jobName);
    if (query.level) whereTextIn(qb, this.engine, 'level', Array.isArray(query.level) ? query.level : [query.level]);
    if (query.event) whereTextIn(qb, this.engine, 'event', Array.isArray(query.event) ? query.event : [query.event]);
    if (query.from) qb.where('timestamp', '>=', query.from.getTime());
    if (query.to) qb.where('timestamp', '<=', query.to.getTime());
  }
}

function toEntry(row: LogRow): JobLogEntry {
  return {
    _id: String(row.id),
    timestamp: new Date(Number(row.timestamp)),
    // Written by log() from Agenda's own level and event values.
    level: row.level as LogLevel,
    event: row.event as JobLogEvent,
    jobId: row.job_id ?? undefined,
    jobName: row.job_name,
    message: row.message,
    duration: row.duration ?? undefined,
    error: row.error ?? undefined,
    failCount: row.fail_count ?? undefined,
    retryDelay: row.retry_delay ?? undefined,
    retryAttempt: row.retry_attempt ?? undefined,
    agendaName: row.agenda_name ?? undefined,
    meta: row.meta === null ? undefined : (JSON.parse(row.meta) as Record<string, unknown>),
  };
}
