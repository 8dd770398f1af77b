import type { Knex } from 'knex';
import { exactCollation, isMysql } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * WebRA requests (client-compat §2.5) and their labels / metadata, searched with HRQL.
 *
 * - `requests`: one row per request; `version` grows on every write so state transitions can be
 *   optimistic. Template, external id and requested X.509 data are JSON text. No PKCS#12, password or
 *   private key here: those need sealed storage (issue 7).
 * - `request_labels` / `request_metadata`: one row per (key, value) of a request, unique, indexed
 *   `(tenant, key, value, request_id)` so HRQL's `label.<k> equals` reads ids from the index.
 *
 * Searchable strings take the NO PAD binary collation on MySQL/MariaDB, so equality is exact there as on
 * SQLite (see 0007); a server without one falls back to `utf8mb4_bin`.
 */
export const requests0008: Migration = {
  name: '0008_requests',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    const mysql = isMysql(knex);

    await knex.schema.createTable('requests', (t) => {
      if (collation) t.charset('utf8mb4'); // comments and templates too, whatever the database default
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('module', 64).notNullable());
      exact(t.string('workflow', 32).notNullable());
      exact(t.string('status', 16).notNullable());
      exact(t.string('profile', 191).nullable());
      exact(t.string('requester', 191).nullable());
      exact(t.string('approver', 191).nullable());
      exact(t.string('contact', 320).nullable());
      exact(t.string('team', 191).nullable());
      t.text('requester_comment').nullable();
      t.text('approver_comment').nullable();
      t.bigInteger('registration_date').notNullable();
      t.bigInteger('last_modification_date').notNullable();
      t.bigInteger('expiration_date').nullable();
      t.bigInteger('remove_at').nullable();
      exact(t.string('certificate_id', 24).nullable());
      exact(t.string('holder_id', 191).nullable());
      exact(t.text('dn').nullable()); // searched rarely: no index, exact by collation
      t.text('error').nullable();
      t.bigInteger('retry_at').nullable();
      t.integer('retry_count').notNullable().defaultTo(0);
      t.boolean('dry_run').notNullable().defaultTo(false);
      (mysql ? t.text('template', 'mediumtext') : t.text('template')).notNullable(); // JSON; CSRs and subjects
      t.text('external_id').nullable(); // JSON
      t.text('requested_x509_data').nullable(); // JSON
      t.integer('version').notNullable().defaultTo(1);
      t.index(['tenant', 'status', 'last_modification_date'], 'req_status_modified');
      t.index(['tenant', 'holder_id'], 'req_holder');
      t.index(['tenant', 'profile'], 'req_profile');
      t.index(['tenant', 'requester'], 'req_requester');
      t.index(['tenant', 'certificate_id'], 'req_certificate');
      t.index(['tenant', 'registration_date'], 'req_registered');
    });

    for (const [table, prefix] of [
      ['request_labels', 'req_label'],
      ['request_metadata', 'req_meta'],
    ] as const) {
      await knex.schema.createTable(table, (t) => {
        if (collation) t.charset('utf8mb4');
        exact(t.string('request_id', 24).notNullable());
        exact(t.string('tenant', 64).notNullable());
        exact(t.string('key', 191).notNullable());
        exact(t.string('value', 448).notNullable()); // key + value + id within MySQL's 3072-byte keys
        t.unique(['tenant', 'key', 'value', 'request_id'], { indexName: `${prefix}_key_value` });
        t.index(['request_id'], `${prefix}_request`);
      });
    }
  },
  async down(knex: Knex) {
    for (const table of ['request_metadata', 'request_labels', 'requests']) await knex.schema.dropTableIfExists(table);
  },
};
