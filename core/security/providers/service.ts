import type { IdentityProvider, InstanceFactory, PluginManifest } from '@certwright/sdk';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { checkInstances, secretFields } from '../../plugins/instances.js';
import type { ProvidedRegistry } from '../../plugins/provided.js';

/** An identity provider as configured (/api/v1/security/identity/providers/). */
export interface IdentityProviderConfig {
  _id: string;
  name: string;
  type: string;
  enabled: boolean;
  config: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export interface IdentityProviderInput {
  name: string;
  type: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

/** An enabled provider, ready to authenticate. */
export interface ActiveProvider {
  name: string;
  type: string;
  provider: IdentityProvider;
}

interface Row {
  id: string;
  tenant: string;
  name: string;
  type: string;
  enabled: number | boolean;
  config: string;
  created_at: number | string;
  updated_at: number | string;
}

const TABLE = 'security_identity_providers';
const fromRow = (r: Row): IdentityProviderConfig => ({
  _id: r.id,
  name: r.name,
  type: r.type,
  enabled: Boolean(r.enabled),
  config: JSON.parse(r.config) as Record<string, unknown>,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export interface ProviderServiceDeps {
  knex: Knex;
  registry: ProvidedRegistry<InstanceFactory<IdentityProvider>>;
  manifestOf: (pluginId: string) => PluginManifest | undefined;
  logger: Logger;
  clock: () => number;
  /** How long this node trusts its list of enabled providers before reading it again. */
  refreshMs: number;
  /** Called after every change (the authenticator drops its caches). */
  onChange: () => void;
  /** Seals secret configuration fields at rest (the master key's AES-256-GCM box). */
  secrets: { seal(plaintext: string, aad?: string): string; openString(sealed: string, aad?: string): string };
}

/**
 * Identity providers are rows in the database, each an instance of a provider type that a plugin
 * registered. The enabled ones are instantiated once and kept per tenant; a change on this node
 * applies to the next request, a change on another node within `refreshMs`. No restart, no new routes.
 */
export class IdentityProviderService {
  private readonly active = new Map<string, { loadedAt: number; providers: ActiveProvider[]; loading?: Promise<ActiveProvider[]> }>();
  private readonly instances = new Map<string, { stamp: string; provider: IdentityProvider }>();

  constructor(private readonly deps: ProviderServiceDeps) {}

  /** The enabled providers of a tenant, in name order (the order the authenticator asks them in). */
  async enabled(tenant: string): Promise<ActiveProvider[]> {
    const entry = this.active.get(tenant);
    const now = this.deps.clock();
    if (entry && now - entry.loadedAt < this.deps.refreshMs) return entry.providers;
    if (entry?.loading) return entry.loading;
    const loading = this.load(tenant);
    this.active.set(tenant, { loadedAt: entry?.loadedAt ?? 0, providers: entry?.providers ?? [], loading });
    try {
      const providers = await loading;
      this.active.set(tenant, { loadedAt: this.deps.clock(), providers });
      return providers;
    } catch (err) {
      this.active.set(tenant, { loadedAt: entry?.loadedAt ?? 0, providers: entry?.providers ?? [] });
      throw err;
    }
  }

  async byName(tenant: string, name: string): Promise<ActiveProvider | undefined> {
    return (await this.enabled(tenant)).find((p) => p.name === name);
  }

  private async load(tenant: string): Promise<ActiveProvider[]> {
    const rows = (await this.deps.knex(TABLE).where({ tenant, enabled: true }).orderBy('name')) as Row[];
    const out: ActiveProvider[] = [];
    for (const row of rows) {
      const provider = await this.instantiate(row);
      if (provider) out.push({ name: row.name, type: row.type, provider });
    }
    return out;
  }

  private async instantiate(row: Row): Promise<IdentityProvider | undefined> {
    const key = `${row.tenant}\u0000${row.name}`;
    const stamp = `${row.type}:${String(row.updated_at)}`;
    const known = this.instances.get(key);
    if (known?.stamp === stamp) return known.provider;
    const factory = this.deps.registry.get(row.type);
    if (!factory) {
      this.deps.logger.warn({ provider: row.name, type: row.type }, 'identity provider type is not provided by any loaded plugin; provider skipped');
      return undefined;
    }
    try {
      const config = this.opened(row.tenant, row.name, row.type, JSON.parse(row.config) as Record<string, unknown>);
      const provider = await factory({ name: row.name, config });
      this.instances.set(key, { stamp, provider });
      return provider;
    } catch (err) {
      this.deps.logger.error({ provider: row.name, type: row.type, err }, 'identity provider failed to start; provider skipped');
      return undefined;
    }
  }

  private changed(tenant: string): void {
    this.active.delete(tenant);
    this.deps.onChange();
  }

  // --- configuration (/api/v1/security/identity/providers/; `db`: the registry's transaction of an import) ---

  /** Provider types the loaded plugins offer. */
  types(): string[] {
    return this.deps.registry.types();
  }

  async list(tenant: string, db: Knex = this.deps.knex): Promise<IdentityProviderConfig[]> {
    return ((await db(TABLE).where({ tenant }).orderBy('name')) as Row[]).map((r) => this.masked(fromRow(r)));
  }

  async get(tenant: string, name: string, db: Knex = this.deps.knex): Promise<IdentityProviderConfig> {
    return this.masked(await this.require(tenant, name, db));
  }

  /** Every provider with its secret fields open: the configuration registry's store (never answered as is). */
  async listOpen(tenant: string, db: Knex): Promise<IdentityProviderConfig[]> {
    return ((await db(TABLE).where({ tenant }).orderBy('name')) as Row[]).map((r) => this.openedConfig(tenant, fromRow(r)));
  }

  /** One provider with its secret fields open, or null. */
  async findOpen(tenant: string, name: string, db: Knex): Promise<IdentityProviderConfig | null> {
    const row = (await db(TABLE).where({ tenant, name }).first()) as Row | undefined;
    return row ? this.openedConfig(tenant, fromRow(row)) : null;
  }

  async create(tenant: string, input: IdentityProviderInput, db: Knex = this.deps.knex): Promise<IdentityProviderConfig> {
    this.validate(input);
    const now = this.deps.clock();
    try {
      await db(TABLE).insert({
        id: newId(now),
        tenant,
        name: input.name,
        type: input.type,
        enabled: input.enabled,
        config: JSON.stringify(this.sealed(tenant, input.name, input.type, input.config)),
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('SEC-IDP-004', { message: `An identity provider named "${input.name}" already exists` });
      throw err;
    }
    this.changed(tenant);
    return this.get(tenant, input.name, db);
  }

  /** Updates the provider named in the body; secret fields sent back masked keep their stored value. */
  async update(tenant: string, input: IdentityProviderInput, db: Knex = this.deps.knex): Promise<IdentityProviderConfig> {
    const current = await this.require(tenant, input.name, db);
    const typeChange = this.typeChangeProblem(input, current);
    if (typeChange) throw new ProblemError('SEC-IDP-002', { message: typeChange });
    const config = { ...input.config };
    for (const field of this.secretFieldsOf(current.type)) if (config[field] === MASK) config[field] = current.config[field];
    const next = { ...input, config };
    this.validate(next);
    if (!next.enabled) await this.refuseLastEnabled(tenant, current.name, db);
    await db(TABLE)
      .where({ tenant, name: input.name })
      .update({ enabled: next.enabled, config: JSON.stringify(this.sealed(tenant, input.name, current.type, config)), updated_at: Math.max(this.deps.clock(), current.updatedAt + 1) });
    this.changed(tenant);
    return this.get(tenant, input.name, db);
  }

  async remove(tenant: string, name: string, db: Knex = this.deps.knex): Promise<void> {
    const current = await this.require(tenant, name, db);
    if (current.enabled) await this.refuseLastEnabled(tenant, name, db);
    await db(TABLE).where({ tenant, name }).delete();
    this.changed(tenant);
  }

  /** After a change committed elsewhere (an import): the next request reads the providers again. */
  refresh(tenant: string): void {
    this.changed(tenant);
  }

  /** Creates the `local` provider on a tenant that has none (first start), when its type is loaded. */
  async ensureDefault(tenant: string): Promise<void> {
    if (!this.deps.registry.get('local')) return;
    const any = await this.deps.knex(TABLE).where({ tenant }).first();
    if (any) return;
    try {
      await this.create(tenant, { name: 'local', type: 'local', enabled: true, config: {} });
    } catch (err) {
      // Another node created it first.
      if (!(err instanceof ProblemError && err.code === 'SEC-IDP-004')) throw err;
    }
  }

  private async refuseLastEnabled(tenant: string, name: string, db: Knex): Promise<void> {
    const others = (await db(TABLE).where({ tenant, enabled: true }).whereNot({ name }).count({ n: '*' }).first()) as { n: number | string };
    if (Number(others.n) === 0) {
      throw new ProblemError('SEC-IDP-005', { message: `"${name}" is the last enabled identity provider: enable another one first, or nobody could log in` });
    }
  }

  /** The stored provider, secret fields opened (for merging; never answered as is). */
  private async require(tenant: string, name: string, db: Knex): Promise<IdentityProviderConfig> {
    const found = await this.findOpen(tenant, name, db);
    if (!found) throw new ProblemError('SEC-IDP-003', { message: `No identity provider is named "${name}"` });
    return found;
  }

  private openedConfig(tenant: string, provider: IdentityProviderConfig): IdentityProviderConfig {
    return { ...provider, config: this.opened(tenant, provider.name, provider.type, provider.config) };
  }

  private sealed(tenant: string, name: string, type: string, config: Record<string, unknown>): Record<string, unknown> {
    const out = { ...config };
    for (const f of this.secretFieldsOf(type)) {
      if (typeof out[f] === 'string') out[f] = this.deps.secrets.seal(out[f] as string, `idp:${tenant}:${name}:${f}`);
    }
    return out;
  }

  private opened(tenant: string, name: string, type: string, config: Record<string, unknown>): Record<string, unknown> {
    const out = { ...config };
    for (const f of this.secretFieldsOf(type)) {
      if (typeof out[f] === 'string') out[f] = this.deps.secrets.openString(out[f] as string, `idp:${tenant}:${name}:${f}`);
    }
    return out;
  }

  private manifestOfType(type: string): PluginManifest | undefined {
    const pluginId = this.deps.registry.pluginOf(type);
    return pluginId ? this.deps.manifestOf(pluginId) : undefined;
  }

  /** The secret configuration fields of a provider type (x-secret in its plugin's configSchema). */
  secretFieldsOf(type: string): string[] {
    return secretFields(this.manifestOfType(type)?.configSchema as Record<string, unknown> | undefined);
  }

  private validate(input: IdentityProviderInput): void {
    const problem = this.problemOf(input);
    if (problem) throw new ProblemError('SEC-IDP-002', { message: problem });
  }

  /**
   * Why a provider cannot be stored as it is (its type unknown, its configuration refused by the type's
   * plugin, or a type change of `previous`), or null. Fills the configuration's defaults in, as a create does.
   */
  problemOf(input: IdentityProviderInput, previous?: { type: string } | null): string | null {
    const typeChange = previous ? this.typeChangeProblem(input, previous) : null;
    if (typeChange) return typeChange;
    const manifest = this.manifestOfType(input.type);
    if (!manifest) return `Unknown identity provider type "${input.type}" (known: ${this.types().join(', ') || 'none'})`;
    const problem = checkInstances({ ...manifest, multiInstance: true }, [{ name: input.name, config: input.config }]);
    return problem ? `Invalid configuration: ${problem}` : null;
  }

  private typeChangeProblem(input: { type: string }, current: { type: string }): string | null {
    return input.type !== current.type ? 'The type of an identity provider cannot change' : null;
  }

  /** Secret configuration fields never leave the service. */
  private masked(p: IdentityProviderConfig): IdentityProviderConfig {
    const secrets = this.secretFieldsOf(p.type);
    if (secrets.length === 0) return p;
    const config = { ...p.config };
    for (const f of secrets) if (config[f] !== undefined) config[f] = MASK;
    return { ...p, config };
  }
}

export const MASK = '********';
