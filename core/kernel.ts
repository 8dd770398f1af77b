import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asValue, type AwilixContainer } from 'awilix';
import type { FastifyInstance } from 'fastify';
import type { PluginManifest, RouteScope } from '@certwright/sdk';
import type { RouteCapability } from './http/route-config.js';
import type { Logger } from 'pino';
import type { CertwrightConfig } from './config/index.js';
import { createRootContainer, installRequestScope } from './container.js';
import { openDatabase, type Database } from './db/connection.js';
import { looseFiles } from './db/file-modes.js';
import { checkpointOffThread, type WalCheckpointer } from './db/wal-checkpointer.js';
import { CORE_MIGRATIONS } from './db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest, pendingMigrations } from './db/migrator.js';
import { GroupCommit } from './db/group-commit.js';
import { EventStore } from './events/store.js';
import type { Authorizer } from './http/access.js';
import { HostPolicy } from './http/host-policy.js';
import { endpointsRoutes } from './http/routes/endpoints.js';
import { healthRoutes } from './http/routes/health.js';
import { licenseRoutes } from './http/routes/licenses.js';
import { PRODUCT_VERSION } from './version.js';
import { openapiRoutes } from './http/routes/openapi.js';
import { createHttpServer } from './http/server.js';
import { createLogger } from './log/logger.js';
import { PluginManager } from './plugins/manager.js';
import { HttpsListener } from './http/tls/listener.js';
import { credentialsFromFiles, ensureServerCertificate, serverNames } from './http/tls/server-certificate.js';
import { enrollmentFacade, lateEnrollmentFacade } from './enrollment/facade.js';
import { ProvidedServices, type ProtocolRegistration } from './plugins/provided.js';
import { Scheduler } from './scheduler/scheduler.js';
import { REPORT_TASK } from './scheduler/tasks/report/parameters.js';
import { reportTaskType } from './scheduler/tasks/report/type.js';
import { TaskRepository } from './scheduler/tasks/repository.js';
import { taskRoutes } from './scheduler/tasks/routes.js';
import { TaskService } from './scheduler/tasks/service.js';
import { loadMasterKey, SecretBox } from './secrets/index.js';
import { SecurityCore } from './security/index.js';
import { registerPkiRoutes } from './pki/index.js';
import { pkiServices } from './pki/cas/services.js';
import { ClientCertificateVerifier } from './security/x509/verifier.js';
import { ProxyRouter } from './egress/proxy-router.js';
import { fetchThrough } from './egress/fetch-through.js';
import { createDcvRunner, registerDcv } from './dcv/index.js';
import { createInventory, registerInventoryRoutes } from './inventory/index.js';
import { hostname } from 'node:os';
import { registerEventRoutes } from './events/routes/index.js';
import { registerIntegrity } from './events/integrity/index.js';
import { registerKvExpiry } from './plugins/kv-expiry.js';
import { registerTriggers } from './triggers/index.js';
import { triggerCredentialReferrers } from './triggers/credentials.js';
import { registerEnrollment, type Enrollment } from './enrollment/index.js';
import type { CoreServices } from './services.js';
import { DecodeWorkers } from './workers/index.js';
import { bootstrapConfigObjects, createConfigRegistry, credentialsFacade, mountConfigRoutes, type ConfigRegistry } from './config-objects/index.js';
import { declareCollections } from './config-objects/collections.js';
import { scheduledTaskType } from './scheduler/tasks/config-type.js';
import { profileType } from './profiles/config-type.js';
import { labelType } from './inventory/labels/config-type.js';
import { caType } from './pki/cas/config-type.js';
import { triggerType } from './triggers/config-type.js';
import { executionPolicyType } from './automation/executions/config-type.js';
import { mountExecutionPolicyRoutes } from './automation/executions/routes.js';
import { mountTemplateStringRoutes, type TemplateDatasources } from './templatestring/routes.js';
import { registerDatasources } from './datasources/index.js';
import { registerGrading } from './grading/index.js';
import { registerAutomation } from './automation/index.js';
import { triggerRuntimeOf } from './triggers/runtime.js';
import type { Profiles } from './profiles/service.js';
import { pkiConnectorsOf } from './pki/connectors/index.js';
import { pkiConnectorType } from './pki/connectors/config-type.js';
import { pkiQueueType } from './pki/connectors/queue-config-type.js';
import { Storages } from './storage/index.js';
import { registerReports, Reports } from './reports/index.js';
import { uiRoutes } from './ui/index.js';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BootOptions {
  config: CertwrightConfig;
  logger?: Logger;
  /** Skip plugin discovery entirely (the CLI's migrate command). */
  withoutPlugins?: boolean;
  /** false: load and register plugins but do not start them (CLI commands that only inspect). */
  startPlugins?: boolean;
  projectRoot?: string;
  /** The time the platform reads (epoch ms); tests move it forward to replay expiry and renewal. Date.now when absent. */
  clock?: () => number;
}

