import type { Knex } from 'knex';

const TABLE = 'reports';

/** One stored report, as the `reports` table holds it (migration 0028). */
export interface ReportRecord {
  uuid: string;
  tenant: string;
  /** The report task's name. */
  name: string;
  fileName: string;
  contentType: string;
  size: number;
  rows: number;
  storage: string;
  storageKey: string;
  createdAt: number;
  expiresAt: number;
}

interface Row {
  uuid: string;
  tenant: string;
  name: string;
  file_name: string;
  content_type: string;
  size: number | string;
  row_count: number | string;
  storage: string;
  storage_key: string;
  created_at: number | string;
  expires_at: number | string;
}

// MySQL answers bigints as strings: every number is read back through Number().
const recordOf = (r: Row): ReportRecord => ({
  uuid: r.uuid,
  tenant: r.tenant,
  name: r.name,
  fileName: r.file_name,
  contentType: r.content_type,
  size: Number(r.size),
  rows: Number(r.row_count),
  storage: r.storage,
  storageKey: r.storage_key,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** The `reports` table. Reads take `now`: a report past its expiry is absent even before the purge job deletes it. */
export class ReportStore {
  constructor(private readonly knex: Knex) {}

  async insert(r: ReportRecord): Promise<void> {
    await this.knex(TABLE).insert({
      uuid: r.uuid,
      tenant: r.tenant,
      name: r.name,
      file_name: r.fileName,
      content_type: r.contentType,
      size: r.size,
      row_count: r.rows,
      storage: r.storage,
      storage_key: r.storageKey,
      created_at: r.createdAt,
      expires_at: r.expiresAt,
    });
  }

  /** The tenant's live reports, newest first; only those of one report task when `name` is given. */
  async list(tenant: string, now: number, name?: string): Promise<ReportRecord[]> {
    const q = this.knex(TABLE).where({ tenant }).where('expires_at', '>', now);
    if (name !== undefined) q.where({ name });
    return ((await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'uuid' }]).select('*')) as Row[]).map(recordOf);
  }

  async get(tenant: string, uuid: string, now: number): Promise<ReportRecord | null> {
    const row = (await this.knex(TABLE).where({ tenant, uuid }).where('expires_at', '>', now).first()) as Row | undefined;
    return row ? recordOf(row) : null;
  }

  /** Reports of every tenant expired at `now`, oldest first, at most `limit`. */
  async expired(now: number, limit: number): Promise<ReportRecord[]> {
    return ((await this.knex(TABLE).where('expires_at', '<=', now).orderBy([{ column: 'expires_at' }, { column: 'uuid' }]).limit(limit).select('*')) as Row[]).map(recordOf);
  }

  /** Deletes the row; answers whether there was one. */
  async remove(tenant: string, uuid: string): Promise<boolean> {
    return (await this.knex(TABLE).where({ tenant, uuid }).delete()) > 0;
  }
}
