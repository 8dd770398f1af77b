import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigRegistry } from './registry.js';
import { actorOf } from './routes.js';

/**
 * A write by a collection that keeps its own routes (`routes: 'own'`), recorded as the standard set records
 * one: the same event (who, type, name, changed field names) and change listeners. The event follows the
 * collection's own commit: its service writes in its own transaction.
 */
export async function recordedWrite<T>(
  request: FastifyRequest,
  type: string,
  op: 'create' | 'update' | 'delete',
  name: string,
  write: () => Promise<T>,
  /** The name after the write (a task updated by id may be renamed). */
  nameOf?: (result: T) => string,
): Promise<T> {
  const registry = request.diScope.resolve<ConfigRegistry>('configObjects');
  const before = op === 'update' ? await registry.portableOne(type, request.tenant, name) : null;
  const result = await write();
  const written = nameOf ? nameOf(result) : name;
  const after = op === 'delete' ? null : await registry.portableOne(type, request.tenant, written);
  await registry.recordChange(type, request.tenant, op, written, before, after, actorOf(request));
  return result;
}

/**
 * Refuses the delete of an object other configuration objects name, as the standard set does: the type's
 * `-005` naming every referrer (`type/name`), with the list in `referrers`.
 */
export async function refuseReferenced(request: FastifyRequest, type: string, name: string): Promise<void> {
  const registry = request.diScope.resolve<ConfigRegistry>('configObjects');
  const referrers = await registry.referrers(type, request.tenant, name);
  if (referrers.length === 0) return;
  const t = registry.get(type)!;
  throw registry.problem(t, 'referenced', `The ${t.decl.noun} "${name}" is used by ${referrers.join(', ')}`, { referrers });
}

/**
 * The route config of a collection's own routes: the configuration capability and its section's read or
 * write permission, as the standard set's (routes.ts) are.
 */
export function collectionAccess(section: string) {
  const of = (right: 'read' | 'write') => ({ capability: 'configuration' as const, access: { permission: `configuration:${section}:${right}` } });
  return { read: of('read'), write: of('write') };
}

/**
 * DELETE `<base>:name` of a collection that keeps its own routes: its write permission, refused while other
 * configuration objects of the registry name the object (`type`'s -005 naming them), then the collection's
 * own removal; 204.
 */
export function mountOwnDelete(
  app: FastifyInstance,
  o: { base: string; section: string; type: string; tags: string[]; summary: string; params: Record<string, unknown>; remove: (request: FastifyRequest, name: string) => Promise<void> },
): void {
  app.delete<{ Params: { name: string } }>(`${o.base}:name`, {
    config: collectionAccess(o.section).write,
    schema: { tags: o.tags, summary: o.summary, params: o.params, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await refuseReferenced(request, o.type, request.params.name);
      await o.remove(request, request.params.name);
      return reply.code(204).send();
    },
  });
}
