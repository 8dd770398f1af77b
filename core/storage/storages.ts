import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { ConfigObject, InstanceFactory, StorageBackend } from '@certwright/sdk';
import type { ConfigRegistry } from '../config-objects/registry.js';
import type { ProvidedRegistry } from '../plugins/provided.js';
import { DatabaseStorage } from './database.js';
import { FilesystemStorage, filesystemRoot } from './filesystem.js';
import { checkedBackend } from './checked.js';

/** What the platform stores, and the system configuration field (entry `storage`) naming its storage. */
export const STORAGE_PURPOSES = { archives: 'archiveStorage', reports: 'magicLinkReportStorage' } as const;
export type StoragePurpose = keyof typeof STORAGE_PURPOSES;

/** The storage every purpose falls back on: created at first start (types/storage.ts defaults). */
export const DEFAULT_STORAGE = 'default';

export interface StoragesDeps {
  registry: ConfigRegistry;
  knex: Knex;
  dataDir: string;
  factories: ProvidedRegistry<InstanceFactory<StorageBackend>>;
  clock: () => number;
}

interface PluginEntry {
  fingerprint: string;
  backend: Promise<StorageBackend>;
}

/**
 * The storages (/api/v1/system/storages/) as backends. Each `open` reads the object again, so a change
 * made on any node applies to the next open; built-in backends are cheap to build, a plugin's instance is
 * kept while its object (and what it references) stays the same.
 */
export class Storages {
  private readonly plugins = new Map<string, PluginEntry>();

  constructor(private readonly deps: StoragesDeps) {
    // Only frees memory: the fingerprint check alone keeps instances current.
    deps.registry.onChange('storage', (tenant) => {
      for (const key of this.plugins.keys()) if (key.startsWith(`${tenant}\u0000`)) this.plugins.delete(key);
    });
  }

  /** The tenant's storage `name`; STORAGE-003 when there is none, STORAGE-002 when its type is not installed. */
  async open(tenant: string, name: string): Promise<StorageBackend> {
    const type = this.deps.registry.get('storage')!;
    const object = await this.deps.registry.resolve('storage', tenant, name);
    if (!object) throw this.deps.registry.problem(type, 'unknown', `No storage is named "${name}"`);
    if (object.type === 'filesystem') return new FilesystemStorage(filesystemRoot(this.deps.dataDir, { name, path: object.path as string | undefined }));
    if (object.type === 'database') return new DatabaseStorage(this.deps.knex, tenant, name, this.deps.clock);
    const factory = this.deps.factories.get(object.type as string);
    if (!factory) throw this.deps.registry.problem(type, 'invalid', `type: no loaded plugin provides the storage type "${String(object.type)}" (storage "${name}")`);
    return this.pluginBackend(tenant, name, object, factory);
  }

  /** The storage the system configuration names for a purpose, `default` when it names none. */
  async forPurpose(tenant: string, purpose: StoragePurpose): Promise<StorageBackend> {
    const entry = await this.deps.registry.resolve('system-configuration', tenant, 'storage');
    const named = entry?.[STORAGE_PURPOSES[purpose]];
    return this.open(tenant, typeof named === 'string' && named.length > 0 ? named : DEFAULT_STORAGE);
  }

  /**
   * A plugin's backend, built by its factory with the storage object as configuration and the objects it
   * references (credentials, proxy) opened beside it, since a plugin cannot read the registry.
   */
  private async pluginBackend(tenant: string, name: string, object: ConfigObject, factory: InstanceFactory<StorageBackend>): Promise<StorageBackend> {
    const references: Record<string, ConfigObject | null> = {};
    if (typeof object.credentials === 'string') references.credentials = await this.deps.registry.resolve('credential', tenant, object.credentials);
    if (typeof object.proxy === 'string') references.proxy = await this.deps.registry.resolve('http-proxy', tenant, object.proxy);
    const config = { ...object, tenant, references };
    // Hashed: the fingerprint holds opened secrets otherwise.
    const fingerprint = createHash('sha256').update(JSON.stringify(config)).digest('hex');
    const key = `${tenant}\u0000${name}`;
    const cached = this.plugins.get(key);
    if (cached?.fingerprint === fingerprint) return cached.backend;
    const backend = Promise.resolve()
      .then(() => factory({ name, config }))
      .then(checkedBackend);
    const entry = { fingerprint, backend };
    this.plugins.set(key, entry);
    // A factory that failed is asked again next time.
    backend.catch(() => {
      if (this.plugins.get(key) === entry) this.plugins.delete(key);
    });
    return backend;
  }
}
