import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Tables of certificate profiles (core/profiles). */
export const certificateProfiles0015: Migration = {
  name: '0015_certificate_profiles',
  async up(knex: Knex) {
    // TODO(issue 7): tables.
    void knex;
  },
  async down(knex: Knex) {
    void knex;
  },
};
