import { createHash } from 'node:crypto';
import type { JobParameters, UniqueOpts } from 'agenda';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { retryOnConflict, type Engine } from './engine.js';
import { dataPathEquals } from './json-filter.js';
import { JOBS_TABLE, newRow, rowToJob, savedColumns, type JobRow, type StoredJob } from './rows.js';
import { whereTextEquals } from './sql.js';

/**
 * Columns a `unique` key may name directly (camelCase keys become snake_case). Column names cannot be bound,
 * so a key is checked against this list before it reaches SQL (the PostgreSQL backend's list).
 */
const UNIQUE_COLUMNS = new Set([
  'id',
  'name',
  'priority',
  'next_run_at',
  'type',
  'locked_at',
  'last_finished_at',
  'failed_at',
  'fail_count',
  'fail_reason',
  'repeat_timezone',
  'last_run_at',
  'repeat_interval',
  'data',
  'repeat_at',
  'disabled',
  'progress',
  'fork',
  'last_modified_by',
  'debounce_started_at',
  'start_date',
  'end_date',
  'skip_days',
  'created_at',
  'updated_at',
]);

const JSON_COLUMNS = new Set(['data', 'skip_days']);

/** Applies one `unique` key: 'data.<path>' compares inside the JSON data; any other key names a column. */
function whereUnique(qb: Knex.QueryBuilder, engine: Engine, key: string, value: unknown): void {
  if (key.startsWith('data.')) {
    const condition = dataPathEquals(engine, key.slice('data.'.length).split('.'), value);
    qb.whereRaw(condition.sql, condition.bindings);
    return;
  }
  const column = key.replace(/([A-Z])/g, '_$1').toLowerCase();
  if (!UNIQUE_COLUMNS.has(column)) throw new Error(`Invalid unique constraint field: "${key}"`);
  if (value === null || value === undefined) qb.whereNull(column);
  else if (value instanceof Date) qb.where(column, value.getTime());
  else if (typeof value === 'string') whereTextEquals(qb, engine, column, value);
  else if (typeof value === 'number' || typeof value === 'boolean') qb.where(column, value);
  // JSON columns hold JSON text: an object or array matches the same serialisation.
  else if (JSON_COLUMNS.has(column)) qb.where(column, JSON.stringify(value));
  else throw new Error(`Invalid unique constraint value for "${key}"`);
}

/**
 * The id a job with unique keys is inserted under: the same for the same name and keys on every node. So when
 * nodes save it at once (kernels booting together, each declaring its repeating jobs with `every()`), only one
 * insert succeeds and the others, failing on the primary key, find that job and update it: one job, not one per
 * node (each of which would then run at every interval).
 */
export function uniqueJobId(name: string, unique: Record<string, unknown>): string {
  const keys = Object.keys(unique)
    .sort()
    .map((key) => [key, unique[key] instanceof Date ? unique[key].getTime() : unique[key]]);
  return createHash('sha256').update(JSON.stringify([name, keys])).digest('hex').slice(0, 24);
}

/**
 * A save with a unique constraint, as the PostgreSQL backend does it: find a job of that name matching every
 * unique key; if there is one, return it untouched (insertOnly) or update it (debounce deciding nextRunAt);
 * if there is none, insert (with debounce: its window starts now). The lookup and the write are separate
 * statements, but the insert cannot duplicate a concurrent one: see uniqueJobId.
 */
export async function saveUnique(
  knex: Knex,
  engine: Engine,
  job: JobParameters,
  unique: Record<string, unknown>,
  uniqueOpts: UniqueOpts | undefined,
  by: string | null,
): Promise<StoredJob> {
  const debounce = uniqueOpts?.debounce;
  const now = Date.now();
  const matching = (qb: Knex.QueryBuilder) => {
    whereTextEquals(qb, engine, 'name', job.name);
    for (const [key, value] of Object.entries(unique)) whereUnique(qb, engine, key, value);
  };
  const columns = savedColumns(job, by);

  for (let attempt = 1; ; attempt++) {
    const existing = (await knex(JOBS_TABLE).where(matching).first()) as JobRow | undefined;
    if (existing) {
      if (uniqueOpts?.insertOnly && !debounce) return rowToJob(existing);
      let nextRunAt = columns.next_run_at;
      let debounceStartedAt: number | null = null;
      if (debounce) {
        const startedAt = existing.debounce_started_at === null ? now : Number(existing.debounce_started_at);
        if (debounce.strategy === 'leading') {
          // Leading: the first save decided when it runs; later saves only update the data.
          nextRunAt = existing.next_run_at === null ? null : Number(existing.next_run_at);
          debounceStartedAt = startedAt;
        } else if (debounce.maxWait && now - startedAt >= debounce.maxWait) {
          // Trailing, waited long enough: run now, and the next save opens a new window.
          nextRunAt = now;
        } else {
          nextRunAt = now + debounce.delay;
          debounceStartedAt = startedAt;
        }
      }
      // Two statements, not one transaction: the UPDATE finds the name's jobs through scheduler_jobs_due and
      // locks each entry it reads, so in a transaction those locks would last until the client sent COMMIT,
      // and wait on it: a node stalled between the two (a synchronous job, a GC pause) kept other nodes' saves
      // and ends of runs of that name's jobs waiting for it (see claimInOneStatement). The row read back is the
      // latest committed one, which is what the caller is to see anyway.
      await retryOnConflict(() =>
        knex(JOBS_TABLE)
          .where(matching)
          .update({ ...columns, next_run_at: nextRunAt, debounce_started_at: debounceStartedAt, updated_at: Date.now() }),
      );
      const row = (await knex(JOBS_TABLE).where('id', existing.id).first()) as JobRow | undefined;
      if (row) return rowToJob(row);
      // Removed meanwhile: saved as new.
    }
    // Leading runs the first save as scheduled; trailing waits for the quiet period.
    const nextRunAt = debounce && debounce.strategy !== 'leading' ? now + debounce.delay : columns.next_run_at;
    // The second time round, that id is held by a job that no longer matches its keys (its data changed).
    const row = newRow(attempt === 1 ? uniqueJobId(job.name, unique) : newId(now), { ...columns, next_run_at: nextRunAt }, now, debounce ? now : null);
    try {
      await retryOnConflict(() => knex(JOBS_TABLE).insert(row));
      return rowToJob(row);
    } catch (err) {
      // Another node inserted it meanwhile: look again, and update that job.
      if (attempt > 1 || !isUniqueViolation(err)) throw err;
    }
  }
}
