import type { Knex } from 'knex';
import type { DatabaseEngine } from '../../db/connection.js';
import type { AnalyticsCursor, AnalyticsSource, CountGroup } from './sources.js';

const CURSORS = 'event_analytics_cursors';
/** Rows read and counted per transaction: a short transaction, a bounded read. */
export const ANALYTICS_BATCH = 5000;
/** Groups per INSERT: 7 columns × 100 bound parameters stay far below either engine's limits. */
const UPSERT_CHUNK = 100;

interface CursorRow {
  seq: number | string | null;
  created_at: number | string | null;
  last_id: string | null;
  updated_at: number | string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/**
 * Keeps the precomputed counts of a source up to date. Each batch is one transaction that locks the
 * source's cursor row, reads the rows after it, adds their counts and moves the cursor: a crash loses the
 * batch's work and the cursor together (counted again next time, never twice), and two nodes (or the job
 * and a PATCH) take turns on the lock instead of counting the same rows. Within a node, calls on one
 * source are queued, so they do not wait on each other's locks.
 */
export class AnalyticsUpdater {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly knex: Knex,
    private readonly engine: DatabaseEngine,
    private readonly clock: () => number,
    /** Rows per transaction (tests use small batches to cross their boundaries). */
    private readonly batchSize: number = ANALYTICS_BATCH,
  ) {}

  /** Counts everything new, batch after batch; answers how many rows were counted. */
  update(source: AnalyticsSource): Promise<number> {
    return this.serial(source, async () => {
      let counted = 0;
      for (;;) {
        const rows = await this.knex.transaction(async (trx) => {
          const cursor = await this.lock(trx, source);
          const now = this.clock();
          const batch = await source.read(trx, cursor, this.batchSize, now);
          if (batch) await this.add(trx, source, batch.groups);
          await this.save(trx, source, batch?.cursor ?? cursor, now);
          return batch?.rows ?? 0;
        });
        counted += rows;
        if (rows < this.batchSize) return counted;
      }
    });
  }

  /** Empties the counts and rewinds the cursor: the next update counts every row again. */
  flush(source: AnalyticsSource): Promise<void> {
    return this.serial(source, () =>
      this.knex.transaction(async (trx) => {
        await this.lock(trx, source);
        await trx(source.table).delete();
        await trx(CURSORS).where({ source: source.name }).update({ seq: source.name === 'events' ? 0 : null, created_at: null, last_id: null, updated_at: null });
      }),
    );
  }

  async cursor(source: AnalyticsSource, db: Knex | Knex.Transaction = this.knex): Promise<AnalyticsCursor> {
    const row = (await db(CURSORS).where({ source: source.name }).first('seq', 'created_at', 'last_id', 'updated_at')) as CursorRow | undefined;
    if (!row) throw new Error(`analytics cursor ${source.name} is missing: migrations not applied`);
    return { seq: num(row.seq) ?? 0, createdAt: num(row.created_at), lastId: row.last_id, updatedAt: num(row.updated_at) };
  }

  private async lock(trx: Knex.Transaction, source: AnalyticsSource): Promise<AnalyticsCursor> {
    // SQLite serialises writers itself (and has no FOR UPDATE); on MySQL the row lock makes the others wait.
    if (this.engine === 'mysql') await trx(CURSORS).where({ source: source.name }).first('source').forUpdate();
    return this.cursor(source, trx);
  }

  private async save(trx: Knex.Transaction, source: AnalyticsSource, cursor: AnalyticsCursor, now: number): Promise<void> {
    const position = source.name === 'events' ? { seq: cursor.seq } : { created_at: cursor.createdAt, last_id: cursor.lastId };
    await trx(CURSORS).where({ source: source.name }).update({ ...position, updated_at: now });
  }

  /** Adds the groups' totals to the stored ones: an upsert whose update adds (SQLite `excluded`, MySQL `VALUES`). */
  private async add(trx: Knex.Transaction, source: AnalyticsSource, groups: readonly CountGroup[]): Promise<void> {
    const keys = ['tenant', 'day', ...source.dimensions];
    const sum = this.engine === 'mysql' ? trx.raw('?? + VALUES(??)', ['total', 'total']) : trx.raw('??.?? + excluded.??', [source.table, 'total', 'total']);
    for (let i = 0; i < groups.length; i += UPSERT_CHUNK) {
      await trx(source.table)
        .insert(groups.slice(i, i + UPSERT_CHUNK))
        .onConflict(keys)
        .merge({ total: sum });
    }
  }

  private serial<T>(source: AnalyticsSource, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(source.name) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.queues.set(source.name, settled);
    void settled.then(() => {
      if (this.queues.get(source.name) === settled) this.queues.delete(source.name);
    });
    return run;
  }
}
