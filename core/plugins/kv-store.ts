import type { Knex } from 'knex';
import type { ScopedKeyValueStore } from '@certwright/sdk';

/** A plugin's key-value store: rows of plugin_kv under its id and a tenant. Values are JSON. */
export function scopedKv(knex: Knex, pluginId: string, tenant: string, clock: () => number): ScopedKeyValueStore {
  const scope = { plugin_id: pluginId, tenant };
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
      // Insert-or-ignore on the unique key, then read: whoever inserted first wins, on every node.
      await knex('plugin_kv').insert({ ...scope, key, value: JSON.stringify(value), updated_at: clock() }).onConflict(['plugin_id', 'tenant', 'key']).ignore();
      const row = (await knex('plugin_kv').where({ ...scope, key }).first('value')) as { value: string };
      return JSON.parse(row.value) as T;
    },
    async delete(key) {
      await knex('plugin_kv').where({ ...scope, key }).delete();
    },
  };
}
