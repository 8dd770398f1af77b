import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import { onTeamMigrated } from '../security/groups/team-migration.js';
import { labelRoutes } from './labels/routes.js';
import { CertificateRepository, inventoryTeamMigrated } from './repository.js';
import { certificateRoutes } from './routes/certificate-routes.js';
import { searchRoutes } from './search/routes.js';

/** What every inventory route module receives. */
export interface InventoryContext {
  knex: Knex;
  clock: () => number;
  events: EventStore;
  logger: Logger;
  repository: CertificateRepository;
}

/**
 * A team migration (rename or merge) moves the team's certificates in the same transaction, so a
 * certificate never names a team that no longer exists. Process-wide, like the listener set.
 */
onTeamMigrated.add(inventoryTeamMigrated);

export function createInventory(deps: { knex: Knex; clock: () => number; events: EventStore; logger: Logger }): InventoryContext {
  return { ...deps, repository: new CertificateRepository(deps.knex, deps.clock) };
}

/** The inventory's routes (webra capability): certificates, labels, search / aggregate / CSV / dictionary. */
export async function registerInventoryRoutes(app: FastifyInstance, ctx: InventoryContext): Promise<void> {
  for (const routes of [certificateRoutes, labelRoutes, searchRoutes]) await app.register(routes, ctx);
}
