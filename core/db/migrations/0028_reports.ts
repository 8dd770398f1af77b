import type { Knex } from 'knex';
import { exactCollation } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * `reports`: the CSV reports link report tasks store (core/reports). The content lives in a storage (`storage`,
 * `storage_key`), recorded here because the system configuration may point reports elsewhere later: a report
 * is read and removed where it was written. `uuid` is the report's public name (GET /reports/:uuid).
 */
export const reports0028: Migration = {
  name: '0028_reports',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    await knex.schema.createTable('reports', (t) => {
      t.string('uuid', 36).primary('reports_pk');
      t.string('tenant', 64).notNullable();
      const name = t.string('name', 191).notNullable(); // the report task's name
      if (collation) name.collate(collation);
      t.string('file_name', 200).notNullable();
      t.string('content_type', 64).notNullable();
      t.bigInteger('size').notNullable();
      t.integer('row_count').notNullable();
      t.string('storage', 191).notNullable();
      t.string('storage_key', 191).notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('expires_at').notNullable();
      t.index(['tenant', 'name', 'created_at'], 'reports_by_name');
      t.index(['expires_at'], 'reports_by_expiry');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('reports');
  },
};
