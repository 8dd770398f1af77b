import type { FastifyRequest } from 'fastify';
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
