import type { Knex } from 'knex';
import type { KvWriteOptions, ScopedKeyValueStore } from '@certwright/sdk';
import { isMysql } from '../db/dialect.js';
import type { GroupCommit } from '../db/group-commit.js';
import { runWrite } from '../db/statements.js';
import { isUniqueViolation } from '../db/unique.js';

/** Tries of kv.increment when first inserts race (each lost race means the row exists for the next try). */
const INCREMENT_ATTEMPTS = 3;

/** Tries of setIfAbsent when the row it found expired or was deleted before it could be read. */
const SET_IF_ABSENT_ATTEMPTS = 3;

/**
 * A plugin's key-value store: rows of plugin_kv under its id and a tenant. Values are JSON. A value written
 * with `ttlMs` has `expires_at`: from then on it reads as absent, setIfAbsent replaces it, and the job
 * plugins.kv-expiry deletes it (core/plugins/kv-expiry.ts).
 */
export function scopedKv(knex: Knex, pluginId: string, tenant: string, clock: () => number, groupCommit?: GroupCommit): ScopedKeyValueStore {
  const scope = { plugin_id: pluginId, tenant };
  // setIfAbsent is on connectors' issuance path (idempotency per request): its insert shares commits.
  const insertNow = (sql: string, bindings: readonly unknown[]): Promise<number> =>
    groupCommit ? groupCommit.run((trx) => runWrite(trx, sql, bindings)) : runWrite(knex, sql, bindings);
  const insertIfAbsent = isMysql(knex) ? INSERT_IGNORE_MYSQL : INSERT_IGNORE_SQLITE;
  const readLive = async (key: string, now: number): Promise<{ value: string } | undefined> =>
    (await knex('plugin_kv')
      .where({ ...scope, key })
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
      .first('value')) as { value: string } | undefined;
  return {
    async get<T>(key: string): Promise<T | undefined> {
      const row = await readLive(key, clock());
      return row ? (JSON.parse(row.value) as T) : undefined;
    },
    async set(key, value, options?: KvWriteOptions) {
      const now = clock();
      const row = { ...scope, key, value: JSON.stringify(value), updated_at: now, expires_at: expiryOf(key, options, now) };
      await knex('plugin_kv').insert(row).onConflict(['plugin_id', 'tenant', 'key']).merge(['value', 'updated_at', 'expires_at']);
    },
    async setIfAbsent<T>(key: string, value: T, options?: KvWriteOptions): Promise<T> {
      // Insert-or-ignore on the unique key: whoever inserted first wins, on every node. When this insert
      // wrote the row (the driver's count of rows it changed says so: 0 when it did nothing) the value is
      // ours. Else an expired row is taken over by one conditional UPDATE (the row lock makes a second node's
      // wait and then find it live), and a live one is read.
      const json = JSON.stringify(value);
      for (let attempt = 1; ; attempt++) {
        const now = clock();
        const expiresAt = expiryOf(key, options, now);
        if ((await insertNow(insertIfAbsent, [pluginId, tenant, key, json, now, expiresAt])) === 1) return JSON.parse(json) as T;
        if ((await runWrite(knex, REPLACE_EXPIRED, [json, now, expiresAt, pluginId, tenant, key, now])) === 1) return JSON.parse(json) as T;
        const row = await readLive(key, now);
        if (row) return JSON.parse(row.value) as T;
        // Deleted, or expired, between the statements: try again from the insert.
        if (attempt === SET_IF_ABSENT_ATTEMPTS) throw new Error(`kv.setIfAbsent("${key}"): the stored value kept vanishing; try again`);
      }
    },
    async increment(key: string, by = 1): Promise<number> {
      if (!Number.isSafeInteger(by)) throw new TypeError(`kv.increment("${key}"): the step must be a safe integer`);
      const next = isMysql(knex) ? await incrementLocked(knex, scope, key, by, clock) : await incrementInOneStatement(knex, scope, key, by, clock);
      if (next === undefined) throw new TypeError(`kv.increment("${key}"): the stored value is not an integer`);
      return next;
    },
    async delete(key) {
      await knex('plugin_kv').where({ ...scope, key }).delete();
    },
  };
}

