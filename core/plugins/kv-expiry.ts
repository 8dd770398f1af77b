import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { runWrite } from '../db/statements.js';
import type { CoreServices } from '../services.js';

/** The job that deletes plugin kv values past their expiry (SDK 1.5 `ttlMs`). */
export const KV_EXPIRY_JOB = 'plugins.kv-expiry';
/** How often it runs: expired values already read as absent, so this only bounds the table's size. */
const KV_EXPIRY_EVERY_MS = 60 * 60_000;
/** Rows per DELETE: short statements, so a large backlog never holds the write lock for long. */
const KV_EXPIRY_BATCH = 1_000;

// SQLite has no DELETE … LIMIT (unless compiled in); MySQL/MariaDB refuse LIMIT in an IN subquery. The MySQL
// form names its rows by a total order (expiry, then the primary key): a DELETE … LIMIT without ORDER BY is
// "unsafe" for statement-based replication (a replica could delete other rows of a batch).
const DELETE_EXPIRED_SQLITE = 'delete from `plugin_kv` where rowid in (select rowid from `plugin_kv` where `expires_at` <= ? limit ?)';
const DELETE_EXPIRED_MYSQL = 'delete from `plugin_kv` where `expires_at` <= ? order by `expires_at`, `plugin_id`, `tenant`, `key` limit ?';

/** Deletes every plugin kv value that expired at or before `now`, `batch` rows per statement; answers how many. */
export async function deleteExpiredKv(knex: Knex, now: number, batch = KV_EXPIRY_BATCH): Promise<number> {
  const sql = isMysql(knex) ? DELETE_EXPIRED_MYSQL : DELETE_EXPIRED_SQLITE;
  let total = 0;
  for (;;) {
    const deleted = await runWrite(knex, sql, [now, batch]);
    total += deleted;
    if (deleted < batch) return total;
  }
}

/** Defines the expiry job, and puts it in the schedule on nodes that run jobs. */
export async function registerKvExpiry(services: CoreServices): Promise<void> {
  const { scheduler, knex, clock } = services;
  scheduler.define(
    KV_EXPIRY_JOB,
    async ({ logger }) => {
      const deleted = await deleteExpiredKv(knex, clock());
      if (deleted > 0) logger.info({ deleted }, 'expired plugin kv values deleted');
    },
    { concurrency: 1 },
  );
  if (services.runsJobs) await scheduler.every(KV_EXPIRY_EVERY_MS, KV_EXPIRY_JOB);
}
