import type { Knex } from 'knex';

/** Counts are kept per UTC day: its start, epoch ms. */
export const DAY_MS = 86_400_000;
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * How far a source's counts go (a row of event_analytics_cursors). Events: `seq`, the last counted chain
 * position. Discovery events: `createdAt` and `lastId`, the last counted row in (created_at, id) order.
 */
export interface AnalyticsCursor {
  seq: number;
  createdAt: number | null;
  lastId: string | null;
  updatedAt: number | null;
}

/** One counted group: the key columns of the counts table (tenant, day, dimensions) and how many rows. */
export type CountGroup = Record<string, string | number> & { total: number };

export interface AnalyticsSource {
  /** The cursor row's key and the job's suffix (`analytics.events`). */
  name: 'events' | 'discovery-events';
  /** The counts table (migration 0013). */
  table: string;
  /** Columns counted besides tenant and day, in the table's key order. */
  dimensions: readonly string[];
  /**
   * The next rows after `cursor`, at most `limit`, counted by group, and the cursor after them (null
   * when there is nothing new). `now`: rows newer than the source's settle window are left for later.
   */
  read(trx: Knex.Transaction, cursor: AnalyticsCursor, limit: number, now: number): Promise<{ groups: CountGroup[]; cursor: AnalyticsCursor; rows: number } | null>;
}

/** Rows → groups keyed by tenant, day and the dimensions. */
function count(rows: readonly Record<string, unknown>[], dimensions: readonly string[], dateColumn: string): CountGroup[] {
  const groups = new Map<string, CountGroup>();
  for (const row of rows) {
    const group: CountGroup = { tenant: String(row.tenant), day: dayOf(Number(row[dateColumn])), total: 0 };
    for (const d of dimensions) group[d] = String(row[d] ?? '');
    const key = JSON.stringify([group.tenant, group.day, ...dimensions.map((d) => group[d])]);
    const found = groups.get(key);
    if (found) found.total++;
    else groups.set(key, { ...group, total: 1 });
  }
  return [...groups.values()];
}

/**
 * Events, by chain position. seq is assigned under the chain head's lock and that lock is held until the
 * append commits, so the committed events are always a prefix of seq: nothing can appear behind the cursor.
 */
export const EVENTS_SOURCE: AnalyticsSource = {
  name: 'events',
  table: 'event_analytics',
  dimensions: ['code', 'module', 'status'],
  async read(trx, cursor, limit) {
    const rows = (await trx('events').select('seq', 'tenant', 'code', 'module', 'status', 'created_at').where('seq', '>', cursor.seq).orderBy('seq').limit(limit)) as Record<string, unknown>[];
    if (rows.length === 0) return null;
    const last = rows[rows.length - 1]!;
    return { groups: count(rows, this.dimensions, 'created_at'), cursor: { ...cursor, seq: Number(last.seq) }, rows: rows.length };
  },
};

/**
 * How old a discovery event must be before it is counted (ms). Its created_at is taken before its batch's
 * transaction commits, so a slow batch can commit behind a later one: rows younger than this are left for
 * the next update rather than risk the cursor passing them.
 */
export const DISCOVERY_SETTLE_MS = 10_000;

/** Discovery events, in (created_at, id) order (index discovery_events_date_id), across tenants. */
export const DISCOVERY_EVENTS_SOURCE: AnalyticsSource = {
  name: 'discovery-events',
  table: 'discovery_event_analytics',
  dimensions: ['campaign', 'code', 'status'],
  async read(trx, cursor, limit, now) {
    const q = trx('discovery_events').select('id', 'tenant', 'campaign', 'code', 'status', 'created_at').where('created_at', '<=', now - DISCOVERY_SETTLE_MS);
    if (cursor.createdAt !== null) {
      const at = cursor.createdAt;
      q.andWhere((w) => w.where('created_at', '>', at).orWhere((same) => same.where('created_at', at).andWhere('id', '>', cursor.lastId ?? '')));
    }
    const rows = (await q.orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit)) as Record<string, unknown>[];
    if (rows.length === 0) return null;
    const last = rows[rows.length - 1]!;
    return { groups: count(rows, this.dimensions, 'created_at'), cursor: { ...cursor, createdAt: Number(last.created_at), lastId: String(last.id) }, rows: rows.length };
  },
};

export const ANALYTICS_SOURCES = [EVENTS_SOURCE, DISCOVERY_EVENTS_SOURCE] as const;