/**
 * The kernel: config → container → database + migrations → secrets → HTTP → plugins (discover,
 * validate, SDK check, migrate, register) → routes frozen → plugins started. `listen()` opens the port.
 */
export class Kernel {
  private stopping: Promise<void> | null = null;
  private closing = false;

  private constructor(
    readonly config: CertwrightConfig,
    readonly logger: Logger,
    readonly container: AwilixContainer,
    readonly db: Database,
    readonly app: FastifyInstance,
    readonly plugins: PluginManager,
    readonly provided: ProvidedServices,
    readonly events: EventStore,
    readonly secrets: SecretBox,
    readonly scheduler: Scheduler,
    readonly security: SecurityCore,
    /** SQLite: the WAL checkpoints off the event loop (undefined on MySQL/MariaDB or when it could not start). */
    readonly checkpointer: WalCheckpointer | undefined,
    /** The worker threads of CPU-heavy decodes (PKCS#12, large CRLs): started on first use, ended by stop(). */
    readonly workers: DecodeWorkers,
    /** Every configuration type and the one implementation of their operations (core/config-objects). */
    readonly configObjects: ConfigRegistry,
  ) {}

  static async boot(options: BootOptions): Promise<Kernel> {
    const { config } = options;
    const logger = options.logger ?? createLogger(config.log.level);
    const container = createRootContainer();
    const clock = options.clock ?? (() => Date.now());

    const db = openDatabase({ url: config.database.url, dataDir: config.dataDir, pool: config.database.pool });
    let app: FastifyInstance | undefined;
    let checkpointer: WalCheckpointer | undefined;
    // Set once plugins are started: a boot failing after that stops them before the database closes (their timers
    // and jobs would otherwise query a destroyed pool: 'Unable to acquire a connection', an uncaught error).
    let stopStartedPlugins: (() => Promise<void>) | undefined;
    // Agenda connects its backend from its constructor: a boot failing before that ends would have it query a
    // destroyed pool (the same uncaught error), so a failed boot stops the scheduler too (bounded wait).
    let stopScheduler: (() => Promise<void>) | undefined;
    const workers = new DecodeWorkers(config.workers, logger.child({ component: 'workers' }));
    try {
      const applied = await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
      logger.info({ database: db.displayUrl, applied }, 'database ready');
      if (db.filename !== undefined) {
        for (const f of looseFiles(db.filename, config.dataDir)) logger.warn({ path: f.path, mode: f.mode }, `${f.path} is readable by group or others (mode ${f.mode}); it holds password hashes and sealed secrets: chmod go-rwx ${f.path}`);
      }
      if (db.filename !== undefined) checkpointer = await checkpointOffThread(db.knex, db.filename, logger.child({ component: 'database' }));

      const masterKey = await loadMasterKey({ fromEnvOrConfig: config.secrets.masterKey, dataDir: config.dataDir });
      const secrets = new SecretBox(masterKey.key);
      logger.info({ keyId: secrets.keyId, source: masterKey.source }, 'master key loaded');

      const events = new EventStore(db.knex, db.engine, clock);
      // MySQL/MariaDB: groups on half the pool's connections at once (the other half for reads and other writes).
      const groupCommit = new GroupCommit(db.knex, db.engine === 'mysql' ? Math.max(1, Math.floor(config.database.pool.max / 2)) : 1);
      const provided = new ProvidedServices();
      // Configuration types: the core's now, plugins' once they have loaded (mounted together below).
      const configObjects = createConfigRegistry({ knex: db.knex, clock, secrets, events, logger: logger.child({ component: 'configuration' }), provided });
      // Where reports and archives go: the registry's storages, plugins' storage types included.
      const storages = new Storages({ registry: configObjects, knex: db.knex, dataDir: config.dataDir, factories: provided.storages, clock });
      container.register({ storages: asValue(storages) });
      // Every outbound HTTP call (plugins' context client, CRL downloads) goes through the matching proxy.
      const proxies = new ProxyRouter(configObjects, logger.child({ component: 'egress' }), clock);
      const scheduler = new Scheduler(db.knex, logger.child({ component: 'scheduler' }), {
        name: `${hostname()}:${process.pid}`,
        processEvery: config.scheduler.processEveryMs,
        defaultLockLifetime: config.scheduler.lockLifetimeMs,
        stopTimeoutMs: config.scheduler.stopTimeoutMs,
      });
      stopScheduler = () => scheduler.stop();
      let hostPolicy = HostPolicy.fromConfig(config);
      const currentPolicy = () => hostPolicy;
      const security = new SecurityCore({
        config,
        knex: db.knex,
        secrets,
        events,
        logger: logger.child({ component: 'security' }),
        clock,
        provided,
        manifestOf: (id: string): PluginManifest | undefined => plugins.manifestOf(id),
        configObjects,
        proxies,
      });
      for (const type of security.configTypes()) configObjects.declare(type);
      let authorizer: Authorizer = security.authorizer;

      // Domain control validation's runner: plugins write DNS records through it (ctx.dcv).
      const dcvRunner = createDcvRunner({ config, knex: db.knex, clock, events, logger, provided, registry: configObjects });
      const pluginEnrollment = lateEnrollmentFacade();
      const plugins: PluginManager = new PluginManager({
        projectRoot: options.projectRoot ?? PROJECT_ROOT,
        paths: config.plugins.paths,
        disabled: config.plugins.disabled,
        instances: config.plugins.instances,
        logger,
        knex: db.knex,
        groupCommit,
        events,
        secrets,
        provided,
        scheduler,
        clock,
        localAccounts: security.localAccounts(),
        proxies,
        credentials: credentialsFacade(configObjects),
        enrollment: pluginEnrollment,
        dcv: dcvRunner.facade(),
        configObjects,
        // X509 login's checks (ctx.clientCertificates): the PKI services are read at call time, once booted.
        clientCertificates: new ClientCertificateVerifier({
          knex: db.knex,
          clock,
          logger: logger.child({ component: 'x509' }),
          pki: () => pkiServices({ knex: db.knex, clock, events, logger, scheduler }),
          // OCSP responders are reached like every outbound call: through the HTTP proxy set for their host.
          fetch: async (input, init) => {
            const url = new URL(input instanceof Request ? input.url : String(input));
            const route = await proxies.routeFor(url);
            return route ? fetchThrough(route, url, init) : fetch(url, init);
          },
        }),
      });

      container.register({
        config: asValue(config),
        logger: asValue(logger),
        knex: asValue(db.knex),
        database: asValue(db),
        events: asValue(events),
        secrets: asValue(secrets),
        provided: asValue(provided),
        plugins: asValue(plugins),
        scheduler: asValue(scheduler),
        security: asValue(security),
        workers: asValue(workers),
        configObjects: asValue(configObjects),
        proxies: asValue(proxies),
        clock: asValue(clock),
        // What protocol plugins get as ctx.enrollment (bound once enrollment is registered).
        enrollmentFacade: asValue(pluginEnrollment),
        hostPolicy: asValue(currentPolicy),
        setHostPolicy: asValue((next: HostPolicy) => {
          hostPolicy = next;
        }),
        // The security core's authorizer guards every non-public route; tests may replace it.
        setAuthorizer: asValue((next: Authorizer) => {
          authorizer = next;
        }),
      });

      app = await createHttpServer({ config, logger, hostPolicy: currentPolicy, authorizer: () => authorizer });
      installRequestScope(app, container);
      app.addHook('onClose', () => proxies.close());

      let kernel: Kernel | undefined;
      const readiness = async (): Promise<string[]> => {
        const failed: string[] = [];
        if (kernel?.closing) failed.push('shutting-down');
        try {
          if ((await pendingMigrations(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE)) > 0) failed.push('migrations');
        } catch {
          failed.push('database');
        }
        return failed;
      };
      await security.registerRoutes(app);
      await app.register(healthRoutes, { readiness });
      await app.register(endpointsRoutes, { hostPolicy: currentPolicy });
      await app.register(licenseRoutes, { modules: () => plugins.summaries(), version: PRODUCT_VERSION });
      await app.register(uiRoutes, { registry: configObjects, version: PRODUCT_VERSION });
      await app.register(openapiRoutes);
      const tasks = new TaskService(new TaskRepository(db.knex, clock), scheduler, provided.taskTypes, events, logger.child({ component: 'tasks' }), clock);
      tasks.defineJob();
      // The built-in report task type (Horizon's report task), before plugins register theirs.
      const reports = new Reports({ knex: db.knex, clock, config, storages, registry: configObjects, logger: logger.child({ component: 'reports' }) });
      provided.taskTypes.add('core', REPORT_TASK, reportTaskType({ knex: db.knex, clock, config, reports }));
      await app.register(taskRoutes, { tasks });
      const pkiContext = { knex: db.knex, clock, events, logger: logger.child({ component: 'pki' }), scheduler };
      // Created first here, so the CRL cache downloads through the proxies (the routes reuse these services).
      pkiServices(pkiContext, { crlFetch: { proxies } });
      await registerPkiRoutes(app, pkiContext, workers);
      const inventory = createInventory({ knex: db.knex, clock, events, logger: logger.child({ component: 'inventory' }) });
      container.register({ inventory: asValue(inventory) });
      await registerInventoryRoutes(app, inventory);
      const runsJobs = !options.withoutPlugins && options.startPlugins !== false && config.scheduler.enabled;
      const services: CoreServices = { config, knex: db.knex, engine: db.engine, groupCommit, clock, events, logger, scheduler, secrets, provided, plugins, inventory, runsJobs, credentials: credentialsFacade(configObjects) };
      await registerEventRoutes(app, services);
      await registerIntegrity(app, services);
      await registerKvExpiry(services);
      await registerReports(app, services, reports);
      await registerTriggers(app, services);
      await registerDcv(app, services, configObjects, dcvRunner);
      container.register({ grading: asValue(await registerGrading(app, services, inventory)) });
      configObjects.addReferrerSource('credential', triggerCredentialReferrers(db.knex));
      const enrollment: Enrollment = await registerEnrollment(app, services, security);
      container.register({ enrollment: asValue(enrollment) });
      pluginEnrollment.bind(enrollmentFacade({ services, profiles: enrollment.profiles, gateway: enrollment.gateway, workflows: enrollment.workflows }));
      // Automation policies and the lifecycle task renew through the request workflows.
      container.register({ automation: asValue(registerAutomation(app, services, configObjects, enrollment)) });
      // The collections that predate the registry, declared by their own modules (one entry each).
      declareCollections(configObjects, {
        pkiQueues: () => pkiQueueType(pkiConnectorsOf(app!)!.repository),
        pkiConnectors: () => pkiConnectorType({ services, ...pkiConnectorsOf(app!)! }),
        scheduledTasks: () => scheduledTaskType(tasks, new TaskRepository(db.knex, clock)),
        profiles: () => profileType((enrollment.profiles as Profiles).repository, clock),
        labels: () => labelType(inventory.repository.labels, events),
        cas: () => caType(pkiServices(pkiContext).cas),
        triggers: () => triggerType(services, triggerRuntimeOf(app!)!.triggers),
        executionPolicies: () => executionPolicyType(),
      });
      mountExecutionPolicyRoutes(app, configObjects);
      mountTemplateStringRoutes(app);
      // Datasources: their collection, scheduled fetches and flows; computation rules read them (Lookup).
      registerDatasources(app, { services, registry: configObjects, proxies, container });
      // Computation rules on profiles read datasource records (Lookup) as the playground does.
      enrollment.workflows.lookupSource = (tenant, names) => container.resolve<TemplateDatasources>('templateDatasources').load(tenant, names);

      if (!options.withoutPlugins) await plugins.load();
      // Plugins' configuration types next to the core's, then the standard set of every one.
      for (const type of provided.configTypes.types()) {
        try {
          configObjects.declare(provided.configTypes.get(type)!, provided.configTypes.pluginOf(type));
        } catch (err) {
          plugins.degradeById(provided.configTypes.pluginOf(type)!, `configuration type refused: ${(err as Error).message}`);
        }
      }
      mountConfigRoutes(app, configObjects);
      for (const registration of provided.protocols) await mountProtocol(app, registration, plugins);
      await app.ready();
      const starting = !options.withoutPlugins && options.startPlugins !== false;
      if (starting) {
        stopStartedPlugins = () => plugins.stop();
        await plugins.start();
      }
      // First start: the local identity provider (its type comes from a plugin) and the administrator.
      if (starting) await security.bootstrap('default');
      // First start: a local CA and a `default` profile, so a new installation can enroll at once.
      if (starting) await enrollment.bootstrap('default');
      // First start: the default storage and the system configuration entries.
      if (starting) await bootstrapConfigObjects(configObjects, 'default');
      // Jobs start last: every definition (core and plugins) is in place before the first poll.
      if (starting && config.scheduler.enabled) await scheduler.start();

      kernel = new Kernel(config, logger, container, db, app, plugins, provided, events, secrets, scheduler, security, checkpointer, workers, configObjects);
      return kernel;
    } catch (err) {
      await app?.close().catch(() => undefined);
      await stopScheduler?.().catch(() => undefined);
      await stopStartedPlugins?.().catch(() => undefined);
      await workers.stop();
      await checkpointer?.stop();
      await db.knex.destroy().catch(() => undefined);
      throw err;
    }
  }

