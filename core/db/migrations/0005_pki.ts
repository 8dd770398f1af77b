import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * Imported CAs, the CRL cache and its per-serial index.
 *
 * - `pki_cas`: one row per imported CA certificate. Lookups the chain builder makes are index reads:
 *   by `subject_key` (sha256 of the normalised subject DN: DNs are too long to index on MySQL) and by
 *   `ski`. The certificate's sha256 is unique per tenant, so one certificate is imported once.
 * - `pki_crl_cache`: the last CRL accepted for a CA (DER), its dates, where it came from, and the last
 *   failure (a refused or unreachable CRL never replaces the previous one).
 * - `pki_crl_entries`: the revoked serials of that CRL, primary key (ca_id, serial), so "is this serial
 *   revoked by this CA" is one primary-key read.
 *
 * Dates are epoch milliseconds; names compare exactly (binary collation on MySQL), as on SQLite.
 */
const exact = (knex: Knex, column: Knex.ColumnBuilder): Knex.ColumnBuilder =>
  knex.client.config.client === 'mysql2' ? column.collate('utf8mb4_bin') : column;

/** A CRL of a large CA weighs megabytes: MySQL's BLOB stops at 64 KiB. */
const bytes = (knex: Knex, t: Knex.CreateTableBuilder, name: string): Knex.ColumnBuilder =>
  knex.client.config.client === 'mysql2' ? t.specificType(name, 'longblob') : t.binary(name);

export const pki0005: Migration = {
  name: '0005_pki',
  async up(knex: Knex) {
    await knex.schema.createTable('pki_cas', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('name', 191).notNullable());
      t.text('certificate', 'mediumtext').notNullable(); // PEM
      t.text('subject_dn').notNullable();
      t.string('subject_key', 64).notNullable();
      t.text('issuer_dn').notNullable();
      t.string('issuer_key', 64).notNullable();
      t.string('ski', 128).nullable();
      t.string('aki', 128).nullable();
      t.string('serial', 128).notNullable();
      t.string('thumbprint_sha1', 40).notNullable();
      t.string('thumbprint_sha256', 64).notNullable();
      t.string('public_key_thumbprint', 64).notNullable();
      t.bigInteger('not_before').notNullable();
      t.bigInteger('not_after').notNullable();
      t.boolean('self_signed').notNullable();
      t.boolean('trusted').notNullable().defaultTo(false);
      t.boolean('trusted_for_client_auth').notNullable().defaultTo(false);
      t.string('crl_url', 2048).nullable(); // distribution point override
      t.string('ocsp_url', 2048).nullable();
      t.string('outdated_revocation_status_policy', 32).notNullable();
      t.boolean('public').notNullable().defaultTo(false);
      t.boolean('downloadable').notNullable().defaultTo(false);
      t.string('refresh', 64).nullable(); // longest wait between two CRL fetches ("12 hours")
      t.string('timeout', 64).nullable(); // CRL download timeout ("10 seconds")
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'name'], { indexName: 'pki_cas_name' });
      t.unique(['tenant', 'thumbprint_sha256'], { indexName: 'pki_cas_thumbprint' });
      t.index(['tenant', 'subject_key'], 'pki_cas_subject');
      t.index(['tenant', 'ski'], 'pki_cas_ski');
    });

    await knex.schema.createTable('pki_crl_cache', (t) => {
      t.string('ca_id', 24).primary();
      t.string('tenant', 64).notNullable();
      bytes(knex, t, 'crl').nullable();
      t.string('crl_sha256', 64).nullable();
      t.bigInteger('this_update').nullable();
      t.bigInteger('next_update').nullable();
      t.string('crl_number', 64).nullable(); // hex
      t.integer('entries').nullable();
      t.bigInteger('fetched_at').nullable();
      t.string('source_url', 2048).nullable();
      t.bigInteger('last_attempt_at').nullable();
      t.text('last_error').nullable();
      t.bigInteger('next_refresh_at').nullable();
      t.index(['tenant'], 'pki_crl_cache_tenant');
    });

    await knex.schema.createTable('pki_crl_entries', (t) => {
      t.string('ca_id', 24).notNullable();
      t.string('serial', 128).notNullable(); // lower-case hex, as parseCertificate prints it
      t.bigInteger('revocation_date').notNullable();
      t.string('reason', 32).nullable();
      t.primary(['ca_id', 'serial'], 'pki_crl_entries_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('pki_crl_entries');
    await knex.schema.dropTableIfExists('pki_crl_cache');
    await knex.schema.dropTableIfExists('pki_cas');
  },
};
