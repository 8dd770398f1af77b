import type { Knex } from 'knex';
import type { ScopedKeyValueStore } from '@certwright/sdk';
import { isMysql } from '../db/dialect.js';
import type { GroupCommit } from '../db/group-commit.js';
import { runWrite } from '../db/statements.js';
import { isUniqueViolation } from '../db/unique.js';

/** Tries of kv.increment when first inserts race (each lost race means the row exists for the next try). */
const INCREMENT_ATTEMPTS = 3;

/** A plugin's key-value store: rows of plugin_kv under its id and a tenant. Values are JSON. */
export function scopedKv(knex: Knex, pluginId: string, tenant: string, clock: () => number, groupCommit?: GroupCommit): ScopedKeyValueStore {
  const scope = { plugin_id: pluginId, tenant };
  // setIfAbsent is on connectors' issuance path (idempotency per request): its insert shares commits.
  const insertNow = (sql: string, bindings: readonly unknown[]): Promise<number> =>
    groupCommit ? groupCommit.run((trx) => runWrite(trx, sql, bindings)) : runWrite(knex, sql, bindings);
  const insertIfAbsent = isMysql(knex) ? INSERT_IGNORE_MYSQL : INSERT_IGNORE_SQLITE;
  return {
    async get<T>(key: string): Promise<T | undefined> {
      const row = (await knex('plugin_kv').where({ ...scope, key }).first('value')) as { value: string } | undefined;
      return row ? (JSON.parse(row.value) as T) : undefined;
    },
    async set(key, value) {
      const row = { ...scope, key, value: JSON.stringify(value), updated_at: clock() };
      await knex('plugin_kv').insert(row).onConflict(['plugin_id', 'tenant', 'key']).merge(['value', 'updated_at']);
    },
    async setIfAbsent<T>(key: string, value: T): Promise<T> {
      // Insert-or-ignore on the unique key: whoever inserted first wins, on every node. When this insert
      // wrote the row (the driver's count of rows it changed says so: 0 when it did nothing) the value is
      // ours; else it is read.
      const json = JSON.stringify(value);
      if ((await insertNow(insertIfAbsent, [pluginId, tenant, key, json, clock()])) === 1) return JSON.parse(json) as T;
      const row = (await knex('plugin_kv').where({ ...scope, key }).first('value')) as { value: string };
      return JSON.parse(row.value) as T;
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

type Scope = { plugin_id: string; tenant: string };

/** A row unless its key is taken: binds plugin_id, tenant, key, value, updated_at. */
const INSERT_IGNORE_SQLITE = 'insert into `plugin_kv` (`plugin_id`, `tenant`, `key`, `value`, `updated_at`) values (?, ?, ?, ?, ?) on conflict (`plugin_id`, `tenant`, `key`) do nothing';
const INSERT_IGNORE_MYSQL = 'insert ignore into `plugin_kv` (`plugin_id`, `tenant`, `key`, `value`, `updated_at`) values (?, ?, ?, ?, ?)';

/**
 * kv.increment on SQLite: one upsert that adds and answers the sum (RETURNING). A single write statement
 * waits for the write lock like any other (busy_timeout), where a read-then-write transaction of a second
 * process would fail on its stale snapshot. undefined (nothing written) when the stored value is not an
 * integer: the conflict's WHERE skips the update, so no row is returned. (The step is cast: the driver binds a
 * JS number as a REAL, and 1 + 1.0 would store "2.0".)
 */
async function incrementInOneStatement(knex: Knex, scope: Scope, key: string, by: number, clock: () => number): Promise<number | undefined> {
  const rows = (await knex.raw(
    `INSERT INTO plugin_kv (plugin_id, tenant, key, value, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (plugin_id, tenant, key) DO UPDATE SET value = CAST(CAST(plugin_kv.value AS INTEGER) + CAST(? AS INTEGER) AS TEXT), updated_at = excluded.updated_at
     WHERE CAST(CAST(plugin_kv.value AS INTEGER) AS TEXT) = plugin_kv.value
     RETURNING value`,
    [scope.plugin_id, scope.tenant, key, JSON.stringify(by), clock(), by],
  )) as { value: string }[];
  return rows.length === 1 ? (JSON.parse(rows[0]!.value) as number) : undefined;
}

/**
 * kv.increment on MySQL/MariaDB: the row read with a lock and written in one transaction, so concurrent
 * increments queue on the row. Two first increments racing to insert: the loser's insert fails on the key
 * and it runs again, then reading (and locking) the winner's row.
 */
async function incrementLocked(knex: Knex, scope: Scope, key: string, by: number, clock: () => number): Promise<number | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction(async (trx) => {
        const row = (await trx('plugin_kv').where({ ...scope, key }).first('value').forUpdate()) as { value: string } | undefined;
        const current: unknown = row ? JSON.parse(row.value) : 0;
        if (!Number.isSafeInteger(current)) return undefined;
        const next = (current as number) + by;
        const fields = { value: JSON.stringify(next), updated_at: clock() };
        if (row) await trx('plugin_kv').where({ ...scope, key }).update(fields);
        else await trx('plugin_kv').insert({ ...scope, key, ...fields });
        return next;
      });
    } catch (err) {
      if (attempt < INCREMENT_ATTEMPTS && isUniqueViolation(err)) continue;
      throw err;
    }
  }
}
