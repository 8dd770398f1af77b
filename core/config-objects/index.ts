import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import type { ProvidedServices } from '../plugins/provided.js';
import type { SecretBox } from '../secrets/index.js';
import { ConfigRegistry } from './registry.js';
import { mountConfigType } from './routes.js';
import { cookbookRoutes } from './cookbook/routes.js';
import { transferRoutes } from './transfer/routes.js';
import { ConfigObjectStore } from './store.js';
import { credentialType } from './types/credentials.js';
import { httpProxyType } from './types/http-proxy.js';
import { storageType } from './types/storage.js';
import { systemConfigurationType } from './types/system-configuration.js';
import { termsOfServiceType } from './types/terms-of-service.js';

export { ConfigRegistry, SECRET_MASK } from './registry.js';
export { credentialsFacade } from './credentials-facade.js';
export type { RegisteredType } from './registry.js';

export interface ConfigObjectsDeps {
  knex: Knex;
  clock: () => number;
  secrets: SecretBox;
  events: EventStore;
  logger: Logger;
  provided: ProvidedServices;
}

/** The registry with the core's own types declared (plugins declare theirs while they register). */
export function createConfigRegistry(deps: ConfigObjectsDeps): ConfigRegistry {
  const registry = new ConfigRegistry({ knex: deps.knex, store: new ConfigObjectStore(deps.knex, deps.clock), secrets: deps.secrets, events: deps.events, logger: deps.logger });
  registry.declare(credentialType);
  registry.declare(httpProxyType);
  registry.declare(termsOfServiceType);
  registry.declare(storageType(() => deps.provided.storages.types()));
  registry.declare(
    // On the write's own transaction: SQLite has one connection, another would wait for it forever.
    systemConfigurationType(async (db, tenant, name) => (await (db as Knex)('triggers').where({ tenant, name }).first('id')) !== undefined),
  );
  return registry;
}

/** The standard set of every declared type (after plugins declared theirs, before the router freezes). */
export function mountConfigRoutes(app: FastifyInstance, registry: ConfigRegistry): void {
  // `own` types keep the routes their collection serves (their route files say why).
  for (const t of registry.types()) if (t.decl.routes !== 'own') mountConfigType(app, registry, t);
  transferRoutes(app, registry);
  cookbookRoutes(app, registry);
}

/** First start of a tenant: each type's default objects that do not exist yet (never overwrites). */
export async function bootstrapConfigObjects(registry: ConfigRegistry, tenant: string): Promise<void> {
  for (const t of registry.types()) for (const object of t.decl.defaults ?? []) await registry.seed(t.decl.type, tenant, object);
}
