import { Resolver } from 'node:dns/promises';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDefinedPlugin, type ClientCertificatesFacade, type DcvFacade, type CredentialsFacade, type EnrollmentFacade, type DefinedPlugin, type LocalAccountsFacade, type PluginContext, type PluginInstance, type PluginKind, type PluginManifest } from '@certwright/sdk';
import type { Logger } from 'pino';
import type { Knex } from 'knex';
import { loadMigrationFolder, migrateLatest, pluginMigrationsTable } from '../db/migrator.js';
import type { EventStore } from '../events/store.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { SecretBox } from '../secrets/index.js';
import type { ProxyRouter } from '../egress/proxy-router.js';
import { discoverPlugins, type PluginSource } from './discover.js';
import { egressClient } from './egress.js';
import { checkInstances } from './instances.js';
import { scopedKv } from './kv-store.js';
import type { GroupCommit } from '../db/group-commit.js';
import { pkiToolkitFacade } from './pki-facade.js';
import { checkSdkRange, readManifest } from './manifest.js';
import type { ProvidedServices } from './provided.js';

export type PluginState = 'registered' | 'active' | 'degraded' | 'disabled';

export interface PluginRecord {
  id: string;
  dir: string;
  source: PluginSource;
  state: PluginState;
  reason?: string;
  manifest?: PluginManifest;
  definition?: DefinedPlugin;
}

export interface PluginManagerDeps {
  projectRoot: string;
  paths: readonly string[];
  disabled: readonly string[];
  instances: Readonly<Record<string, PluginInstance[]>>;
  logger: Logger;
  knex: Knex;
  /** Shared commits for plugin kv inserts on hot paths (kv.setIfAbsent). */
  groupCommit?: GroupCommit;
  events: EventStore;
  secrets: SecretBox;
  provided: ProvidedServices;
  scheduler: Scheduler;
  clock: () => number;
  localAccounts: LocalAccountsFacade;
  /** Routes plugins' outbound HTTP through the configured proxies (none: every call direct). */
  proxies?: ProxyRouter;
  /** Credentials by name (the configuration registry's), for ctx.credentials. */
  credentials: CredentialsFacade;
  /** The configuration registry's objects, secrets open, for ctx.configObjects (owner-checked here). */
  configObjects: {
    resolve(type: string, tenant: string, name: string): Promise<Record<string, unknown> | null>;
    /** Every object of a type, secrets open (ctx.configObjects.list). */
    portable(type: string, tenant: string): Promise<Record<string, unknown>[]>;
  };
  /** Issuance through the request workflow, for ctx.enrollment (bound once enrollment is registered). */
  enrollment: EnrollmentFacade;
  /** DNS records through DCV policies, for ctx.dcv. */
  dcv: DcvFacade;
  /** Client certificates judged as X509 login judges them, for ctx.clientCertificates. */
  clientCertificates: ClientCertificatesFacade;
}

/**
 * Finds, validates, migrates, registers, starts and stops plugins. A plugin that fails at any step is
 * marked degraded with its reason; the others, and the server, carry on.
 */
export class PluginManager {
  readonly records: PluginRecord[] = [];

  constructor(private readonly deps: PluginManagerDeps) {}

  async load(): Promise<void> {
    for (const candidate of discoverPlugins(this.deps.projectRoot, this.deps.paths)) {
      const record: PluginRecord = { id: basename(candidate.dir), dir: candidate.dir, source: candidate.source, state: 'degraded' };
      this.records.push(record);
      try {
        await this.loadOne(record);
      } catch (err) {
        this.degrade(record, (err as Error).message || String(err));
      }
    }
  }

  private async loadOne(record: PluginRecord): Promise<void> {
    const check = readManifest(record.dir);
    if (!check.ok) {
      if (typeof check.partial?.id === 'string') record.id = check.partial.id;
      return this.degrade(record, `invalid manifest: ${check.errors.join('; ')}`);
    }
    const manifest = check.manifest;
    record.id = manifest.id;
    record.manifest = manifest;
    const twin = this.records.find((r) => r !== record && r.id === manifest.id && r.state !== 'degraded');
    if (twin) return this.degrade(record, `duplicate id: already loaded from ${twin.dir}`);
    if (this.deps.disabled.includes(manifest.id)) {
      record.state = 'disabled';
      record.reason = 'disabled by configuration (plugins.disabled)';
      return;
    }
    const sdkProblem = checkSdkRange(manifest);
    if (sdkProblem) return this.degrade(record, sdkProblem);
    const instances = this.deps.instances[manifest.id] ?? [];
    const instanceProblem = checkInstances(manifest, instances);
    if (instanceProblem) return this.degrade(record, instanceProblem);

    const mod = (await import(pathToFileURL(resolve(record.dir, manifest.entry)).href)) as { default?: unknown };
    if (!isDefinedPlugin(mod.default)) return this.degrade(record, `entry ${manifest.entry} does not default-export definePlugin({...})`);
    record.definition = mod.default;

    if (manifest.migrations) {
      const migrations = await loadMigrationFolder(resolve(record.dir, manifest.migrations));
      const applied = await migrateLatest(this.deps.knex, migrations, pluginMigrationsTable(manifest.id));
      if (applied.length) this.deps.logger.info({ plugin: manifest.id, applied }, 'plugin migrations applied');
    }
    try {
      await mod.default.register(this.contextFor(record.dir, manifest, instances));
    } catch (err) {
      this.deps.provided.removePlugin(manifest.id);
      throw err;
    }
    record.state = 'registered';
  }

