import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * The certificate inventory, laid out for 1,000,000+ certificates (issue 6):
 *
 * - `inv_certificates`: one row per certificate (client-compat §3), every searchable scalar in its own
 *   column with a `(tenant, column, id)` index so a filtered, id-ordered page is an index range read.
 *   DNs are too long to index on MySQL (3072-byte keys): `dn_key` / `issuer_key` hold the sha256 of the
 *   exact DN for equality. Status is derived (revoked, else not_after against now), never stored.
 *   Lists shown whole (extensions, grades, third-party data, trigger results, discovery data/info,
 *   requested X.509 data) are JSON text; what the query language searches in them is copied into
 *   `inv_certificate_facets`.
 * - `inv_certificate_sans`: one row per SAN value, `position` its order in the certificate; `value_lc`
 *   (lower-case) and `value_rev` (lower-case, reversed) are indexed so exact and suffix (`*.example.com`)
 *   searches are index range reads.
 * - `inv_certificate_labels` / `inv_certificate_metadata`: one row per key; `(tenant, key, value, id)`.
 * - `inv_certificate_facets`: searchable values of the JSON lists (`discoverydata.hostname`,
 *   `thirdparty.connector`, `trigger.status`, …), `(tenant, facet, value, id)`.
 * - `inv_labels`: label definitions (name, regex, displayName, description).
 *
 * Strings compare exactly (binary collation on MySQL), as they do on SQLite.
 */
const mysql = (knex: Knex): boolean => knex.client.config.client === 'mysql2';
const exact = (knex: Knex, column: Knex.ColumnBuilder): Knex.ColumnBuilder => (mysql(knex) ? column.collate('utf8mb4_bin') : column);
const longText = (knex: Knex, t: Knex.CreateTableBuilder, name: string): Knex.ColumnBuilder =>
  mysql(knex) ? t.text(name, 'mediumtext') : t.text(name);

/** Side tables: one row per value of a certificate, found by (tenant, key…, value) and dropped with it. */
function sideTable(knex: Knex, t: Knex.CreateTableBuilder, name: string): void {
  t.string('certificate_id', 24).notNullable();
  t.string('tenant', 64).notNullable();
  t.index(['certificate_id'], `${name}_certificate`);
}

