import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Horizon's PKI queue bounds and connector type names (client-compat: the vendor's MCP server,
 * src/tools/config/pki-queues.ts and pki-connectors.ts; core/pki/connectors).
 *
 * - `pki_queues`: `size` (most items waiting or running at once), `throttle_parallelism` (most connector
 *   calls in flight, and started per window when `throttle_duration` is set), `throttle_duration` (the
 *   window, a FiniteDuration string as the client sent it: "1 second"), `cluster_wide` (the throttle is
 *   counted in `pki_queue_slots` for all nodes instead of on each node). NULL = no bound.
 * - `pki_connectors.wire_type`: the Horizon name a client gave the type (`integrated` for `local-ca`),
 *   answered as `type` so that client can send it back; NULL = the installed type's own name.
 * - `pki_queue_slots`: the cluster-wide throttle. A queue has `throttle_parallelism` slots; a connector call
 *   holds one (`holder`, a token per call, until `held_until` — a dead node's slot frees when it passes)
 *   and `started_at` keeps when it was last taken: a slot is taken again only once the window has passed.
 */
export const pkiQueueLimits0020: Migration = {
  name: '0020_pki_queue_limits',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.alterTable('pki_queues', (t) => {
      t.integer('size').nullable();
      t.integer('throttle_parallelism').nullable();
      t.string('throttle_duration', 64).nullable();
      t.boolean('cluster_wide').notNullable().defaultTo(false);
    });
    await knex.schema.alterTable('pki_connectors', (t) => {
      exact(t.string('wire_type', 64).nullable());
    });
    await knex.schema.createTable('pki_queue_slots', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('queue', 191).notNullable());
      t.integer('slot').notNullable();
      exact(t.string('holder', 64).nullable());
      t.bigInteger('held_until').nullable();
      t.bigInteger('started_at').nullable();
      t.primary(['tenant', 'queue', 'slot'], 'pki_queue_slots_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('pki_queue_slots');
    await knex.schema.alterTable('pki_connectors', (t) => {
      t.dropColumn('wire_type');
    });
    await knex.schema.alterTable('pki_queues', (t) => {
      t.dropColumn('cluster_wide');
      t.dropColumn('throttle_duration');
      t.dropColumn('throttle_parallelism');
      t.dropColumn('size');
    });
  },
};
