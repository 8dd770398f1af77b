import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Tables of request workflow state: sealed request secrets (PKCS#12, passwords), escrowed keys, challenges (core/requests). */
export const requestWorkflow0016: Migration = {
  name: '0016_request_workflow',
  async up(knex: Knex) {
    // TODO(issue 7): tables.
    void knex;
  },
  async down(knex: Knex) {
    void knex;
  },
};
