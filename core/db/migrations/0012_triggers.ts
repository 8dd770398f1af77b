import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Triggers, their deliveries and the expiry notices (core/triggers). */
export const triggers0012: Migration = {
  name: '0012_triggers',
  async up(_knex: Knex) {},
  async down(_knex: Knex) {},
};
