import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * `automation_renewals`: what the lifecycle task did with each certificate an automation policy covers — one
 * row per (tenant, certificate) claimed for renewal. The primary key is the claim: two nodes running the same
 * lifecycle task cannot both insert it, and a lease (`claimed_until`) lets a retry take over a failed or
 * abandoned claim (core/automation/lifecycle/claims.ts). It then carries the retries' backoff, the renewal's
 * request and certificate, and the superseded certificate's revocation after the policy's grace.
 */
export const automationRenewals0027: Migration = {
  name: '0027_automation_renewals',
  async up(knex: Knex) {
    await knex.schema.createTable('automation_renewals', (t) => {
      t.string('tenant', 64).notNullable();
      t.string('certificate_id', 24).notNullable();
      t.string('policy', 191).notNullable();
      t.string('status', 16).notNullable(); // claimed | requested | renewed | failed | revoking | revoked | given-up
      t.integer('attempts').notNullable().defaultTo(0);
      t.bigInteger('next_attempt_at').nullable();
      t.string('claimed_by', 64).nullable();
      t.bigInteger('claimed_until').nullable();
      t.string('request_id', 24).nullable();
      t.string('new_certificate_id', 24).nullable();
      t.bigInteger('renewed_at').nullable();
      t.bigInteger('revoke_after').nullable();
      t.bigInteger('revoked_at').nullable();
      t.text('last_error').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.primary(['tenant', 'certificate_id'], 'automation_renewals_pk');
      t.index(['tenant', 'policy', 'status'], 'automation_renewals_policy');
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('automation_renewals');
  },
};
