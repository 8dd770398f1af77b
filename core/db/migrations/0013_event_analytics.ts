import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Event and discovery event analytics (core/events/analytics). */
export const eventAnalytics0013: Migration = {
  name: '0013_event_analytics',
  async up(_knex: Knex) {},
  async down(_knex: Knex) {},
};
