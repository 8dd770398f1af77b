import type { Capability } from '@certwright/sdk';
import type { FastifyInstance, onRequestHookHandler, preValidationHookHandler } from 'fastify';
import { problemBody } from '../errors/index.js';
import type { Authorizer } from './access.js';
import type { HostPolicy } from './host-policy.js';
import { sendProblem } from './problem-reply.js';
import { COMMON_CAPABILITIES, type PermissionAccess, type RouteAccess, type RouteCapability } from './route-config.js';

/**
 * Every route must declare its capability and its access; a route that forgets either is refused when it
 * is registered. From the declarations each route gets its own guard hooks, run before anything else:
 *
 * 1. the host gate: 404 (the same problem as an unknown route, so hosts cannot be probed) when the
 *    request's Host is not allowed the route's capability;
 * 2. the authorizer, for non-public routes (and again before the handler when the access depends on
 *    a body field).
 *
 * Built per route at registration, so a request pays one closure call per guard and no route-option
 * lookups; `any` + `public` routes (the probes) pay nothing. The policy and the authorizer are read per
 * request, so they can change at runtime without touching routes (fastify's router is frozen once ready).
 */
/** One registered route and its declarations (the authorization matrix test walks them). */
export interface RouteTableEntry {
  method: string;
  url: string;
  capability: RouteCapability;
  access: RouteAccess;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, with its capability and access. */
    readonly routeTable: readonly RouteTableEntry[];
  }
}

export function installRouteGuards(app: FastifyInstance, policy: () => HostPolicy, authorizer: () => Authorizer): void {
  const table: RouteTableEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const config = route.config as { capability?: RouteCapability; access?: RouteAccess } | undefined;
    const capability = config?.capability;
    const access = config?.access;
    const name = `route ${String(route.method)} ${route.url}`;
    if (capability === undefined) throw new Error(`${name} declares no capability (config.capability)`);
    if (access === undefined) throw new Error(`${name} declares no access (config.access)`);
    for (const method of ([] as string[]).concat(route.method)) table.push({ method, url: route.url, capability, access });

    const guards: onRequestHookHandler[] = [];
    if (capability !== 'any') {
      const allowed: readonly Capability[] = capability === 'common' ? COMMON_CAPABILITIES : [capability];
      guards.push((request, reply, done) => {
        if (policy().allowsAnyOnHost(request.host, allowed)) return done();
        sendProblem(reply, problemBody('HTTP-001'));
      });
    }
    // A check on a body field waits for the body: authenticate first (unparsed bodies of strangers
    // are never read), decide once the body is there.
    const onBody = typeof access === 'object' && access.orSelf?.startsWith('body.') === true;
    if (access !== 'public') {
      const first = onBody ? 'authenticated' : access;
      guards.push((request, _reply, done) => {
        authorizer().authorize(request, first).then(() => done(), done);
      });
    }
    if (guards.length > 0) {
      const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      route.onRequest = [...guards, ...own];
    }
    if (onBody) {
      const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
      const check: preValidationHookHandler = (request, _reply, done) => {
        authorizer().authorize(request, access as PermissionAccess).then(() => done(), done);
      };
      route.preValidation = [check, ...own];
    }
  });
}
