import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** The key-value store each plugin gets through its context, scoped by plugin and tenant. */
export const pluginKv0002: Migration = {
  name: '0002_plugin_kv',
  async up(knex: Knex) {
    await knex.schema.createTable('plugin_kv', (t) => {
      t.string('plugin_id', 214).notNullable();
      t.string('tenant', 64).notNullable();
      t.string('key', 191).notNullable();
      t.text('value', 'longtext').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.primary(['plugin_id', 'tenant', 'key']);
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('plugin_kv');
  },
};
