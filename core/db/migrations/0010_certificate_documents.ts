import type { Knex } from 'knex';
import { isMysql } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * The PEM and the JSON lists of a certificate move out of inv_certificates into
 * inv_certificate_documents (one row per certificate, keyed by its id). They are about 2 KB of a 2.5 KB
 * row and are never searched, so every scan of the main table (CSV export, aggregate, unindexed search)
 * read five times the bytes it needed: at 1,000,000 certificates a full scan no longer fits a stock
 * 128 MB buffer pool either way, but it reads 0.5 GB instead of 2.5 GB. Pages read the documents of
 * their own rows by primary key.
 */
const MOVED = ['pem', 'extensions', 'grades', 'third_party_data', 'trigger_results', 'discovery_data', 'discovery_info', 'requested_x509_data'] as const;

export const certificateDocuments0010: Migration = {
  name: '0010_certificate_documents',
  async up(knex: Knex) {
    const mysql = isMysql(knex);
    await knex.schema.createTable('inv_certificate_documents', (t) => {
      if (mysql) t.charset('utf8mb4');
      t.string('certificate_id', 24).primary();
      t.string('tenant', 64).notNullable();
      if (mysql) t.text('pem', 'mediumtext').notNullable();
      else t.text('pem').notNullable();
      for (const column of MOVED.slice(1)) {
        if (mysql && column === 'discovery_data') t.text(column, 'mediumtext').nullable();
        else t.text(column).nullable();
      }
    });
    const columns = MOVED.map(() => '??').join(', ');
    await knex.raw(`INSERT INTO ?? (??, ??, ${columns}) SELECT ??, ??, ${columns} FROM ??`, [
      'inv_certificate_documents',
      'certificate_id',
      'tenant',
      ...MOVED,
      'id',
      'tenant',
      ...MOVED,
      'inv_certificates',
    ]);
    // One rebuild on MySQL: INPLACE, because the default INSTANT drop (MariaDB ≥ 10.4, MySQL ≥ 8.0.29)
    // only hides the columns and every row keeps its bytes. SQLite (≥ 3.35) drops a column at a time.
    if (mysql) await knex.raw(`ALTER TABLE ?? ${MOVED.map(() => 'DROP COLUMN ??').join(', ')}, ALGORITHM=INPLACE`, ['inv_certificates', ...MOVED]);
    else for (const column of MOVED) await knex.raw('ALTER TABLE ?? DROP COLUMN ??', ['inv_certificates', column]);
  },
  async down(knex: Knex) {
    const mysql = isMysql(knex);
    await knex.schema.alterTable('inv_certificates', (t) => {
      for (const column of MOVED) {
        if (mysql && (column === 'pem' || column === 'discovery_data')) t.text(column, 'mediumtext').nullable();
        else t.text(column).nullable();
      }
    });
    for (const column of MOVED) {
      await knex.raw('UPDATE ?? SET ?? = (SELECT ?? FROM ?? d WHERE d.certificate_id = ??.id)', ['inv_certificates', column, `d.${column}`, 'inv_certificate_documents', 'inv_certificates']);
    }
    await knex.schema.dropTable('inv_certificate_documents');
  },
};
