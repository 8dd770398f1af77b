import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { exactCollation } from '../dialect.js';

/**
 * Triggers, their deliveries and the expiry notices (core/triggers).
 *
 * - `triggers`: one row per configured trigger, unique by (tenant, name). `target` is the channel's
 *   configuration without its secret fields; those are in `target_secrets`, each sealed with the
 *   master key. `events` / `thresholds` are JSON lists.
 * - `trigger_cursor`: how far the dispatcher has read the event store (`seq`); advanced in the same
 *   transaction as the deliveries it wrote, so a crash neither skips nor repeats an event.
 * - `trigger_deliveries`: one row per (trigger, event, certificate), unique by `dedupe_key`: two
 *   dispatchers can never queue the same delivery twice. Status pending → sending → delivered | failed
 *   (| canceled when the trigger went away); `lease_until` bounds a send, so a node that died mid-send
 *   hands the row back. `history` is the JSON list of attempts.
 * - `trigger_expiry_notices`: one row per (tenant, certificate, threshold) the expiry scan has handled
 *   (`raised` with its event, or `passed` when a smaller threshold was raised instead); the key makes
 *   two scanning nodes raise each expiring event once.
 */
export const triggers0012: Migration = {
  name: '0012_triggers',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    const exact = (column: Knex.ColumnBuilder): Knex.ColumnBuilder => (collation ? column.collate(collation) : column);
    await knex.schema.createTable('triggers', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('name', 191).notNullable());
      t.text('description').nullable();
      t.boolean('enabled').notNullable().defaultTo(true);
      exact(t.string('channel', 64).notNullable());
      t.text('target').notNullable();
      t.text('target_secrets').notNullable();
      t.text('events').notNullable();
      t.text('thresholds').notNullable();
      t.text('query').nullable();
      exact(t.string('trigger_type', 16).notNullable());
      // Seq of the TRIGGER-CREATED event: the trigger reacts to the events after it, not to older ones.
      t.bigInteger('created_seq').notNullable().defaultTo(0);
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'name'], { indexName: 'triggers_tenant_name' });
    });
    await knex.schema.createTable('trigger_cursor', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('name', 32).primary());
      t.bigInteger('seq').notNullable();
      t.bigInteger('updated_at').notNullable();
    });
    // Start at the chain head: events older than the triggers are not replayed on an upgraded database.
    const head = (await knex('event_chain').where({ id: 1 }).first('seq')) as { seq: number | string } | undefined;
    await knex('trigger_cursor').insert({ name: 'dispatch', seq: Number(head?.seq ?? 0), updated_at: Date.now() });
    await knex.schema.createTable('trigger_deliveries', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('id', 24).primary());
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('dedupe_key', 100).notNullable());
      exact(t.string('trigger_id', 24).notNullable());
      exact(t.string('trigger_name', 191).notNullable());
      exact(t.string('trigger_event', 32).notNullable());
      t.integer('threshold_days').nullable();
      exact(t.string('event_id', 24).nullable());
      t.bigInteger('event_seq').nullable();
      exact(t.string('certificate_id', 24).nullable());
      exact(t.string('status', 16).notNullable());
      t.integer('attempts').notNullable().defaultTo(0);
      t.bigInteger('next_attempt_at').notNullable();
      t.bigInteger('lease_until').nullable();
      t.text('last_error').nullable();
      t.text('history').notNullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.bigInteger('finished_at').nullable();
      t.unique(['dedupe_key'], { indexName: 'trigger_deliveries_dedupe' });
      // The worker's claim: due pending rows, oldest first; expired leases.
      t.index(['status', 'next_attempt_at'], 'trigger_deliveries_due');
      t.index(['tenant', 'trigger_name', 'created_at'], 'trigger_deliveries_trigger');
      t.index(['tenant', 'certificate_id'], 'trigger_deliveries_certificate');
    });
    await knex.schema.createTable('trigger_expiry_notices', (t) => {
      if (collation) t.charset('utf8mb4');
      exact(t.string('tenant', 64).notNullable());
      exact(t.string('certificate_id', 24).notNullable());
      t.integer('threshold_days').notNullable();
      exact(t.string('state', 16).notNullable());
      exact(t.string('event_id', 24).nullable());
      t.bigInteger('created_at').notNullable();
      t.primary(['tenant', 'certificate_id', 'threshold_days']);
    });
  },
  async down(knex: Knex) {
    for (const table of ['trigger_expiry_notices', 'trigger_deliveries', 'trigger_cursor', 'triggers']) await knex.schema.dropTableIfExists(table);
  },
};
