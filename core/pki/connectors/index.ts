import type { FastifyInstance } from 'fastify';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import type { ProfileService } from '../../profiles/types.js';
import { pkiServices } from '../cas/services.js';
import { pemBlocks, toPem } from '../input.js';
import { parseCertificate } from '../x509/parse.js';
import { checkConfiguration, schemaOfType, sealConfiguration } from './configuration.js';
import { Gateway } from './gateway.js';
import { ConnectorInstances } from './instances.js';
import { DEFAULT_QUEUE } from './model.js';
import { CrlCache, publicationRoutes } from './publication.js';
import { QueueItems } from './queue.js';
import { ConnectorRepository } from './repository.js';
import { connectorRoutes } from './routes.js';
import type { PkiGateway } from './types.js';

export { faultPoint } from './fault.js';
export { QUEUE_JOB } from './gateway.js';

export interface PkiConnectorsModule {
  gateway: PkiGateway;
  /**
   * First start (config pki.bootstrap): with no PKI connector in the tenant and the local-ca type installed,
   * creates connector `local-ca` and profile `default` bound to it (race-safe across nodes).
   */
  bootstrap(tenant: string, profiles: ProfileService): Promise<void>;
}

/** The bootstrap's connector name and type. */
export const LOCAL_CA = 'local-ca';

const modules = new WeakMap<
  FastifyInstance,
  { gateway: Gateway; repository: ConnectorRepository; items: QueueItems; crls: CrlCache; changed(tenant: string, name: string): void }
>();
/**
 * The gateway, repository and queue of a kernel's app (tests drive the queue job through it; the kernel
 * declares the connector and queue configuration types on its repository and `changed`).
 */
export const pkiConnectorsOf = (app: FastifyInstance) => modules.get(app);

/** /api/v1/pki/connectors/, /api/v1/pki/queues/, the CRL / OCSP / CA publication routes, the queue job. */
export async function registerPkiConnectors(app: FastifyInstance, services: CoreServices): Promise<PkiConnectorsModule> {
  const logger = services.logger.child({ component: 'pki-connectors' });
  const repository = new ConnectorRepository(services.knex, services.events, services.clock);
  const instances = new ConnectorInstances(repository, services.provided.pkiConnectors, services.secrets, services.clock, logger);
  const items = new QueueItems(services.knex, services.clock, services.groupCommit);
  const gateway = new Gateway(services, repository, instances, items, logger);
  const crls = new CrlCache(services.clock);
  gateway.onRevoked = (tenant, connector) => crls.invalidate(tenant, connector);
  await gateway.install((hook) => app.addHook('onClose', hook));
  /** A connector changed on this node: its cached instance and CRLs go. */
  const changed = (tenant: string, name: string) => {
    instances.forget(tenant, name);
    crls.invalidate(tenant, name);
  };
  modules.set(app, { gateway, repository, items, crls, changed });

  const cas = () => pkiServices({ knex: services.knex, clock: services.clock, events: services.events, logger: services.logger.child({ component: 'pki' }), scheduler: services.scheduler });

  /** Imports each CA of a chain not yet in /api/v1/cas (by thumbprint); roots are trusted anchors. */
  const importChain = async (tenant: string, chain: string[], principal: string | null): Promise<void> => {
    const { cas: service, caStore } = cas();
    for (const pem of chain) {
      const der = pemBlocks(pem)[0]?.der;
      if (!der) throw new ProblemError('PKI-CONN-007', { detail: 'the connector answered a CA chain entry that is not PEM' });
      const info = parseCertificate(der);
      if (await caStore.byThumbprint(tenant, info.thumbprints.sha256)) continue;
      const cn = info.dnElements.find((e) => e.type === 'CN' || e.type === 'cn')?.value;
      const base = (cn ?? info.dn).replace(/\//g, '-').slice(0, 150);
      for (let n = 1; ; n++) {
        const name = n === 1 ? base : `${base} (${n})`;
        if (await caStore.byName(tenant, name)) continue;
        try {
          await service.create(tenant, { name, certificate: toPem(der), trusted: info.selfSigned }, principal);
        } catch (err) {
          // Another node imported it meanwhile.
          if (err instanceof ProblemError && err.code === 'CA-004' && (await caStore.byThumbprint(tenant, info.thumbprints.sha256))) break;
          if (err instanceof ProblemError && err.code === 'CA-004' && n < 20) continue;
          throw err;
        }
        break;
      }
    }
  };

  const caChain = (tenant: string, name: string) => gateway.caChain(tenant, name);
  await app.register(connectorRoutes, { services, repository, instances, caChain, importChain, changed });
  await app.register(publicationRoutes, { services, instances, caChain, crls, onCrlSource: (crlOf) => (gateway.crlSource = crlOf) });

  return {
    gateway,
    bootstrap: async (tenant, profiles) => {
      if (!services.config.pki.bootstrap.localCa) return;
      if (!services.provided.pkiConnectors.get(LOCAL_CA)) return;
      if ((await repository.count(tenant)) > 0) return;
      try {
        const schema = schemaOfType(services, LOCAL_CA);
        const configuration = checkConfiguration(schema, { keyType: services.config.pki.bootstrap.keyType }, null);
        try {
          await repository.create(
            tenant,
            {
              name: LOCAL_CA,
              type: LOCAL_CA,
              wireType: null,
              description: 'The embedded local CA (created on the first start)',
              enabled: true,
              queue: DEFAULT_QUEUE,
              configuration: sealConfiguration(services.secrets, tenant, LOCAL_CA, schema, configuration),
            },
            null,
          );
        } catch (err) {
          // Another node won the race: it creates the same connector.
          if (!(err instanceof ProblemError && err.code === 'PKI-CONN-004') && !isUniqueViolation(err)) throw err;
        }
        await profiles.ensureDefault(tenant, 'default', LOCAL_CA, services.config.pki.bootstrap.profileProtocols);
        // Fetching the chain once creates the CA; importing it lets trust chains build.
        await importChain(tenant, await gateway.caChain(tenant, LOCAL_CA), null);
        logger.info({ tenant }, 'first start: PKI connector "local-ca" and profile "default" are ready');
      } catch (err) {
        // The server still boots; the administrator sees the reason in the log and can create them by hand.
        logger.error({ err, tenant }, 'first start: the local CA could not be set up');
      }
    },
  };
}
