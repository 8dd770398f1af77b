import type { Knex } from 'knex';
import type { DatasourceRecord } from './model.js';

const TABLE = 'datasource_results';

/** A datasource's last fetch as answered (PATCH, flows): never its records, which can be large. */
export interface DatasourceStatus {
  name: string;
  /** `never`: not fetched since it was created (or since its settings changed). */
  status: 'ok' | 'failed' | 'never';
  fetchedAt: number | null;
  durationMs: number | null;
  error: string | null;
  /** When the records rules read were fetched (a failed fetch keeps the previous good ones). */
  succeededAt: number | null;
  records: number;
}

interface Row {
  tenant: string;
  name: string;
  status: 'ok' | 'failed';
  fetched_at: number | string;
  duration_ms: number;
  error: string | null;
  succeeded_at: number | string | null;
  record_count: number;
  records?: string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

/** The last fetch of each datasource and the records of its last good one (migration 0029). */
export class DatasourceResults {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async succeeded(tenant: string, name: string, records: DatasourceRecord[], durationMs: number): Promise<void> {
    const now = this.clock();
    const row = { tenant, name, status: 'ok', fetched_at: now, duration_ms: durationMs, error: null, succeeded_at: now, record_count: records.length, records: JSON.stringify(records) };
    await this.knex(TABLE).insert(row).onConflict(['tenant', 'name']).merge(['status', 'fetched_at', 'duration_ms', 'error', 'succeeded_at', 'record_count', 'records']);
  }

  /** A failed fetch: its reason, and the previous good records kept. */
  async failed(tenant: string, name: string, error: string, durationMs: number): Promise<void> {
    const row = { tenant, name, status: 'failed', fetched_at: this.clock(), duration_ms: durationMs, error: error.slice(0, 2000), succeeded_at: null, record_count: 0, records: null };
    await this.knex(TABLE).insert(row).onConflict(['tenant', 'name']).merge(['status', 'fetched_at', 'duration_ms', 'error']);
  }

  async status(tenant: string, name: string): Promise<DatasourceStatus> {
    const row = (await this.knex(TABLE).where({ tenant, name }).first('tenant', 'name', 'status', 'fetched_at', 'duration_ms', 'error', 'succeeded_at', 'record_count')) as Row | undefined;
    if (!row) return { name, status: 'never', fetchedAt: null, durationMs: null, error: null, succeededAt: null, records: 0 };
    return { name, status: row.status, fetchedAt: num(row.fetched_at), durationMs: row.duration_ms, error: row.error, succeededAt: num(row.succeeded_at), records: row.record_count };
  }

  /** The records of the last good fetch of each named datasource (absent: never fetched successfully). */
  async records(tenant: string, names: readonly string[]): Promise<Map<string, DatasourceRecord[]>> {
    const out = new Map<string, DatasourceRecord[]>();
    if (names.length === 0) return out;
    const rows = (await this.knex(TABLE).where({ tenant }).whereIn('name', [...names]).whereNotNull('records').select('name', 'records')) as { name: string; records: string }[];
    for (const row of rows) out.set(row.name, JSON.parse(row.records) as DatasourceRecord[]);
    return out;
  }

  /** When the kept records of each named datasource were fetched (their version): a cheap read, no records. */
  async versions(tenant: string, names: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (names.length === 0) return out;
    const rows = (await this.knex(TABLE).where({ tenant }).whereIn('name', [...names]).whereNotNull('records').select('name', 'succeeded_at')) as { name: string; succeeded_at: number | string }[];
    for (const row of rows) out.set(row.name, Number(row.succeeded_at));
    return out;
  }

  /** A deleted datasource, or one whose settings changed, leaves no records of the old ones behind. */
  async forget(tenant: string, name: string): Promise<void> {
    await this.knex(TABLE).where({ tenant, name }).delete();
  }
}
