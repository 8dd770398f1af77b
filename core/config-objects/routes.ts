import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor, ConfigRegistry, RegisteredType } from './registry.js';

type NameParams = { Params: { name: string } };

/** The registry validates bodies itself, so invalid input answers the type's own `-002` naming the field. */
const noFastifyValidation = () => () => true;

/** The caller as the registry's hooks see it: who, and which permissions it holds unfiltered. */
export const actorOf = (request: FastifyRequest): Actor => {
  const principal = request.principal!;
  return { principal: principal.identifier, holdsUnfiltered: (permission) => principal.permissions.filtersFor(permission) === null };
};

/**
 * The standard set of one configuration type (spec "Configuration capability": GET collection, GET :name,
 * POST collection, PUT collection, DELETE :name), derived from its declaration: the same access rule,
 * problems and OpenAPI shape for every type.
 */
export function mountConfigType(app: FastifyInstance, registry: ConfigRegistry, t: RegisteredType): void {
  const { decl } = t;
  const base = decl.basePath;
  const read = { permission: `configuration:${decl.section}:read` };
  const write = { permission: `configuration:${decl.section}:write` };
  const tags = [decl.tag];
  const view = { ...t.viewSchema, additionalProperties: true };
  const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', description: `The ${decl.noun}'s ${t.key}` } } };
  const config = (access: { permission: string }) => ({ capability: 'configuration' as const, access });

  app.get(base, {
    config: config(read),
    schema: { tags, summary: `List ${decl.title.toLowerCase()}`, description: decl.description, response: { 200: { type: 'array', items: view } } },
    handler: (request) => registry.list(decl.type, request.tenant),
  });

  app.get<NameParams>(`${base}:name`, {
    config: config(read),
    validatorCompiler: noFastifyValidation,
    schema: { tags, summary: `Get a ${decl.noun}`, params, response: { 200: view } },
    handler: (request) => registry.read(decl.type, request.tenant, request.params.name),
  });

  if (decl.creatable !== false) {
    app.post(base, {
      config: config(write),
      validatorCompiler: noFastifyValidation,
      schema: { tags, summary: `Create a ${decl.noun}`, body: t.inputSchema, response: { 201: view } },
      handler: async (request, reply) => reply.code(201).send(await registry.create(decl.type, request.tenant, request.body, actorOf(request))),
    });
  }

  app.put(base, {
    config: config(write),
    validatorCompiler: noFastifyValidation,
    schema: {
      tags,
      summary: decl.creatable === false ? `Set the ${decl.noun} the body names (created when absent)` : `Update the ${decl.noun} the body names (secrets sent as ******** or left out are kept, null clears them)`,
      body: t.inputSchema,
      response: { 200: view },
    },
    handler: (request) => registry.update(decl.type, request.tenant, request.body, actorOf(request)),
  });

  if (decl.deletable !== false) {
    app.delete<NameParams>(`${base}:name`, {
      config: config(write),
      validatorCompiler: noFastifyValidation,
      schema: { tags, summary: `Delete a ${decl.noun} (refused while another object references it)`, params, response: { 204: { type: 'null' } } },
      handler: async (request, reply) => {
        await registry.remove(decl.type, request.tenant, request.params.name, actorOf(request));
        return reply.code(204).send();
      },
    });
  }
}
