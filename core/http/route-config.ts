import type { Capability } from '@certwright/sdk';

/**
 * The capability a route belongs to. `common` = the routes common to webra, events and configuration
 * (spec "Routes common to…"); `any` = infrastructure probes (/healthz, /readyz) answered on every host.
 */
export type RouteCapability = Capability | 'common' | 'any';

/**
 * Who may call a route, declared once on the route and enforced by the one authorizer:
 * - `public`: no credentials (probes, the login page's provider list, logout);
 * - `authenticated`: any authenticated principal (self-service routes, decoders);
 * - a permission (core/security/permissions), optionally also granted to the principal the request
 *   is about (`orSelf`: `params.x`, `query.x` or `body.x` equal to the caller's identifier) or to a
 *   manager of the team named by a path parameter (`orTeamManager`).
 */
export type RouteAccess = 'public' | 'authenticated' | PermissionAccess;

export interface PermissionAccess {
  permission: string;
  orSelf?: `${'params' | 'query' | 'body'}.${string}`;
  orTeamManager?: string;
}

export const COMMON_CAPABILITIES: readonly Capability[] = ['webra', 'events', 'configuration'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route: the onRoute hook refuses a route without it. */
    capability?: RouteCapability;
    /** Required on every route: `public`, or the permission the authorizer checks. */
    access?: RouteAccess;
    /**
     * The code a body or parameter that fails the route's JSON Schema is answered with (its collection's
     * `-002`, as the configuration registry answers invalid input), instead of the generic HTTP-003.
     */
    invalidCode?: string;
  }
  interface FastifyRequest {
    /** The request-scoped tenant (one `default` tenant until the tenants API lands). */
    tenant: string;
  }
}
