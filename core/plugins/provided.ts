import type {
  DcvProvider,
  DcvProvisioner,
  IdentityProvider,
  InstanceFactory,
  PkiConnector,
  PluginRegistries,
  ProtocolPlugin,
  StorageBackend,
  ThirdPartyConnector,
  TriggerChannel,
  PluginManifest,
  TaskType,
  ConfigObjectType,
} from '@certwright/sdk';

/** A type name → implementation map that remembers which plugin provided each entry. */
export class ProvidedRegistry<T> {
  private readonly entries = new Map<string, { pluginId: string; value: T }>();
  constructor(readonly what: string) {}

  add(pluginId: string, type: string, value: T): void {
    const existing = this.entries.get(type);
    if (existing) throw new Error(`${this.what} "${type}" is already provided by ${existing.pluginId}`);
    this.entries.set(type, { pluginId, value });
  }
  get(type: string): T | undefined {
    return this.entries.get(type)?.value;
  }
  /** Id of the plugin that provides `type`. */
  pluginOf(type: string): string | undefined {
    return this.entries.get(type)?.pluginId;
  }
  types(): string[] {
    return [...this.entries.keys()].sort();
  }
  /** Drops what a plugin registered (it failed later in its registration). */
  removePlugin(pluginId: string): void {
    for (const [type, entry] of this.entries) if (entry.pluginId === pluginId) this.entries.delete(type);
  }
}

export interface ProtocolRegistration {
  manifest: PluginManifest;
  plugin: ProtocolPlugin;
}

/** Everything plugins provide, by contract. Core services look things up here, never in plugin folders. */
export class ProvidedServices {
  readonly protocols: ProtocolRegistration[] = [];
  readonly triggerChannels = new ProvidedRegistry<TriggerChannel>('trigger channel');
  readonly pkiConnectors = new ProvidedRegistry<InstanceFactory<PkiConnector>>('PKI connector');
  readonly dcvProviders = new ProvidedRegistry<InstanceFactory<DcvProvider>>('DCV provider');
  readonly dcvProvisioners = new ProvidedRegistry<InstanceFactory<DcvProvisioner>>('DCV provisioner');
  readonly identityProviders = new ProvidedRegistry<InstanceFactory<IdentityProvider>>('identity provider');
  readonly thirdPartyConnectors = new ProvidedRegistry<InstanceFactory<ThirdPartyConnector>>('third-party connector');
  readonly storages = new ProvidedRegistry<InstanceFactory<StorageBackend>>('storage');
  readonly taskTypes = new ProvidedRegistry<TaskType>('scheduled task type');
  readonly configTypes = new ProvidedRegistry<ConfigObjectType>('configuration type');

  /** The registries handed to one plugin: every entry is attributed to it. */
  registriesFor(manifest: PluginManifest): PluginRegistries {
    const id = manifest.id;
    return {
      protocols: {
        register: (plugin) => {
          if (manifest.kind !== 'protocol') throw new Error(`only protocol plugins register routes (this one is ${manifest.kind})`);
          this.protocols.push({ manifest, plugin });
        },
      },
      triggerChannels: { register: (type, channel) => this.triggerChannels.add(id, type, channel) },
      pkiConnectors: { register: (type, factory) => this.pkiConnectors.add(id, type, factory) },
      dcvProviders: { register: (type, factory) => this.dcvProviders.add(id, type, factory) },
      dcvProvisioners: { register: (type, factory) => this.dcvProvisioners.add(id, type, factory) },
      identityProviders: { register: (type, factory) => this.identityProviders.add(id, type, factory) },
      thirdPartyConnectors: { register: (type, factory) => this.thirdPartyConnectors.add(id, type, factory) },
      storages: { register: (type, factory) => this.storages.add(id, type, factory) },
      taskTypes: { register: (type, taskType) => this.taskTypes.add(id, type, taskType) },
      configTypes: { declare: (type) => this.configTypes.add(id, type.type, type) },
    };
  }

  removePlugin(pluginId: string): void {
    for (const registry of [
      this.triggerChannels,
      this.pkiConnectors,
      this.dcvProviders,
      this.dcvProvisioners,
      this.identityProviders,
      this.thirdPartyConnectors,
      this.storages,
      this.taskTypes,
      this.configTypes,
    ] as ProvidedRegistry<unknown>[]) {
      registry.removePlugin(pluginId);
    }
    for (let i = this.protocols.length - 1; i >= 0; i--) if (this.protocols[i]!.manifest.id === pluginId) this.protocols.splice(i, 1);
  }
}
