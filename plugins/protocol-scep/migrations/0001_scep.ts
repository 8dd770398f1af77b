import type { PluginDatabase } from '@certwright/sdk';
import { createScepTables, dropScepTables } from '@certwright/sdk/scep-server';

/** The SCEP server's tables (scep_ra, scep_transactions), as the SDK's SCEP server needs them. */
export async function up(knex: PluginDatabase): Promise<void> {
  await createScepTables(knex, 'scep');
}

export async function down(knex: PluginDatabase): Promise<void> {
  await dropScepTables(knex, 'scep');
}
