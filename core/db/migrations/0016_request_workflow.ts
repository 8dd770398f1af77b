import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Tables of request workflow state (core/requests), never the `requests` table itself (RequestStore refuses
 * secrets in templates):
 *
 * - `request_secrets`: sealed values of one request (`kind`: `key` = a server-generated private key waiting
 *   for its certificate, `password` = the PKCS#12 password, `pkcs12` = a built PKCS#12 waiting to be read,
 *   `challenge` = a challenge to hand out once, `import-key` = the private key of a pending import). Each
 *   sealed with the master key (associated data `request:<id>:<kind>`); one-time answers are deleted when read.
 * - `request_escrow`: escrowed private keys (profiles with keyPolicy.escrow), sealed, by certificate.
 * - `request_challenges`: one-time challenges by SHA-256 of the secret; `consumed_at` set once.
 */
export const requestWorkflow0016: Migration = {
  name: '0016_request_workflow',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('request_secrets', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('request_id', 24).notNullable());
      exact(t.string('kind', 16).notNullable());
      t.text('sealed', 'mediumtext').notNullable();
      t.bigInteger('created_at').notNullable();
      t.primary(['tenant', 'request_id', 'kind']);
    });
    await knex.schema.createTable('request_escrow', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('certificate_id', 24).notNullable());
      exact(t.string('request_id', 24).notNullable());
      t.text('sealed_key').notNullable();
      t.bigInteger('created_at').notNullable();
      t.primary(['tenant', 'certificate_id']);
    });
    await knex.schema.createTable('request_challenges', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('hash', 64).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('request_id', 24).notNullable());
      t.bigInteger('expires_at').notNullable();
      t.bigInteger('consumed_at').nullable();
      t.bigInteger('created_at').notNullable();
      t.index(['tenant', 'request_id'], 'request_challenges_request');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('request_challenges');
    await knex.schema.dropTableIfExists('request_escrow');
    await knex.schema.dropTableIfExists('request_secrets');
  },
};
