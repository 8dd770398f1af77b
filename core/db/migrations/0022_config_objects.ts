import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * The configuration registry's own store (core/config-objects): one row per object of every type declared
 * without a store of its own (credentials, HTTP proxies, terms of service, storages, system configuration,
 * plugin types). `body` is the object as JSON with its secret fields sealed (cw1 envelopes); `tenant` is `*`
 * for global types.
 *
 * `storage_blobs`: the content of the `database` storage type (reports and archives written to the
 * database instead of the data directory), in chunks so no row exceeds MySQL's max_allowed_packet.
 */
export const configObjects0022: Migration = {
  name: '0022_config_objects',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('config_objects', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('type', 64).notNullable());
      exact(t.string('name', 191).notNullable());
      t.string('id', 24).notNullable();
      t.text('body', 'mediumtext').notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.primary(['tenant', 'type', 'name'], 'config_objects_pk');
    });
    await knex.schema.createTable('storage_blobs', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('storage', 191).notNullable());
      exact(t.string('blob_key', 191).notNullable());
      t.integer('chunk').notNullable();
      (knex.client.config.client === 'mysql2' ? t.specificType('data', 'mediumblob') : t.binary('data')).notNullable();
      t.primary(['tenant', 'storage', 'blob_key', 'chunk'], 'storage_blobs_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('storage_blobs');
    await knex.schema.dropTableIfExists('config_objects');
  },
};
