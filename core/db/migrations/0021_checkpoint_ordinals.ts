import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * `event_checkpoints.ordinal`: checkpoints numbered 1, 2, 3… in the order they are signed, the number covered
 * by the signature (core/events/integrity/signature.ts, message v2). A verifier finds a deleted checkpoint as
 * a gap in the numbers. Checkpoints signed before this migration keep NULL (their v1 signature has no number).
 */
export const checkpointOrdinals0021: Migration = {
  name: '0021_checkpoint_ordinals',
  async up(knex: Knex) {
    await knex.schema.alterTable('event_checkpoints', (t) => {
      t.bigInteger('ordinal').nullable();
      t.unique(['ordinal'], { indexName: 'event_checkpoints_ordinal' });
    });
  },
  async down(knex: Knex) {
    await knex.schema.alterTable('event_checkpoints', (t) => {
      t.dropUnique(['ordinal'], 'event_checkpoints_ordinal');
      t.dropColumn('ordinal');
    });
  },
};