  /** Opens the configured port (and the HTTPS port, server.tls.port); resolves with the HTTP address bound. */
  async listen(): Promise<string> {
    // A served kernel keeps one decode thread ready (tests with injected requests start them on use).
    this.workers.warm();
    const address = await this.app.listen({ host: this.config.server.host, port: this.config.server.port });
    if (this.config.server.tls.port !== null) {
      try {
        this.httpsAddress = await this.startHttps(this.config.server.tls.port);
        this.logger.info({ address: this.httpsAddress }, `HTTPS on ${this.httpsAddress}`);
      } catch (err) {
        // HTTP still serves; the operator reads why HTTPS does not.
        this.logger.error({ err: (err as Error).message }, 'HTTPS not started');
      }
    }
    return address;
  }

  /** The HTTPS address bound by listen(), when HTTPS started. */
  httpsAddress: string | null = null;
  private https: HttpsListener | undefined;
  private httpsRenewal: NodeJS.Timeout | undefined;

  private async startHttps(port: number): Promise<string> {
    const tls = this.config.server.tls;
    const names = serverNames([...tls.hosts, ...this.config.allowedHosts]);
    const fromConnector = async () => {
      const enrollment = this.container.resolve('enrollment') as Enrollment;
      return ensureServerCertificate({
        dir: join(this.config.dataDir, 'tls'),
        names,
        renewBeforeMs: tls.renewBeforeDays * 86_400_000,
        now: Date.now(),
        gateway: enrollment.gateway,
        tenant: 'default',
        connector: tls.connector,
      });
    };
    const credentials = tls.certFile && tls.keyFile ? credentialsFromFiles(tls.certFile, tls.keyFile) : await fromConnector();
    const listener = new HttpsListener(this.app, { host: this.config.server.host, port, requestClientCert: tls.requestClientCert });
    const address = await listener.start(credentials);
    this.https = listener;
    if (!(tls.certFile && tls.keyFile)) {
      // The platform renews its own certificate: checked twice a day, swapped in without a restart.
      this.httpsRenewal = setInterval(() => {
        fromConnector()
          .then((next) => {
            if (next.issued) {
              listener.renew(next);
              this.logger.info({ notAfter: new Date(next.notAfter).toISOString() }, 'HTTPS certificate renewed');
            }
          })
          .catch((err: Error) => this.logger.error({ err: err.message }, 'HTTPS certificate renewal failed'));
      }, 12 * 3_600_000);
      this.httpsRenewal.unref();
    }
    return address;
  }