export const inventory0006: Migration = {
  name: '0006_inventory',
  async up(knex: Knex) {
    await knex.schema.createTable('inv_certificates', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('module', 64).nullable());
      exact(knex, t.string('profile', 191).nullable());
      exact(knex, t.string('owner', 191).nullable());
      exact(knex, t.string('team', 191).nullable());
      exact(knex, t.string('contact_email', 320).nullable());
      longText(knex, t, 'pem').notNullable();
      t.string('thumbprint', 40).notNullable(); // sha1 of the DER, lower-case hex
      t.string('public_key_thumbprint', 64).notNullable(); // sha256 of the SPKI
      t.boolean('self_signed').notNullable();
      exact(knex, t.text('dn').notNullable());
      t.string('dn_key', 64).notNullable(); // sha256 of dn
      exact(knex, t.string('serial', 128).notNullable()); // lower-case hex
      exact(knex, t.text('issuer').notNullable());
      t.string('issuer_key', 64).notNullable(); // sha256 of issuer
      t.bigInteger('not_before').notNullable();
      t.bigInteger('not_after').notNullable();
      t.boolean('revoked').notNullable().defaultTo(false);
      t.bigInteger('revocation_date').nullable();
      exact(knex, t.string('revocation_reason', 64).nullable());
      exact(knex, t.string('key_type', 64).notNullable());
      exact(knex, t.string('signing_algorithm', 64).notNullable());
      exact(knex, t.string('holder_id', 191).nullable());
      t.boolean('escrowed').notNullable().defaultTo(false);
      t.boolean('auto_renew').notNullable().defaultTo(false);
      t.boolean('crl_synchronized').notNullable().defaultTo(false);
      t.boolean('archived').notNullable().defaultTo(false);
      t.boolean('discovered').notNullable().defaultTo(false); // some discovery info is attached
      t.boolean('discovered_trusted').nullable();
      exact(knex, t.string('grade', 16).nullable()); // the worst grade over grading policies
      t.text('extensions').nullable(); // JSON
      t.text('grades').nullable(); // JSON
      t.text('third_party_data').nullable(); // JSON
      t.text('trigger_results').nullable(); // JSON
      longText(knex, t, 'discovery_data').nullable(); // JSON
      t.text('discovery_info').nullable(); // JSON
      t.text('requested_x509_data').nullable(); // JSON
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'thumbprint'], { indexName: 'inv_cert_thumbprint' });
      t.index(['tenant', 'id'], 'inv_cert_tenant_id');
      t.index(['tenant', 'not_after', 'id'], 'inv_cert_not_after');
      t.index(['tenant', 'not_before', 'id'], 'inv_cert_not_before');
      // (revoked, id): a status page walks it in id order and stops at the page; (revoked, not_after)
      // made both engines read the whole range and sort it (650 ms at 1M). Date ranges use inv_cert_not_after.
      t.index(['tenant', 'revoked', 'id'], 'inv_cert_status');
      t.index(['tenant', 'profile', 'team', 'id'], 'inv_cert_profile_team');
      t.index(['tenant', 'team', 'id'], 'inv_cert_team');
      t.index(['tenant', 'owner', 'id'], 'inv_cert_owner');
      t.index(['tenant', 'module', 'id'], 'inv_cert_module');
      t.index(['tenant', 'dn_key'], 'inv_cert_dn');
      t.index(['tenant', 'issuer_key', 'serial'], 'inv_cert_issuer_serial');
      t.index(['tenant', 'serial'], 'inv_cert_serial');
      t.index(['tenant', 'key_type', 'id'], 'inv_cert_key_type');
      t.index(['tenant', 'signing_algorithm', 'id'], 'inv_cert_signing_algorithm');
      t.index(['tenant', 'public_key_thumbprint'], 'inv_cert_pk_thumbprint');
      t.index(['tenant', 'holder_id'], 'inv_cert_holder');
      t.index(['tenant', 'contact_email'], 'inv_cert_contact');
      t.index(['tenant', 'revocation_date'], 'inv_cert_revocation_date');
      t.index(['tenant', 'grade', 'id'], 'inv_cert_grade');
    });

    await knex.schema.createTable('inv_certificate_sans', (t) => {
      sideTable(knex, t, 'inv_san');
      t.string('san_type', 32).notNullable();
      t.text('value').notNullable();
      // Search keys stop at 512 characters (MySQL's 3072-byte index keys); DNS names stop at 253.
      exact(knex, t.string('value_lc', 512).notNullable());
      exact(knex, t.string('value_rev', 512).notNullable());
      // Order of the value in the certificate: side rows come back in no guaranteed order.
      t.integer('position').notNullable().defaultTo(0);
      t.index(['tenant', 'value_lc', 'certificate_id'], 'inv_san_value');
      t.index(['tenant', 'value_rev', 'certificate_id'], 'inv_san_reversed');
    });

    for (const [table, prefix] of [
      ['inv_certificate_labels', 'inv_label'],
      ['inv_certificate_metadata', 'inv_meta'],
    ] as const) {
      await knex.schema.createTable(table, (t) => {
        sideTable(knex, t, prefix);
        exact(knex, t.string('key', 191).notNullable());
        exact(knex, t.string('value', 448).notNullable()); // key + value + id within MySQL's 3072-byte keys
        t.index(['tenant', 'key', 'value', 'certificate_id'], `${prefix}_key_value`);
      });
    }

    await knex.schema.createTable('inv_certificate_facets', (t) => {
      sideTable(knex, t, 'inv_facet');
      exact(knex, t.string('facet', 64).notNullable());
      exact(knex, t.string('value', 512).notNullable());
      t.index(['tenant', 'facet', 'value', 'certificate_id'], 'inv_facet_value');
    });

    await knex.schema.createTable('inv_labels', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('name', 191).notNullable());
      t.string('regex', 1024).nullable();
      t.text('display_name').notNullable(); // JSON [{lang, value}]
      t.text('description').notNullable(); // JSON [{lang, value}]
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'name'], { indexName: 'inv_labels_name' });
    });
  },
  async down(knex: Knex) {
    for (const table of ['inv_labels', 'inv_certificate_facets', 'inv_certificate_metadata', 'inv_certificate_labels', 'inv_certificate_sans', 'inv_certificates']) {
      await knex.schema.dropTableIfExists(table);
    }
  },
};
