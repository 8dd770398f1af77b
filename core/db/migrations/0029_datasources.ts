import type { Knex } from 'knex';
import { exactCollation } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * `datasource_results`: the last fetch of each datasource (core/datasources/results.ts) — when it ran, how it
 * ended, why it failed — and the records of its last good fetch, which computation rules read. A failed fetch
 * keeps the previous good records: a CMDB that is down for a while does not empty every lookup.
 */
export const datasources0029: Migration = {
  name: '0029_datasources',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    await knex.schema.createTable('datasource_results', (t) => {
      t.string('tenant', 64).notNullable();
      const name = t.string('name', 191).notNullable();
      if (collation) name.collate(collation);
      t.string('status', 16).notNullable(); // ok | failed
      t.bigInteger('fetched_at').notNullable();
      t.integer('duration_ms').notNullable().defaultTo(0);
      t.text('error').nullable();
      t.bigInteger('succeeded_at').nullable();
      t.integer('record_count').notNullable().defaultTo(0);
      // MySQL/MariaDB TEXT stops at 64 KiB: the records (up to 4 MiB of JSON) need LONGTEXT.
      t.text('records', 'longtext').nullable();
      t.primary(['tenant', 'name'], 'datasource_results_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('datasource_results');
  },
};