  /**
   * Graceful stop (SIGTERM): stop accepting, let in-flight requests finish (bounded by
   * server.shutdownTimeoutMs), let running jobs finish (bounded by scheduler.stopTimeoutMs) and release
   * the rest, stop plugins, close the database. Safe to call twice.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.closing = true;
      const force = setTimeout(() => this.app.server.closeAllConnections(), this.config.server.shutdownTimeoutMs);
      // A keep-alive connection whose request finishes during the close would otherwise hold it open
      // until its idle timeout: close connections as soon as they fall idle.
      const idle = setInterval(() => {
        this.app.server.closeIdleConnections();
        this.https?.closeIdle();
      }, 50);
      force.unref();
      idle.unref();
      if (this.httpsRenewal) clearInterval(this.httpsRenewal);
      const forceHttps = setTimeout(() => this.https?.closeAll(), this.config.server.shutdownTimeoutMs);
      forceHttps.unref();
      try {
        await Promise.all([this.app.close(), this.https?.close()]);
      } finally {
        clearTimeout(forceHttps);
        clearTimeout(force);
        clearInterval(idle);
      }
      // In-flight requests have answered: no decode is left on the pool's threads.
      await this.workers.stop();
      await this.scheduler.stop();
      await this.plugins.stop();
      await this.checkpointer?.stop();
      await this.db.knex.destroy();
      this.logger.info('stopped');
      this.logger.flush();
    })();
    return this.stopping;
  }
}

/**
 * A protocol plugin's routes live in their own encapsulated scope; every route it adds is forced into
 * the manifest's capability, so the gate applies and a plugin cannot claim another capability.
 */
async function mountProtocol(app: FastifyInstance, registration: ProtocolRegistration, plugins: PluginManager): Promise<void> {
  const { manifest, plugin } = registration;
  try {
    await app.register(async (instance) => {
      const scope: RouteScope = {
        route: (options) =>
          instance.route({
            ...options,
            config: { access: 'public', ...(options.config ?? {}), capability: protocolRouteCapability(manifest, options) },
          } as Parameters<typeof instance.route>[0]),
        addContentTypeParser: (type, opts, parser) => instance.addContentTypeParser(type, opts, parser),
      };
      await plugin.registerRoutes(scope);
    });
  } catch (err) {
    plugins.degradeById(manifest.id, `routes failed to mount: ${(err as Error).message}`);
  }
}

/**
 * A protocol route answers on the manifest's capability; its administration routes (a configuration
 * permission, a URL under /api/v1/) on `configuration`, as every administration route.
 */
function protocolRouteCapability(manifest: PluginManifest, options: { url: string; config?: Record<string, unknown> }): RouteCapability {
  const access = options.config?.access as { permission?: unknown } | undefined;
  const admin = typeof access?.permission === 'string' && access.permission.startsWith('configuration:') && options.url.startsWith('/api/v1/');
  return admin ? 'configuration' : manifest.capability!;
}
