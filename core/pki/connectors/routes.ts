import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectionAccess, refuseReferenced } from '../../config-objects/own-routes.js';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import type { ProfileService } from '../../profiles/types.js';
import { checkConfiguration, openConfiguration, resolveType, sealConfiguration } from './configuration.js';
import type { ConnectorInstances } from './instances.js';
import { DEFAULT_QUEUE } from './model.js';
import { queueFields, type QueueInput } from './queue-input.js';
import { connectorView, queueView, type ConnectorFields, type ConnectorRepository } from './repository.js';
import { connectorInputSchema, connectorSchema, connectResultSchema, materialsSchema, nameBodySchema, nameParams, queueInputSchema, queueSchema } from './schemas.js';
import { settingsOf } from './settings.js';

/*
 * On the configuration registry (config-type.ts, queue-config-type.ts) for export/import, the cookbook and
 * reference checks; these routes stay the collection's own: a connector's settings are validated against the
 * schema of the plugin providing its type and may come at the top level (Horizon's form), its `type` is
 * answered in the client's wire name (`integrated`), answers carry `version` and a queue's run `state`,
 * events carry the masked object, and PATCH connect/materials act on the connector.
 */

const CONNECTORS = '/api/v1/pki/connectors/';
const QUEUES = '/api/v1/pki/queues/';
const ACCESS = collectionAccess('pki');
const tags = ['pki-connectors'];

type NameParams = { Params: { name: string } };
const principalOf = (request: FastifyRequest): string | null => request.principal?.identifier ?? null;

export interface ConnectorInput {
  name: string;
  /** An installed type or its Horizon name (horizon-types.ts). */
  type: string;
  description?: string | null;
  enabled?: boolean;
  queue?: string;
  configuration?: Record<string, unknown>;
  /** Settings at the top level (Horizon's form, settings.ts). */
  [setting: string]: unknown;
}

export interface ConnectorRouteOptions {
  services: CoreServices;
  repository: ConnectorRepository;
  instances: ConnectorInstances;
  /** The CA chain of a connector (the gateway's, cached). */
  caChain(tenant: string, name: string): Promise<string[]>;
  /** Imports a chain into /api/v1/cas (materials). */
  importChain(tenant: string, chain: string[], principal: string | null): Promise<void>;
  /** Told of every change (caches drop the connector). */
  changed(tenant: string, name: string): void;
}

/** The profiles that name a connector (none while the profile service is not there). */
async function profilesUsing(request: FastifyRequest, name: string): Promise<string[]> {
  let profiles: ProfileService | undefined;
  try {
    profiles = request.diScope.resolve<{ profiles: ProfileService }>('enrollment').profiles;
  } catch {
    return [];
  }
  return (await profiles.list(request.tenant)).filter((p) => p.pkiConnector === name).map((p) => p.name);
}

/**
 * /api/v1/pki/connectors/ (standard set, PATCH connect, PATCH materials) and /api/v1/pki/queues/ (standard
 * set, answers with their `state`). Reads need configuration:pki:read, changes configuration:pki:write.
 */
