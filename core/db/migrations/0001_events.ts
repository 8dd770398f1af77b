import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/** The append-only event store and its hash-chain head (DESIGN.md §2). */
export const events0001: Migration = {
  name: '0001_events',
  async up(knex: Knex) {
    await knex.schema.createTable('events', (t) => {
      t.string('id', 24).primary();
      // Position in the hash chain: strictly increasing, no gaps.
      t.bigInteger('seq').notNullable().unique();
      t.string('tenant', 64).notNullable();
      t.string('code', 64).notNullable();
      t.string('module', 64).notNullable();
      t.string('status', 16).notNullable();
      t.string('principal', 255).nullable();
      t.string('object_type', 64).nullable();
      t.string('object_id', 255).nullable();
      t.text('payload', 'longtext').notNullable();
      t.bigInteger('created_at').notNullable();
      t.string('prev_hash', 64).notNullable();
      t.string('hash', 64).notNullable();
      t.index(['tenant', 'created_at']);
      t.index(['tenant', 'code', 'created_at']);
    });
    // One row: the last seq and hash. Appenders lock it, so concurrent writers extend one chain.
    await knex.schema.createTable('event_chain', (t) => {
      t.integer('id').primary();
      t.bigInteger('seq').notNullable();
      t.string('hash', 64).notNullable();
    });
    await knex('event_chain').insert({ id: 1, seq: 0, hash: '0'.repeat(64) });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('event_chain');
    await knex.schema.dropTableIfExists('events');
  },
};
