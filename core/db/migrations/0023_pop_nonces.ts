import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * `security_pop_nonces`: the Replay-Nonce values a proof of possession (X-JWT-CERT-POP) may carry, each
 * accepted once on any node (a DELETE that finds the row is the acceptance) until it expires.
 */
export const popNonces0023: Migration = {
  name: '0023_pop_nonces',
  async up(knex: Knex) {
    await knex.schema.createTable('security_pop_nonces', (t) => {
      t.string('nonce', 64).primary();
      t.string('tenant', 64).notNullable();
      t.bigInteger('expires_at').notNullable();
      t.index(['expires_at'], 'security_pop_nonces_expiry');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('security_pop_nonces');
  },
};
