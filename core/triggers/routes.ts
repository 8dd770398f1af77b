import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CoreServices } from '../services.js';
import { viewOf } from './model.js';
import type { TriggerRuntime } from './runtime.js';
import { nameParams, triggerInputSchema, triggerPatchSchema, triggerSchema } from './schemas.js';
import { checkTrigger, type TriggerInput } from './validate.js';

const BASE = '/api/v1/triggers/';
const CAPABILITY = 'configuration' as const;
const READ = { permission: 'configuration:triggers:read' } as const;
const WRITE = { permission: 'configuration:triggers:write' } as const;
const tags = ['triggers'];

type NameParams = { Params: { name: string } };
const principalOf = (request: FastifyRequest): string | null => request.principal?.identifier ?? null;

/**
 * /api/v1/triggers/: the standard set (GET, GET :name, POST, PUT by the name in the body, DELETE :name)
 * plus PATCH on the collection, which enables or disables several triggers at once. Reads need
 * configuration:triggers:read, changes configuration:triggers:write; each change writes its event.
 */
export async function triggerRoutes(app: FastifyInstance, options: { services: CoreServices; runtime: TriggerRuntime }): Promise<void> {
  const { services, runtime } = options;
  const repository = runtime.triggers;
  app.addSchema(triggerSchema);
  const one = { 200: { $ref: 'Trigger#' } };
  const many = { 200: { type: 'array', items: { $ref: 'Trigger#' } } };

  app.get(BASE, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'List triggers', response: many },
    handler: async (request) => (await repository.list(request.tenant)).map(viewOf),
  });

  app.get<NameParams>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: READ },
    schema: { tags, summary: 'Get a trigger', params: nameParams, response: one },
    handler: async (request) => viewOf(await repository.get(request.tenant, request.params.name)),
  });

  app.post<{ Body: TriggerInput }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: {
      tags,
      summary: 'Create a trigger',
      description:
        'TRG-005 unknown channel, TRG-006 target refused by the channel, TRG-007 query that does not parse, TRG-008 unknown event, TRG-002 other inconsistencies (thresholds), TRG-004 name taken.',
      body: triggerInputSchema,
      response: { 201: { $ref: 'Trigger#' } },
    },
    handler: async (request, reply) => {
      const checked = checkTrigger(services, request.body);
      const created = await repository.create(request.tenant, checked, principalOf(request));
      return reply.code(201).send(viewOf(created));
    },
  });

  app.put<{ Body: TriggerInput }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: {
      tags,
      summary: 'Replace the trigger named in the body',
      description: 'Secret target fields left out or sent back as ******** keep their stored value (for the same channel); null clears one.',
      body: triggerInputSchema,
      response: one,
    },
    handler: async (request) => {
      const current = await repository.get(request.tenant, request.body.name);
      const checked = checkTrigger(services, request.body, { trigger: current, openSecret: (field) => repository.openSecret(current, field) });
      return viewOf(await repository.update(request.tenant, checked, principalOf(request)));
    },
  });

  app.patch<{ Body: { names: string[]; enabled: boolean } }>(BASE, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: {
      tags,
      summary: 'Enable or disable several triggers',
      description: 'Body `{names: [...], enabled}`. All of them change, or none (TRG-003 names the first unknown one). Answers the triggers named.',
      body: triggerPatchSchema,
      response: many,
    },
    handler: async (request) => (await repository.setEnabled(request.tenant, request.body.names, request.body.enabled, principalOf(request))).map(viewOf),
  });

  app.delete<NameParams>(`${BASE}:name`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Delete a trigger (its queued deliveries are canceled)', params: nameParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await repository.remove(request.tenant, request.params.name, principalOf(request));
      return reply.code(204).send();
    },
  });
}