  private contextFor(root: string, manifest: PluginManifest, instances: PluginInstance[]): PluginContext {
    const { knex, events, secrets, provided, clock } = this.deps;
    const logger = this.deps.logger.child({ plugin: manifest.id });
    const aad = (extra?: string) => `plugin:${manifest.id}:${extra ?? ''}`;
    return {
      manifest: Object.freeze({ ...manifest }),
      root,
      logger,
      instances: Object.freeze(instances.map((i) => Object.freeze({ ...i }))),
      registries: provided.registriesFor(manifest),
      http: egressClient(manifest.id, manifest.egress ?? [], this.deps.proxies),
      dns: new Resolver(),
      clock: { now: clock },
      kv: scopedKv(knex, manifest.id, 'default', clock, this.deps.groupCommit),
      // Bound to the plugin id, so one plugin cannot open another's secrets.
      secrets: { seal: (plaintext, extra) => secrets.seal(plaintext, aad(extra)), open: (sealed, extra) => secrets.openString(sealed, aad(extra)) },
      events: {
        append: async (event) => {
          const stored = await events.append({ ...event, tenant: event.tenant ?? 'default', module: event.module || manifest.id });
          return { id: stored.id };
        },
      },
      pki: pkiToolkitFacade(clock),
      jobs: this.deps.scheduler.facadeFor(manifest.id, manifest.jobs ?? []),
      localAccounts: this.deps.localAccounts,
      credentials: this.deps.credentials,
      enrollment: this.deps.enrollment,
      dcv: this.deps.dcv,
      configObjects: {
        get: async (type, name, tenant = 'default') => {
          if (provided.configTypes.pluginOf(type) !== manifest.id) throw new TypeError(`configuration type "${type}" is not declared by ${manifest.id}`);
          return this.deps.configObjects.resolve(type, tenant, name);
        },
        list: async (type, tenant = 'default') => {
          if (provided.configTypes.pluginOf(type) !== manifest.id) throw new TypeError(`configuration type "${type}" is not declared by ${manifest.id}`);
          const objects = await this.deps.configObjects.portable(type, tenant);
          return objects.sort((a, b) => String(a.name).localeCompare(String(b.name)));
        },
      },
      db: knex,
      clientCertificates: this.deps.clientCertificates,
    };
  }

  async start(): Promise<void> {
    for (const record of this.records) {
      if (record.state !== 'registered') continue;
      try {
        await record.definition!.start?.();
        record.state = 'active';
      } catch (err) {
        this.degrade(record, `start failed: ${(err as Error).message}`);
      }
    }
  }

  async stop(): Promise<void> {
    for (const record of [...this.records].reverse()) {
      if (record.state !== 'active') continue;
      try {
        await record.definition!.stop?.();
      } catch (err) {
        this.deps.logger.warn({ plugin: record.id, err }, 'plugin stop failed');
      }
      record.state = 'registered';
    }
  }

  /** Protocol plugins whose routes failed to mount are degraded after the fact. */
  /** The manifest of a loaded plugin. */
  manifestOf(id: string): PluginManifest | undefined {
    return this.records.find((r) => r.manifest?.id === id)?.manifest;
  }

  degradeById(id: string, reason: string): void {
    const record = this.records.find((r) => r.id === id);
    if (record) this.degrade(record, reason);
  }

  private degrade(record: PluginRecord, reason: string): void {
    record.state = 'degraded';
    record.reason = reason;
    this.deps.logger.warn({ plugin: record.id, dir: record.dir, reason }, 'plugin degraded');
  }

  /** What GET /api/v1/licenses/modules and `certwright plugins list` show. */
  summaries(): PluginSummary[] {
    return this.records.map((r) => ({
      id: r.id,
      name: r.manifest?.name ?? r.id,
      kind: r.manifest?.kind ?? null,
      version: r.manifest?.version ?? null,
      state: r.state,
      source: r.source,
      ...(r.manifest?.capability ? { capability: r.manifest.capability } : {}),
      ...(r.manifest?.description ? { description: r.manifest.description } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
    }));
  }
}

export interface PluginSummary {
  id: string;
  name: string;
  kind: PluginKind | null;
  version: string | null;
  state: PluginState;
  source: PluginSource;
  capability?: string;
  description?: string;
  reason?: string;
}
