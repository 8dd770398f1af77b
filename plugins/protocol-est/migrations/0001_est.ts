import type { PluginDatabase } from '@certwright/sdk';

/**
 * Which request an EST CSR became, so that a client polling after a 202 (RFC 7030 §4.2.3: it posts the same
 * CSR again) gets that request's certificate instead of a second request. Keyed by the SHA-256 of the CSR's
 * DER; times are epoch milliseconds.
 */
export async function up(knex: PluginDatabase): Promise<void> {
  await knex.schema.createTable('est_requests', (t) => {
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.string('csr_hash', 64).notNullable();
    t.string('request_id', 64).notNullable();
    t.string('requester', 191).notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['tenant', 'profile', 'csr_hash']);
  });
}

export async function down(knex: PluginDatabase): Promise<void> {
  await knex.schema.dropTableIfExists('est_requests');
}
