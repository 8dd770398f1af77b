import type { JobParameters, UniqueOpts } from 'agenda';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
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
 * A save with a unique constraint, as the PostgreSQL backend does it: find a job of that name matching every
 * unique key; if there is one, return it untouched (insertOnly) or update it (debounce deciding nextRunAt);
 * if there is none, insert (with debounce: its window starts now). Returns undefined to fall through to a
 * plain insert. Like the PostgreSQL backend, the lookup and the write are separate statements: two
 * concurrent first saves may both insert.
 */
export async function saveUnique(
  knex: Knex,
  engine: Engine,
  job: JobParameters,
  unique: Record<string, unknown>,
  uniqueOpts: UniqueOpts | undefined,
  by: string | null,
): Promise<StoredJob | undefined> {
  const debounce = uniqueOpts?.debounce;
  const now = Date.now();
  const matching = (qb: Knex.QueryBuilder) => {
    whereTextEquals(qb, engine, 'name', job.name);
    for (const [key, value] of Object.entries(unique)) whereUnique(qb, engine, key, value);
  };
  const existing = (await knex(JOBS_TABLE).where(matching).first()) as JobRow | undefined;
  const columns = savedColumns(job, by);

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
    return retryOnConflict(() =>
      knex.transaction(async (trx) => {
        await trx(JOBS_TABLE)
          .where(matching)
          .update({ ...columns, next_run_at: nextRunAt, debounce_started_at: debounceStartedAt, updated_at: Date.now() });
        return rowToJob((await trx(JOBS_TABLE).where('id', existing.id).first()) as JobRow);
      }),
    );
  }

  if (!debounce) return undefined;
  // Leading runs the first save as scheduled; trailing waits for the quiet period.
  const row = newRow(newId(now), { ...columns, next_run_at: debounce.strategy === 'leading' ? columns.next_run_at : now + debounce.delay }, now, now);
  return retryOnConflict(async () => {
    await knex(JOBS_TABLE).insert(row);
    return rowToJob(row);
  });
}
