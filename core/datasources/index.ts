import { asValue, type AwilixContainer } from 'awilix';
import type { FastifyInstance } from 'fastify';
import type { ConfigRegistry } from '../config-objects/registry.js';
import type { ProxyRouter } from '../egress/proxy-router.js';
import type { CoreServices } from '../services.js';
import { DATASOURCE_SECTION, datasourceType } from './config-type.js';
import { DatasourceJobs } from './jobs.js';
import { templateDatasources } from './lookup.js';
import type { Datasource } from './model.js';
import { DatasourceResults } from './results.js';
import { mountDatasourceRoutes } from './routes.js';
import { Datasources } from './service.js';

export { DATASOURCE_TYPE } from './config-type.js';

/**
 * Datasources (issue 30 item 6): the collection on the configuration registry (its standard set comes with
 * every other type's), the scheduled fetches, the PATCH and flow routes, and the records computation rules read
 * through Lookup() (registered in the container as `templateDatasources`, which the playground resolves).
 */
export function registerDatasources(app: FastifyInstance, deps: { services: CoreServices; registry: ConfigRegistry; proxies: ProxyRouter; container: AwilixContainer }): Datasources {
  const { services, registry, proxies, container } = deps;
  const { knex, clock, logger, scheduler, config, credentials } = services;
  const log = logger.child({ component: 'datasources' });
  const results = new DatasourceResults(knex, clock);
  const datasources = new Datasources({ registry, results, fetch: { credentials, proxies, dataDir: config.dataDir }, clock, logger: log });
  const jobs = new DatasourceJobs(scheduler, datasources, log);
  jobs.define();
  registry.declare({
    ...datasourceType,
    hooks: {
      ...datasourceType.hooks,
      // The schedule follows the stored datasource; a deleted one leaves no job and no records behind.
      async afterChange(change, context) {
        const d = change.op === 'delete' ? null : (change.object as unknown as Datasource);
        if (services.runsJobs) await jobs.reschedule(context.tenant, change.name, d);
        if (change.op === 'delete') await results.forget(context.tenant, change.name);
      },
    },
  });
  mountDatasourceRoutes(app, registry, datasources);
  container.register({
    templateDatasources: asValue(templateDatasources({ permission: `configuration:${DATASOURCE_SECTION}:read`, datasource: (tenant, name) => datasources.definition(tenant, name), results })),
  });
  return datasources;
}

