import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Event and discovery event analytics (core/events/analytics): counts per tenant × UTC day × code ×
 * status (× module for events, × campaign for discovery events), kept up to date incrementally from a
 * cursor per source, so reading analytics never scans the event tables.
 *
 * Strings are exact (NO PAD binary on MySQL/MariaDB) like the event columns they count: `abc` and `ABC`
 * are two codes there too. Discovery events gain a (created_at, id) index: the cursor walks them in that
 * order across tenants.
 */
export const eventAnalytics0013: Migration = {
  name: '0013_event_analytics',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('event_analytics', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      // Start of the UTC day, epoch ms.
      t.bigInteger('day').notNullable();
      exact(t.string('code', 64).notNullable());
      exact(t.string('module', 64).notNullable());
      exact(t.string('status', 16).notNullable());
      t.bigInteger('total').notNullable();
      t.primary(['tenant', 'day', 'code', 'module', 'status'], 'event_analytics_pk');
    });
    await knex.schema.createTable('discovery_event_analytics', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      t.bigInteger('day').notNullable();
      exact(t.string('campaign', 191).notNullable());
      exact(t.string('code', 64).notNullable());
      exact(t.string('status', 16).notNullable());
      t.bigInteger('total').notNullable();
      t.primary(['tenant', 'day', 'campaign', 'code', 'status'], 'discovery_event_analytics_pk');
    });
    // One row per source: how far its counts go, and when they were last brought up to date.
    await knex.schema.createTable('event_analytics_cursors', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('source', 32).primary());
      // Events: the last counted seq. Discovery events: the last counted (created_at, id).
      t.bigInteger('seq').nullable();
      t.bigInteger('created_at').nullable();
      exact(t.string('last_id', 24).nullable());
      t.bigInteger('updated_at').nullable();
    });
    await knex('event_analytics_cursors').insert([
      { source: 'events', seq: 0, created_at: null, last_id: null, updated_at: null },
      { source: 'discovery-events', seq: null, created_at: null, last_id: null, updated_at: null },
    ]);
    await knex.schema.alterTable('discovery_events', (t) => {
      t.index(['created_at', 'id'], 'discovery_events_date_id');
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('discovery_events', (t) => {
      t.dropIndex(['created_at', 'id'], 'discovery_events_date_id');
    });
    await knex.schema.dropTableIfExists('event_analytics_cursors');
    await knex.schema.dropTableIfExists('discovery_event_analytics');
    await knex.schema.dropTableIfExists('event_analytics');
  },
};
