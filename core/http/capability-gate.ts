import type { FastifyInstance } from 'fastify';
import { problemBody } from '../errors/index.js';
import type { HostPolicy } from './host-policy.js';
import { normaliseHost } from './host-policy.js';
import { sendProblem } from './problem-reply.js';
import { COMMON_CAPABILITIES } from './route-config.js';

/**
 * Answers 404 (the same problem as an unknown route, so hosts cannot be probed) when the request's Host
 * is not allowed the route's capability. The policy is read per request, so changing allowed hosts at
 * runtime needs no route changes (fastify's router is frozen once ready).
 */
export function installCapabilityGate(app: FastifyInstance, policy: () => HostPolicy): void {
  app.addHook('onRoute', (route) => {
    const capability = (route.config as { capability?: unknown } | undefined)?.capability;
    if (capability === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no capability (config.capability)`);
    }
  });

  app.addHook('onRequest', (request, reply, done) => {
    const capability = request.routeOptions.config.capability;
    if (capability === undefined || capability === 'any') return done();
    const host = normaliseHost(request.host);
    const current = policy();
    const allowed = capability === 'common' ? current.allowsAny(host, COMMON_CAPABILITIES) : current.allows(host, capability);
    if (allowed) return done();
    sendProblem(reply, problemBody('HTTP-001'));
  });
}
