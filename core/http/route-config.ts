import type { Capability } from '@certwright/sdk';

/**
 * The capability a route belongs to. `common` = the routes common to webra, events and configuration
 * (spec "Routes common to…"); `any` = infrastructure probes (/healthz, /readyz) answered on every host.
 */
export type RouteCapability = Capability | 'common' | 'any';

/** `public`: answered without credentials. Otherwise the permission the authorizer checks. */
export type RouteAccess = 'public' | { permission: string };

export const COMMON_CAPABILITIES: readonly Capability[] = ['webra', 'events', 'configuration'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route: the onRoute hook refuses a route without it. */
    capability?: RouteCapability;
    /** Required on every route: `public`, or the permission the authorizer checks. */
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** The request-scoped tenant (one `default` tenant until the tenants API lands). */
    tenant: string;
  }
}
