import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * The node that recorded an event and when it may be removed (Horizon's event object: `node`,
 * `removeAt`; client-compat, issue 23). Neither is covered by the chain hash: the hash covers what
 * happened, these say where it was written and how long it is kept. NULL on events written before.
 */
export const eventNode0018: Migration = {
  name: '0018_event_node',
  async up(knex: Knex) {
    await knex.schema.alterTable('events', (t) => {
      t.string('node', 255).nullable();
      t.bigInteger('remove_at').nullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('events', (t) => {
      t.dropColumn('remove_at');
      t.dropColumn('node');
    });
  },
};
