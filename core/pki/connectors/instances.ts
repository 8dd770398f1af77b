import type { PkiConnector } from '@certwright/sdk';
import type { Logger } from 'pino';
import { ProblemError } from '../../errors/index.js';
import type { SecretBox } from '../../secrets/index.js';
import type { ProvidedRegistry } from '../../plugins/provided.js';
import type { InstanceFactory } from '@certwright/sdk';
import { openConfiguration } from './configuration.js';
import type { ConnectorRecord } from './model.js';
import type { ConnectorRepository } from './repository.js';

/** How long this node trusts a cached instance before checking the connector's version again (ms). */
export const VERSION_CHECK_MS = 1000;

export interface ActiveConnector {
  record: ConnectorRecord;
  connector: PkiConnector;
}

interface Entry {
  version: number;
  checkedAt: number;
  active: Promise<ActiveConnector>;
}

const key = (tenant: string, name: string): string => `${tenant}\u0000${name}`;
const unavailable = (name: string, detail?: string): ProblemError =>
  new ProblemError('PKI-CONN-003', { message: `No enabled PKI connector is named "${name}"`, ...(detail ? { detail } : {}) });

/**
 * Connector instances: the plugin factory called with the stored configuration (secrets opened), once per
 * (tenant, name, version). A cached instance is trusted for VERSION_CHECK_MS; then one indexed read of the
 * version tells whether another node changed the connector.
 */
export class ConnectorInstances {
  private readonly cache = new Map<string, Entry>();

  constructor(
    private readonly repository: ConnectorRepository,
    private readonly registry: ProvidedRegistry<InstanceFactory<PkiConnector>>,
    private readonly secrets: SecretBox,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {}

  /** Drops the cached instance (a change on this node). */
  forget(tenant: string, name: string): void {
    this.cache.delete(key(tenant, name));
  }

  /**
   * Whether the tenant's connector `name` exists and is enabled. An instance checked within VERSION_CHECK_MS
   * (cached only while enabled; dropped by `forget` on a change here) answers without a read, as `resolve`
   * trusts it; else one read of the version row.
   */
  async enabled(tenant: string, name: string): Promise<boolean> {
    const entry = this.cache.get(key(tenant, name));
    if (entry && this.clock() - entry.checkedAt < VERSION_CHECK_MS) return true;
    const stamp = await this.repository.stamp(tenant, name);
    return stamp !== null && stamp.enabled;
  }

  /** The enabled connector `name` of a tenant and its instance; PKI-CONN-003 when missing or disabled. */
  async resolve(tenant: string, name: string): Promise<ActiveConnector> {
    const k = key(tenant, name);
    const now = this.clock();
    const entry = this.cache.get(k);
    if (entry && now - entry.checkedAt < VERSION_CHECK_MS) return entry.active;
    const stamp = await this.repository.stamp(tenant, name);
    if (!stamp || !stamp.enabled) {
      this.cache.delete(k);
      throw unavailable(name);
    }
    if (entry && entry.version === stamp.version) {
      entry.checkedAt = now;
      return entry.active;
    }
    const active = this.instantiate(tenant, name);
    const fresh: Entry = { version: stamp.version, checkedAt: now, active };
    this.cache.set(k, fresh);
    try {
      const resolved = await active;
      fresh.version = resolved.record.version;
      if (!resolved.record.enabled) throw unavailable(name);
      return resolved;
    } catch (err) {
      if (this.cache.get(k) === fresh) this.cache.delete(k);
      throw err;
    }
  }

  private async instantiate(tenant: string, name: string): Promise<ActiveConnector> {
    const record = await this.repository.find(tenant, name);
    if (!record) throw unavailable(name);
    const factory = this.registry.get(record.type);
    if (!factory) throw unavailable(name, `no loaded plugin provides the PKI connector type "${record.type}"`);
    let config: Record<string, unknown>;
    try {
      config = openConfiguration(this.secrets, tenant, name, record.configuration);
    } catch (err) {
      this.logger.error({ err, connector: name }, 'the secrets of a PKI connector do not open with the current master key');
      throw new ProblemError('PKI-CONN-007', { detail: `the secrets of the PKI connector "${name}" do not open with the current master key` });
    }
    try {
      return { record, connector: await factory({ name, config }) };
    } catch (err) {
      this.logger.error({ err, connector: name, type: record.type }, 'PKI connector failed to start');
      throw new ProblemError('PKI-CONN-007', { detail: `the PKI connector "${name}" failed to start: ${(err as Error).message}` });
    }
  }
}
