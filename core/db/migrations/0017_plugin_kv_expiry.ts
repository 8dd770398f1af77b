import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * Plugin kv entries that expire (SDK 1.5, `ttlMs`): `expires_at` (epoch ms, NULL = never). Reads treat an
 * expired entry as absent; the hourly job plugins.kv-expiry deletes them through the index. Connectors keep
 * per-request records (the local CA's idempotency record, ACME orders) that are dead once the request is
 * done: without an expiry they would stay for ever, one row per certificate.
 */
export const pluginKvExpiry0017: Migration = {
  name: '0017_plugin_kv_expiry',
  async up(knex: Knex) {
    await knex.schema.alterTable('plugin_kv', (t) => {
      t.bigInteger('expires_at').nullable();
      t.index(['expires_at'], 'plugin_kv_expiry');
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('plugin_kv', (t) => {
      t.dropIndex(['expires_at'], 'plugin_kv_expiry');
      t.dropColumn('expires_at');
    });
  },
};