/** `expires_at` for a write with `options` at `now`: null without ttlMs; a TypeError for a bad one. */
function expiryOf(key: string, options: KvWriteOptions | undefined, now: number): number | null {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return null;
  if (!Number.isSafeInteger(ttl) || ttl <= 0) throw new TypeError(`kv("${key}"): ttlMs must be a positive safe integer of milliseconds`);
  return now + ttl;
}

type Scope = { plugin_id: string; tenant: string };

/** A row unless its key is taken: binds plugin_id, tenant, key, value, updated_at, expires_at. */
const INSERT_IGNORE_SQLITE =
  'insert into `plugin_kv` (`plugin_id`, `tenant`, `key`, `value`, `updated_at`, `expires_at`) values (?, ?, ?, ?, ?, ?) on conflict (`plugin_id`, `tenant`, `key`) do nothing';
const INSERT_IGNORE_MYSQL = 'insert ignore into `plugin_kv` (`plugin_id`, `tenant`, `key`, `value`, `updated_at`, `expires_at`) values (?, ?, ?, ?, ?, ?)';
/** Takes over an expired row (both engines): binds value, updated_at, expires_at, then plugin_id, tenant, key, now. */
const REPLACE_EXPIRED =
  'update `plugin_kv` set `value` = ?, `updated_at` = ?, `expires_at` = ? where `plugin_id` = ? and `tenant` = ? and `key` = ? and `expires_at` is not null and `expires_at` <= ?';

/**
 * kv.increment on SQLite: one upsert that adds and answers the sum (RETURNING). A single write statement
 * waits for the write lock like any other (busy_timeout), where a read-then-write transaction of a second
 * process would fail on its stale snapshot. undefined (nothing written) when the stored value is not an
 * integer: the conflict's WHERE skips the update, so no row is returned. (The step is cast: the driver binds a
 * JS number as a REAL, and 1 + 1.0 would store "2.0".) An expired row counts as absent: it starts again from
 * the step, with no expiry; a live row keeps its expiry.
 */
async function incrementInOneStatement(knex: Knex, scope: Scope, key: string, by: number, clock: () => number): Promise<number | undefined> {
  const now = clock();
  const rows = (await knex.raw(
    `INSERT INTO plugin_kv (plugin_id, tenant, key, value, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, NULL)
     ON CONFLICT (plugin_id, tenant, key) DO UPDATE SET
       value = CASE WHEN plugin_kv.expires_at <= ? THEN excluded.value ELSE CAST(CAST(plugin_kv.value AS INTEGER) + CAST(? AS INTEGER) AS TEXT) END,
       updated_at = excluded.updated_at,
       expires_at = CASE WHEN plugin_kv.expires_at <= ? THEN NULL ELSE plugin_kv.expires_at END
     WHERE plugin_kv.expires_at <= ? OR CAST(CAST(plugin_kv.value AS INTEGER) AS TEXT) = plugin_kv.value
     RETURNING value`,
    [scope.plugin_id, scope.tenant, key, JSON.stringify(by), now, now, by, now, now],
  )) as { value: string }[];
  return rows.length === 1 ? (JSON.parse(rows[0]!.value) as number) : undefined;
}

/**
 * kv.increment on MySQL/MariaDB: the row read with a lock and written in one transaction, so concurrent
 * increments queue on the row. Two first increments racing to insert: the loser's insert fails on the key
 * and it runs again, then reading (and locking) the winner's row. An expired row counts as absent (its
 * expiry cleared); a live row keeps its expiry.
 */
async function incrementLocked(knex: Knex, scope: Scope, key: string, by: number, clock: () => number): Promise<number | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction(async (trx) => {
        const now = clock();
        const row = (await trx('plugin_kv').where({ ...scope, key }).first('value', 'expires_at').forUpdate()) as { value: string; expires_at: number | string | null } | undefined;
        const expired = row !== undefined && row.expires_at !== null && Number(row.expires_at) <= now;
        const current: unknown = row && !expired ? JSON.parse(row.value) : 0;
        if (!Number.isSafeInteger(current)) return undefined;
        const next = (current as number) + by;
        const fields = { value: JSON.stringify(next), updated_at: now };
        if (row) await trx('plugin_kv').where({ ...scope, key }).update(expired ? { ...fields, expires_at: null } : fields);
        else await trx('plugin_kv').insert({ ...scope, key, ...fields });
        return next;
      });
    } catch (err) {
      if (attempt < INCREMENT_ATTEMPTS && isUniqueViolation(err)) continue;
      throw err;
    }
  }
}
