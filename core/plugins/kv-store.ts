import type { Knex } from 'knex';
import type { ScopedKeyValueStore } from '@certwright/sdk';
import type { GroupCommit } from '../db/group-commit.js';

/** A plugin's key-value store: rows of plugin_kv under its id and a tenant. Values are JSON. */
export function scopedKv(knex: Knex, pluginId: string, tenant: string, clock: () => number, groupCommit?: GroupCommit): ScopedKeyValueStore {
  const scope = { plugin_id: pluginId, tenant };
  // setIfAbsent is on connectors' issuance path (idempotency per request): its insert shares commits.
  const insertNow = (sql: string, bindings: readonly unknown[]): Promise<unknown> =>
    groupCommit ? groupCommit.run((trx) => trx.raw(sql, bindings as Knex.RawBinding[])) : knex.raw(sql, bindings as Knex.RawBinding[]);
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
      // wrote the row (the driver's count of rows it changed says so) the value is ours; else it is read.
      const json = JSON.stringify(value);
      const insert = knex('plugin_kv').insert({ ...scope, key, value: json, updated_at: clock() }).onConflict(['plugin_id', 'tenant', 'key']).ignore().toSQL().toNative();
      if (insertedRows(await insertNow(insert.sql, insert.bindings)) === 1) return JSON.parse(json) as T;
      const row = (await knex('plugin_kv').where({ ...scope, key }).first('value')) as { value: string };
      return JSON.parse(row.value) as T;
    },
    async delete(key) {
      await knex('plugin_kv').where({ ...scope, key }).delete();
    },
  };
}

/**
 * Rows an INSERT … ON CONFLICT DO NOTHING / INSERT IGNORE run with knex.raw wrote, from the driver's own
 * count: better-sqlite3 answers `{ changes }` (sqlite3_changes of that statement: 0 when it did nothing),
 * mysql2 `[ResultSetHeader { affectedRows }, fields]` (0 for an ignored row, whatever FOUND_ROWS says).
 * null when the answer has neither (the caller reads instead). Not knex's insert() result: its lastID on
 * better-sqlite3 is the connection's last rowid, stale when the insert did nothing.
 */
function insertedRows(result: unknown): number | null {
  const header: unknown = Array.isArray(result) ? result[0] : result;
  if (typeof header !== 'object' || header === null) return null;
  const { affectedRows, changes } = header as { affectedRows?: unknown; changes?: unknown };
  if (typeof affectedRows === 'number') return affectedRows;
  if (typeof changes === 'number') return changes;
  return null;
}
