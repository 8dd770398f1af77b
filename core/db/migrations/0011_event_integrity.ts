import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** Event integrity: verification runs and signed checkpoints of the chain head (core/events/integrity). */
export const eventIntegrity0011: Migration = {
  name: '0011_event_integrity',
  async up(knex: Knex) {
    // One row per verification run, so any node answers its state. The chain is platform-wide (one chain
    // across tenants), so runs, keys and checkpoints carry no tenant.
    await knex.schema.createTable('event_integrity_runs', (t) => {
      t.string('id', 24).primary();
      t.string('status', 16).notNullable();
      // 1 while the run is running, NULL after: the unique index admits one running run across nodes.
      t.integer('running').nullable().unique();
      t.bigInteger('started_at').notNullable();
      t.bigInteger('finished_at').nullable();
      // Last progress write: a run whose node died without a takeover is recognised as abandoned.
      t.bigInteger('updated_at').notNullable();
      t.bigInteger('head_seq').nullable();
      t.bigInteger('checked').notNullable().defaultTo(0);
      t.integer('checkpoints').notNullable().defaultTo(0);
      t.bigInteger('broken_seq').nullable();
      t.string('broken_id', 24).nullable();
      t.string('broken_reason', 255).nullable();
      t.string('error', 1024).nullable();
      t.index(['started_at']);
    });
    // Ed25519 signing keys of the checkpoints; the private key sealed with the SecretBox. `active` = 1 on the
    // key in use (unique: two nodes creating the first key at once insert one row; the loser re-reads).
    await knex.schema.createTable('event_signing_keys', (t) => {
      t.string('key_id', 64).primary();
      t.integer('active').nullable().unique();
      t.text('public_key').notNullable();
      t.text('private_key_sealed').notNullable();
      t.bigInteger('created_at').notNullable();
    });
    // Signed chain heads: at seq the event had this hash when key_id signed it (one per seq).
    await knex.schema.createTable('event_checkpoints', (t) => {
      t.bigInteger('seq').primary();
      t.string('hash', 64).notNullable();
      t.bigInteger('signed_at').notNullable();
      t.string('key_id', 64).notNullable();
      t.string('signature', 128).notNullable();
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('event_checkpoints');
    await knex.schema.dropTableIfExists('event_signing_keys');
    await knex.schema.dropTableIfExists('event_integrity_runs');
  },
};
