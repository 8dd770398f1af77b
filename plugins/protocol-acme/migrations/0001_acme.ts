import type { PluginDatabase } from '@certwright/sdk';

/**
 * The ACME server's state: nonces (accepted once, on any node), accounts, orders and authorizations with
 * their challenges (a JSON list: a challenge is addressed by its authorization and type). Text columns
 * hold JSON; times are epoch milliseconds.
 */
export async function up(knex: PluginDatabase): Promise<void> {
  await knex.schema.createTable('acme_nonces', (t) => {
    t.string('nonce', 64).primary();
    t.bigInteger('expires_at').notNullable().index('acme_nonces_expiry');
  });
  await knex.schema.createTable('acme_accounts', (t) => {
    t.string('id', 32).primary();
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.string('thumbprint', 64).notNullable();
    t.text('jwk').notNullable();
    t.string('status', 16).notNullable();
    t.text('contact').notNullable();
    t.boolean('terms_agreed').notNullable().defaultTo(false);
    t.string('eab_kid', 191).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['tenant', 'profile', 'thumbprint'], { indexName: 'acme_accounts_key' });
  });
  await knex.schema.createTable('acme_orders', (t) => {
    t.string('id', 32).primary();
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.string('account_id', 32).notNullable().index('acme_orders_account');
    t.string('status', 16).notNullable();
    t.bigInteger('expires_at').notNullable();
    t.text('identifiers').notNullable();
    t.text('authorizations').notNullable();
    t.string('not_before', 40).nullable();
    t.string('not_after', 40).nullable();
    t.text('error').nullable();
    t.string('request_id', 32).nullable();
    t.text('certificate_pem', 'mediumtext').nullable();
    t.string('certificate_thumbprint', 64).nullable().index('acme_orders_certificate');
    t.string('replaces', 191).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('acme_authorizations', (t) => {
    t.string('id', 32).primary();
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.string('account_id', 32).notNullable();
    t.string('order_id', 32).notNullable().index('acme_authorizations_order');
    t.string('identifier_type', 8).notNullable();
    t.string('identifier_value', 255).notNullable();
    t.boolean('wildcard').notNullable().defaultTo(false);
    t.string('status', 16).notNullable();
    t.bigInteger('expires_at').notNullable();
    t.text('challenges').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

export async function down(knex: PluginDatabase): Promise<void> {
  for (const table of ['acme_authorizations', 'acme_orders', 'acme_accounts', 'acme_nonces']) await knex.schema.dropTableIfExists(table);
}
