import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Event integrity: verification runs and signed checkpoints of the chain head (core/events/integrity). */
export const eventIntegrity0011: Migration = {
  name: '0011_event_integrity',
  async up(_knex: Knex) {},
  async down(_knex: Knex) {},
};
