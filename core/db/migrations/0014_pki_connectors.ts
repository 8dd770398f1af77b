import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * PKI connectors, PKI queues and queue items (core/pki/connectors).
 *
 * - `pki_connectors`: one row per configured connector, unique by (tenant, name). `configuration` is the
 *   JSON the plugin's configSchema validated, each `x-secret` field (at any depth) replaced by
 *   `{"$sealed": "<AES-256-GCM envelope>"}`. `version` grows with every change: nodes compare it to
 *   the instance they cache.
 * - `pki_queues`: retry settings per queue, unique by (tenant, name); `default` is created on first use.
 * - `pki_queue_items`: one row per issuance / revocation in flight, unique by (tenant, request_id). State
 *   running (an attempt holds it until `lease_until`) → waiting (due at `next_attempt_at`) → deleted with
 *   the completion transaction, or failed (retries used up). `poll_token` is the connector's pending token.
 */
export const pkiConnectors0014: Migration = {
  name: '0014_pki_connectors',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('pki_connectors', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('name', 191).notNullable());
      exact(t.string('type', 64).notNullable());
      t.text('description').nullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      exact(t.string('queue', 191).notNullable());
      t.text('configuration').notNullable();
      t.integer('version').notNullable().defaultTo(1);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      exact(t.string('created_by', 191).nullable());
      exact(t.string('updated_by', 191).nullable());
      t.unique(['tenant', 'name'], { indexName: 'pki_connectors_tenant_name' });
    });
    await knex.schema.createTable('pki_queues', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('name', 191).notNullable());
      t.text('description').nullable();
      t.integer('retries').notNullable();
      t.integer('initial_delay_seconds').notNullable();
      t.integer('max_delay_seconds').notNullable();
      t.boolean('paused').notNullable().defaultTo(false);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      exact(t.string('created_by', 191).nullable());
      exact(t.string('updated_by', 191).nullable());
      t.unique(['tenant', 'name'], { indexName: 'pki_queues_tenant_name' });
    });
    await knex.schema.createTable('pki_queue_items', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('request_id', 64).notNullable());
      exact(t.string('connector', 191).notNullable());
      exact(t.string('queue', 191).notNullable());
      exact(t.string('operation', 16).notNullable());
      t.text('payload', collation ? 'mediumtext' : undefined).notNullable();
      exact(t.string('state', 16).notNullable());
      t.integer('attempts').notNullable().defaultTo(0);
      t.bigInteger('next_attempt_at').nullable();
      t.bigInteger('lease_until').nullable();
      exact(t.string('lease_owner', 64).nullable());
      t.text('poll_token').nullable();
      t.text('last_error').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'request_id'], { indexName: 'pki_queue_items_request' });
      // The job's claim: waiting rows by due date, running rows by lease end.
      t.index(['state', 'next_attempt_at'], 'pki_queue_items_due');
      t.index(['state', 'lease_until'], 'pki_queue_items_lease');
      t.index(['tenant', 'queue', 'state'], 'pki_queue_items_queue');
    });
  },
  async down(knex: Knex) {
    for (const table of ['pki_queue_items', 'pki_queues', 'pki_connectors']) await knex.schema.dropTableIfExists(table);
  },
};
