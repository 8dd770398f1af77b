import type { Knex } from 'knex';
import { unlessTaken } from '../../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import { checkConfiguration, openSchemaSecrets, resolveType, schemaOfType, sealConfiguration, secretPathsOf } from './configuration.js';
import { DEFAULT_QUEUE, type ConnectorRecord } from './model.js';
import type { ConnectorFields, ConnectorRepository } from './repository.js';
import { connectorInputSchema } from './schemas.js';

type Json = Record<string, unknown>;
type TypeServices = Pick<CoreServices, 'provided' | 'plugins' | 'secrets'>;

export interface PkiConnectorTypeDeps {
  services: TypeServices;
  repository: ConnectorRepository;
  /** Told of every committed change: the cached instance and CRLs of the connector are dropped. */
  changed(tenant: string, name: string): void;
}

/** The configSchema of an installed type, or undefined when no loaded plugin provides it (then nothing is opened). */
function schemaOrNone(services: TypeServices, type: string): Json | undefined {
  try {
    return schemaOfType(services, type);
  } catch {
    return undefined;
  }
}

/** The connector's own fields of a POST, as the registry hands them (settings nested under `configuration`). */
const FIELDS = ['name', 'type', 'description', 'enabled', 'queue', 'configuration'] as const;
/** What a GET answers beside them (echoed back by read-modify-write clients). */
const ECHOED = ['version', 'createdAt', 'updatedAt', 'createdBy', 'updatedBy'];

/**
 * The connectors' own table (pki_connectors, read by the gateway and its instances) on the registry's
 * handle, without an event (the registry writes it). Bodies carry the secrets the type's schema names open
 * (`secretsInClear`): the store seals them with configuration.ts, under the connector's own AAD, as the routes do.
 */
function connectorStore({ services, repository }: PkiConnectorTypeDeps): ConfigTypeStore {
  const stored = (c: ConnectorRecord): StoredConfigObject => ({
    id: c.id,
    name: c.name,
    body: {
      name: c.name,
      // The client's wire name (integrated), so an import resolves it again and answers it as written.
      type: c.wireType ?? c.type,
      description: c.description,
      enabled: c.enabled,
      queue: c.queue,
      configuration: openSchemaSecrets(services.secrets, c.tenant, c.name, schemaOrNone(services, c.type), c.configuration),
    },
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  });
  /** The row's fields: the type resolved, defaults filled in, secrets sealed (hooks.validate checked them first). */
  const fieldsOf = (tenant: string, body: Json): ConnectorFields => {
    const name = String(body.name);
    const { type, wireType, schema } = resolveType(services, String(body.type));
    const configuration = checkConfiguration(schema, body.configuration as Json | undefined, null);
    return {
      name,
      type,
      wireType,
      description: (body.description as string | null | undefined) ?? null,
      enabled: (body.enabled as boolean | undefined) ?? true,
      queue: (body.queue as string | undefined) ?? DEFAULT_QUEUE,
      configuration: sealConfiguration(services.secrets, tenant, name, schema, configuration),
    };
  };
  return {
    secretsInClear: true,
    list: async (tenant, db) => (await repository.listOn(db as Knex, tenant)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repository.find(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, body, db, by) => unlessTaken(async () => stored(await repository.insertConnector(db as Knex, tenant, fieldsOf(tenant, body), by ?? null))),
    update: async (tenant, _name, body, db, by) => {
      await repository.replaceConnector(db as Knex, tenant, fieldsOf(tenant, body), by ?? null);
      return true;
    },
    remove: async (tenant, name, db) => {
      await repository.deleteConnector(db as Knex, tenant, name);
      return true;
    },
  };
}

/**
 * PKI connectors (/api/v1/pki/connectors/) on the configuration registry for export/import, the cookbook
 * and reference checks (its `queue`, a credential its settings name, the profiles naming it); routes.ts keeps serving them (why: its top
 * comment). Their own table, PKI-CONN-* codes and PKI-CONNECTOR-* events; settings checked against the
 * configSchema of the plugin providing the type (PKI-CONN-006 for a type none provides), its x-secret
 * fields the secrets (secretsOf); a change drops this node's instance and CRLs of the connector.
 */
export function pkiConnectorType(deps: PkiConnectorTypeDeps): ConfigObjectType {
  const { services } = deps;
  const input = connectorInputSchema.properties;
  return {
    type: 'pki-connector',
    title: 'PKI connectors',
    noun: 'PKI connector',
    exportKey: 'pkiConnectors',
    description: 'Certificate authorities certificates are issued and revoked through: a type an installed plugin provides, its settings under `configuration`.',
    basePath: '/api/v1/pki/connectors/',
    tag: 'pki-connectors',
    section: 'pki',
    errorFamily: 'PKI-CONN',
    routes: 'own',
    update: 'replace',
    events: { module: 'pki', created: 'PKI-CONNECTOR-CREATED', updated: 'PKI-CONNECTOR-UPDATED', deleted: 'PKI-CONNECTOR-DELETED' },
    properties: Object.fromEntries(FIELDS.map((field) => [field, input[field]])),
    required: ['name', 'type'],
    serverOwned: ECHOED,
    references: [
      { field: 'queue', type: 'pki-queue' },
      // acme-upstream's External Account Binding from a password credential (eab: {credentials}).
      { field: 'configuration.eab.credentials', type: 'credential' },
      // acme-upstream's dns-01 answered through a DCV policy.
      { field: 'configuration.dcvPolicy', type: 'dcv-policy' },
    ],
    store: connectorStore(deps),
    hooks: {
      normalize: (object) => ({
        name: object.name,
        type: object.type,
        description: object.description ?? null,
        enabled: object.enabled ?? true,
        queue: object.queue ?? DEFAULT_QUEUE,
        configuration: object.configuration ?? {},
      }),
      secretsOf(object) {
        try {
          return secretPathsOf(resolveType(services, String(object.type)).schema).map((path) => `configuration.${path.join('.')}`);
        } catch {
          // A type no plugin provides: its settings cannot be read, and validate refuses it.
          return [];
        }
      },
      validate(object) {
        try {
          checkConfiguration(resolveType(services, String(object.type)).schema, object.configuration as Json | undefined, null);
        } catch (err) {
          if (!(err instanceof ProblemError)) throw err;
          if (err.code === 'PKI-CONN-002') return err.detail ?? err.message;
          // PKI-CONN-006 stays its own problem; its message names the installed types (an import's reason).
          if (err.code === 'PKI-CONN-006') throw new ProblemError('PKI-CONN-006', { message: `type: ${err.detail ?? err.message}`, ...(err.detail ? { detail: err.detail } : {}) });
          throw err;
        }
      },
      // The profiles naming it (PKI-CONN-005), read on the write's own handle.
      referrers: async (name, context) =>
        ((await (context.db as Knex)('certificate_profiles').where({ tenant: context.tenant, pki_connector: name }).orderBy('name').select('name')) as { name: string }[]).map((p) => `profile/${p.name}`),
      afterChange({ name }, context) {
        deps.changed(context.tenant, name);
      },
    },
  };
}
