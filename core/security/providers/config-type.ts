import type { Knex } from 'knex';
import { unlessTaken } from '../../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import type { IdentityProviderConfig, IdentityProviderInput, IdentityProviderService } from './service.js';

/** The provider as its POST takes it: no `_id`, no timestamps; secret fields open (the store seals them). */
const body = (p: IdentityProviderConfig): ConfigObject => ({ name: p.name, type: p.type, enabled: p.enabled, config: p.config });
const stored = (p: IdentityProviderConfig): StoredConfigObject => ({ id: p._id, name: p.name, body: body(p), createdAt: p.createdAt, updatedAt: p.updatedAt });
const input = (o: ConfigObject): IdentityProviderInput => ({
  name: o.name as string,
  type: o.type as string,
  enabled: o.enabled as boolean,
  config: o.config as Record<string, unknown>,
});

/**
 * The providers' own table (security_identity_providers, read by the authenticator), written through the
 * service: its validation by the type's plugin (defaults filled in), its sealing of secret fields, its
 * refusal to disable or delete the last enabled provider (SEC-IDP-005).
 */
function providerStore(providers: IdentityProviderService): ConfigTypeStore {
  return {
    secretsInClear: true,
    list: async (tenant, db) => (await providers.listOpen(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => {
      const found = await providers.findOpen(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, object, db) =>
      unlessTaken(async () => {
        await providers.create(tenant, input(object), db as Knex);
        return stored((await providers.findOpen(tenant, object.name as string, db as Knex))!);
      }, 'SEC-IDP-004'),
    update: async (tenant, _name, object, db) => {
      await providers.update(tenant, input(object), db as Knex);
      return true;
    },
    remove: async (tenant, name, db) => {
      if (!(await providers.findOpen(tenant, name, db as Knex))) return false;
      await providers.remove(tenant, name, db as Knex);
      return true;
    },
  };
}

/**
 * Identity providers (/api/v1/security/identity/providers/) on the configuration registry, for export/import,
 * the cookbook and reference checks; routes.ts keeps their routes. Each is an instance of a provider type a
 * plugin registers: that plugin's configSchema validates `config` and names its secret fields (x-secret),
 * sealed by the service in the providers' table. Their SEC-IDP-* codes; a change applies from the next request.
 */
export function identityProviderType(providers: IdentityProviderService): ConfigObjectType {
  return {
    type: 'identity-provider',
    title: 'Identity providers',
    noun: 'identity provider',
    exportKey: 'identityProviders',
    description: 'Who may log in, and how: each provider is an instance of a provider type that a plugin registers (the first start creates `local`). The enabled ones are asked in name order.',
    basePath: '/api/v1/security/identity/providers/',
    tag: 'security',
    section: 'identity-providers',
    errorFamily: 'SEC-IDP',
    routes: 'own',
    update: 'replace',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]*[^/\\s][^/]*$' },
      type: { type: 'string', minLength: 1, maxLength: 64, description: 'A provider type a loaded identity-provider plugin registers (`local` is built in); it cannot change' },
      enabled: { type: 'boolean', description: 'Asked at login (true when absent); the last enabled provider cannot be disabled' },
      config: { type: 'object', description: "Validated against the provider type's configSchema; its secret fields (x-secret) are sealed" },
    },
    required: ['name', 'type'],
    // Echoed back by read-modify-write clients: accepted, ignored (as the routes do).
    serverOwned: ['id', 'createdAt', 'updatedAt'],
    store: providerStore(providers),
    hooks: {
      normalize: (object) => ({ name: object.name, type: object.type, enabled: object.enabled ?? true, config: object.config ?? {} }),
      secretsOf: (object) => (typeof object.type === 'string' ? providers.secretFieldsOf(object.type).map((field) => `config.${field}`) : []),
      validate: (object, { previous }) => providers.problemOf(input(object), previous as { type: string } | null) ?? undefined,
      afterChange: (_change, { tenant }) => providers.refresh(tenant),
    },
  };
}
