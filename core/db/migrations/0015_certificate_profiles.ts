import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Certificate profiles (core/profiles): one row per profile, unique by (tenant, name). The columns the
 * other modules look up (`module`, `enabled`, `pki_connector`: PKI-CONN-005 refuses deleting a connector a
 * profile names) are columns; the rest of the profile (key policy, template rules, authorizations) is the
 * JSON `document`. `version` counts the changes (1 on creation). Strings are exact (NO PAD binary on
 * MySQL/MariaDB): profile names are permission segments, `Web` and `web` are two profiles.
 */
export const certificateProfiles0015: Migration = {
  name: '0015_certificate_profiles',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('certificate_profiles', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('name', 191).notNullable());
      exact(t.string('module', 64).notNullable());
      t.boolean('enabled').notNullable().defaultTo(true);
      exact(t.string('pki_connector', 191).notNullable());
      t.text('document').notNullable();
      t.integer('version').notNullable().defaultTo(1);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      exact(t.string('created_by', 191).nullable());
      exact(t.string('updated_by', 191).nullable());
      t.unique(['tenant', 'name'], { indexName: 'certificate_profiles_tenant_name' });
      t.index(['tenant', 'pki_connector'], 'certificate_profiles_connector');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('certificate_profiles');
  },
};