export async function connectorRoutes(app: FastifyInstance, options: ConnectorRouteOptions): Promise<void> {
  const { services, repository, instances } = options;
  app.addSchema(connectorSchema);
  app.addSchema(queueSchema);

  /**
   * Checks an input against the type's configSchema (settings nested or at the top level: settings.ts);
   * `current` (PUT) lends its secrets to masked fields when it is of the same installed type, under either name.
   */
  const fieldsOf = (tenant: string, input: ConnectorInput, current: { type: string; configuration: Record<string, unknown> } | null): ConnectorFields => {
    const { type, wireType, schema } = resolveType(services, input.type);
    const settings = settingsOf(type, schema, input);
    const opened = current && current.type === type ? openConfiguration(services.secrets, tenant, input.name, current.configuration) : null;
    const configuration = checkConfiguration(schema, settings, opened);
    return {
      name: input.name,
      type,
      wireType,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      queue: input.queue ?? DEFAULT_QUEUE,
      configuration: sealConfiguration(services.secrets, tenant, input.name, schema, configuration),
    };
  };

  app.get(CONNECTORS, {
    config: ACCESS.read,
    schema: { tags, summary: 'List PKI connectors', response: { 200: { type: 'array', items: { $ref: 'PkiConnector#' } } } },
    handler: async (request) => (await repository.list(request.tenant)).map(connectorView),
  });

  app.get<NameParams>(`${CONNECTORS}:name`, {
    config: ACCESS.read,
    schema: { tags, summary: 'Get a PKI connector', params: nameParams, response: { 200: { $ref: 'PkiConnector#' } } },
    handler: async (request) => connectorView(await repository.get(request.tenant, request.params.name)),
  });

  app.post<{ Body: ConnectorInput }>(CONNECTORS, {
    config: { ...ACCESS.write, invalidCode: 'PKI-CONN-002' },
    schema: {
      tags,
      summary: 'Create a PKI connector',
      description:
        "`configuration` (or the same settings at the top level, Horizon's form) is checked against the connector plugin's configSchema (PKI-CONN-002); fields marked x-secret are sealed at rest and read ********. `type` may be Horizon's name of an installed type (integrated = local-ca), answered back as sent. PKI-CONN-006 unknown type, PKI-CONN-002 unknown queue or field, PKI-CONN-004 name taken.",
      body: connectorInputSchema,
      response: { 201: { $ref: 'PkiConnector#' } },
    },
    handler: async (request, reply) => {
      const created = await repository.create(request.tenant, fieldsOf(request.tenant, request.body, null), principalOf(request));
      options.changed(request.tenant, created.name);
      return reply.code(201).send(connectorView(created));
    },
  });

  app.put<{ Body: ConnectorInput }>(CONNECTORS, {
    config: { ...ACCESS.write, invalidCode: 'PKI-CONN-002' },
    schema: {
      tags,
      summary: 'Replace the PKI connector named in the body',
      description: 'Secret configuration fields left out or sent back as ******** keep their stored value (same type); null clears one.',
      body: connectorInputSchema,
      response: { 200: { $ref: 'PkiConnector#' } },
    },
    handler: async (request) => {
      const current = await repository.get(request.tenant, request.body.name);
      const updated = await repository.update(request.tenant, fieldsOf(request.tenant, request.body, current), principalOf(request));
      options.changed(request.tenant, updated.name);
      return connectorView(updated);
    },
  });

  app.delete<NameParams>(`${CONNECTORS}:name`, {
    config: ACCESS.write,
    schema: { tags, summary: 'Delete a PKI connector (PKI-CONN-005 while a certificate profile uses it)', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      const name = request.params.name;
      await repository.get(request.tenant, name);
      const users = await profilesUsing(request, name);
      if (users.length > 0) throw new ProblemError('PKI-CONN-005', { detail: `used by the certificate profile(s) ${users.map((u) => `"${u}"`).join(', ')}` });
      await repository.remove(request.tenant, name, principalOf(request));
      options.changed(request.tenant, name);
      return reply.code(204).send();
    },
  });

  app.patch<{ Body: { name: string } }>(`${CONNECTORS}connect`, {
    config: ACCESS.write,
    schema: {
      tags,
      summary: 'Test the connection of a PKI connector',
      description: "Body `{name}`. Answers the connector's testConnection: `{ok, detail?}` (a connector that throws answers ok false with its message).",
      body: nameBodySchema,
      response: { 200: connectResultSchema },
    },
    handler: async (request) => {
      const { connector } = await instances.resolve(request.tenant, request.body.name);
      try {
        const result = await connector.testConnection();
        return { ok: Boolean(result.ok), ...(result.detail !== undefined ? { detail: String(result.detail) } : {}) };
      } catch (err) {
        return { ok: false, detail: (err as Error).message ?? String(err) };
      }
    },
  });

  app.patch<{ Body: { name: string } }>(`${CONNECTORS}materials`, {
    config: ACCESS.write,
    schema: {
      tags,
      summary: 'Fetch the CA chain of a PKI connector and import it into /api/v1/cas',
      description: 'Body `{name}`. Answers `{chain: [pem…]}` (issuing CA first); each CA not yet imported is added to the certificate authorities, so trust chains build.',
      body: nameBodySchema,
      response: { 200: materialsSchema },
    },
    handler: async (request) => {
      const chain = await options.caChain(request.tenant, request.body.name);
      await options.importChain(request.tenant, chain, principalOf(request));
      return { chain };
    },
  });

  // --- queues ---

  app.get(QUEUES, {
    config: ACCESS.read,
    schema: { tags, summary: 'List PKI queues (the built-in queue "default" always exists)', response: { 200: { type: 'array', items: { $ref: 'PkiQueue#' } } } },
    handler: async (request) => {
      const [queues, states] = await Promise.all([repository.listQueues(request.tenant), repository.queueStates(request.tenant)]);
      return queues.map((q) => queueView(q, states.get(q.name)));
    },
  });

  app.get<NameParams>(`${QUEUES}:name`, {
    config: ACCESS.read,
    schema: { tags, summary: 'Get a PKI queue and its state', params: nameParams, response: { 200: { $ref: 'PkiQueue#' } } },
    handler: async (request) => {
      const queue = await repository.getQueue(request.tenant, request.params.name);
      return queueView(queue, (await repository.queueStates(request.tenant)).get(queue.name));
    },
  });

  app.post<{ Body: QueueInput }>(QUEUES, {
    config: { ...ACCESS.write, invalidCode: 'PKI-QUEUE-002' },
    schema: {
      tags,
      summary: 'Create a PKI queue',
      description:
        'Defaults: retries 10, initialDelaySeconds 30, maxDelaySeconds 3600, paused false, no size or throttle, clusterWide false. PKI-QUEUE-002 invalid (size or throttleParallelism below 1, a throttleDuration that is not a positive duration or has no throttleParallelism), PKI-QUEUE-004 name taken.',
      body: queueInputSchema,
      response: { 201: { $ref: 'PkiQueue#' } },
    },
    handler: async (request, reply) => {
      const created = await repository.createQueue(request.tenant, queueFields(request.body), principalOf(request));
      return reply.code(201).send(queueView(created, undefined));
    },
  });

  app.put<{ Body: QueueInput }>(QUEUES, {
    config: { ...ACCESS.write, invalidCode: 'PKI-QUEUE-002' },
    schema: { tags, summary: 'Update the PKI queue named in the body (fields left out keep their value)', body: queueInputSchema, response: { 200: { $ref: 'PkiQueue#' } } },
    handler: async (request) => {
      const current = await repository.getQueue(request.tenant, request.body.name);
      const updated = await repository.updateQueue(request.tenant, queueFields(request.body, current), principalOf(request));
      return queueView(updated, (await repository.queueStates(request.tenant)).get(updated.name));
    },
  });

  app.delete<NameParams>(`${QUEUES}:name`, {
    config: ACCESS.write,
    schema: {
      tags,
      summary: 'Delete a PKI queue (PKI-QUEUE-005 while a connector names it or items wait in it; "default" stays)',
      params: nameParams,
      response: { 204: { type: 'null' } },
    },
    handler: async (request, reply) => {
      // Connectors naming it, by name (queued items are the repository's own check).
      await refuseReferenced(request, 'pki-queue', request.params.name);
      await repository.removeQueue(request.tenant, request.params.name, principalOf(request));
      return reply.code(204).send();
    },
  });
}
