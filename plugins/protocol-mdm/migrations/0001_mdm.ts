import type { PluginDatabase } from '@certwright/sdk';
import { createScepTables, dropScepTables } from '@certwright/sdk/scep-server';

/** The SCEP server's tables (mdm_ra, mdm_transactions), as the SDK's SCEP server needs them. */
export async function up(knex: PluginDatabase): Promise<void> {
  await createScepTables(knex, 'mdm');
}

export async function down(knex: PluginDatabase): Promise<void> {
  await dropScepTables(knex, 'mdm');
}
