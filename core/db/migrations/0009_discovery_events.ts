import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Discovery events (client-compat §5): what discovery clients report through the feed's PUT, searched
 * with HDQL (core/discovery/language.ts). `created_at` (epoch ms) is the event's `timestamp`.
 *
 * Strings compare exactly on MySQL/MariaDB as on SQLite: the NO PAD binary collation, as 0007 gives the
 * events and inventory columns (`utf8mb4_bin` is PAD SPACE on MariaDB: `"a "` would equal `"a"`).
 * A server with neither NO PAD binary collation gets `utf8mb4_bin`, still case-sensitive.
 */
export const discoveryEvents0009: Migration = {
  name: '0009_discovery_events',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('discovery_events', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('campaign', 191).notNullable());
      exact(t.string('session_id', 128).nullable());
      exact(t.string('code', 64).notNullable());
      exact(t.string('status', 16).notNullable());
      exact(t.string('error_code', 128).nullable());
      exact(t.text('error_message').nullable());
      exact(t.string('hostname', 255).nullable());
      exact(t.string('ip', 64).nullable());
      t.integer('port').nullable();
      exact(t.string('source', 255).nullable());
      t.bigInteger('created_at').notNullable();
      exact(t.string('client_version', 255).nullable());
      exact(t.string('client_ip', 64).nullable());
      exact(t.string('client_id', 255).nullable());
      exact(t.string('certificate_id', 24).nullable());
      t.index(['tenant', 'created_at'], 'discovery_events_tenant_date');
      t.index(['tenant', 'campaign', 'created_at'], 'discovery_events_campaign_date');
      t.index(['tenant', 'code', 'created_at'], 'discovery_events_code_date');
      t.index(['tenant', 'session_id'], 'discovery_events_session');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('discovery_events');
  },
};
