import type { FastifyRequest } from 'fastify';
import type { SecurityRouteContext } from './route-context.js';

/**
 * After a committed security write: drops this node's resolved principals first (the change applies to the very
 * next request, even if recording the event then fails), then records the event.
 */
export async function recordChange(
  ctx: SecurityRouteContext,
  request: FastifyRequest,
  event: { code: string; objectType: 'role' | 'team' | 'principal' | 'password-policy'; objectId: string; payload: Record<string, unknown> },
  /** Resolved principals to drop: permissions, roles and teams changed (verified keys stay valid). */
  invalidate: 'principals' | 'none' = 'principals',
): Promise<void> {
  if (invalidate === 'principals') ctx.invalidate('principals');
  await ctx.events.append({
    tenant: request.tenant,
    code: event.code,
    module: 'security',
    status: 'success',
    principal: request.principal!.identifier,
    objectType: event.objectType,
    objectId: event.objectId,
    payload: event.payload,
  });
}
