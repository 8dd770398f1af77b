/**
 * The tables the SCEP server (service.ts, ra.ts) reads and writes, created under a plugin's own prefix
 * (`scep_ra` / `scep_transactions`, `mdm_ra` / `mdm_transactions`): each protocol plugin calls these from its
 * migration.
 */
import type { PluginDatabase } from '../context.js';

/**
 * The SCEP server's state: each profile's RA certificate and its sealed key, and the transactions (RFC 8894
 * §3.2.1.1: a transactionID names one enrollment; a client polls and resends with it), bound to the key that
 * signed the first message so that a replayed transactionID under another key is refused, and to the CSR: clients
 * that derive the transactionID from their key (scepclient, certmonger) reuse it for a renewal, with a new CSR or
 * (scepclient) the same CSR as a RenewalReq.
 * Times are epoch ms.
 */
export async function createScepTables(knex: PluginDatabase, prefix: string): Promise<void> {
  await knex.schema.createTable(`${prefix}_ra`, (t) => {
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.text('certificate_pem').notNullable();
    t.text('key_sealed').notNullable();
    t.bigInteger('not_after').notNullable();
    t.bigInteger('renew_after').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['tenant', 'profile']);
  });
  await knex.schema.createTable(`${prefix}_transactions`, (t) => {
    t.string('tenant', 64).notNullable();
    t.string('profile', 191).notNullable();
    t.string('transaction_id', 128).notNullable();
    t.string('key_hash', 64).notNullable();
    t.string('csr_hash', 64).notNullable();
    t.string('message_type', 16).notNullable();
    t.string('request_id', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['tenant', 'profile', 'transaction_id']);
  });
}

export async function dropScepTables(knex: PluginDatabase, prefix: string): Promise<void> {
  await knex.schema.dropTableIfExists(`${prefix}_transactions`);
  await knex.schema.dropTableIfExists(`${prefix}_ra`);
}
