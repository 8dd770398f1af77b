import type { Knex } from 'knex';
import { exactCollation } from '../dialect.js';
import type { Migration } from '../migrator.js';

/**
 * `dcv_domains`: the validation state of each (policy, domain) — validated until, last run, last error — and its
 * lease: a run holds `locked_until` so that two nodes never validate one domain at once (core/dcv/state.ts).
 */
export const dcv0026: Migration = {
  name: '0026_dcv',
  async up(knex: Knex) {
    const collation = await exactCollation(knex);
    await knex.schema.createTable('dcv_domains', (t) => {
      t.string('tenant', 64).notNullable();
      const policy = t.string('policy', 191).notNullable();
      const domain = t.string('domain', 253).notNullable();
      if (collation) {
        policy.collate(collation);
        domain.collate(collation);
      }
      t.string('status', 16).notNullable(); // never | running | validated | failed | cancelled
      t.bigInteger('validated_until').nullable();
      t.bigInteger('last_run_at').nullable();
      t.text('last_error').nullable();
      t.string('method', 64).nullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.string('lock_owner', 64).nullable();
      t.bigInteger('locked_until').nullable();
      t.bigInteger('updated_at').notNullable();
      t.primary(['tenant', 'policy', 'domain'], 'dcv_domains_pk');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('dcv_domains');
  },
};
