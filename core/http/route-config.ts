import type { Capability } from '@certwright/sdk';

/**
 * The capability a route belongs to. `common` = the routes common to webra, events and configuration
 * (spec "Routes common to…"); `any` = infrastructure probes (/healthz, /readyz) answered on every host.
 */
export type RouteCapability = Capability | 'common' | 'any';

export const COMMON_CAPABILITIES: readonly Capability[] = ['webra', 'events', 'configuration'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route: the onRoute hook refuses a route without it. */
    capability?: RouteCapability;
    /** `public`: answered without credentials. Anything else is for the security core's authorizer. */
    access?: 'public' | { permission: string };
  }
  interface FastifyRequest {
    /** The request-scoped tenant (one `default` tenant until the tenants API lands). */
    tenant: string;
  }
}
