import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Tables of PKI connectors, PKI queues and queue items (core/pki/connectors). */
export const pkiConnectors0014: Migration = {
  name: '0014_pki_connectors',
  async up(knex: Knex) {
    // TODO(issue 7): tables.
    void knex;
  },
  async down(knex: Knex) {
    void knex;
  },
};
