import type { PluginDatabase } from '@certwright/sdk';

/**
 * ARI (RFC 9773) and ACME profiles: an issued order keeps its certificate's serial (hex) and authority key
 * identifier (the certID parts), an administrator's "renew from" date, and the certificate profile the order
 * asked for (`profile` of new-order; null: the directory's own).
 */
export async function up(knex: PluginDatabase): Promise<void> {
  await knex.schema.alterTable('acme_orders', (t) => {
    t.string('certificate_serial', 64).nullable().index('acme_orders_serial');
    t.string('certificate_aki', 128).nullable();
    t.bigInteger('renew_after').nullable();
    t.string('issuance_profile', 191).nullable();
    t.bigInteger('not_after_ms').nullable();
    t.bigInteger('not_before_ms').nullable();
  });
}

export async function down(knex: PluginDatabase): Promise<void> {
  await knex.schema.alterTable('acme_orders', (t) => {
    for (const c of ['certificate_serial', 'certificate_aki', 'renew_after', 'issuance_profile', 'not_after_ms', 'not_before_ms']) t.dropColumn(c);
  });
}
