import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import type { Authenticator } from './auth/authenticator.js';
import type { LoginThrottle } from './auth/throttle.js';
import type { PasswordHasher } from './passwords/hasher.js';
import type { PasswordPolicyService } from './password-policies/service.js';
import type { PrincipalResolver } from './principals/resolver.js';
import type { IdentityProviderService } from './providers/service.js';
import type { LocalIdentityRepository } from './store/local-identities.js';

export type InvalidationScope = 'principals' | { tenant: string; identifier: string };

/** What every security route module receives (registered by SecurityCore.registerRoutes). */
export interface SecurityRouteContext {
  knex: Knex;
  clock: () => number;
  events: EventStore;
  logger: Logger;
  hasher: PasswordHasher;
  identities: LocalIdentityRepository;
  resolver: PrincipalResolver;
  providers: IdentityProviderService;
  authenticator: Authenticator;
  passwordPolicies: PasswordPolicyService;
  /** Brute-force counters: a wrong current password counts as a failed login of its identifier. */
  throttle: LoginThrottle;
  /**
   * Call after every write that changes who may do what, so the next request on this node sees it:
   * - no scope: identities or providers changed (secrets, enabled flags, removals) — drops the
   *   verified-key, session and principal caches;
   * - 'principals': permissions, roles, teams or memberships changed — drops resolved principals only
   *   (verified keys stay: they do not carry permissions);
   * - one principal: only its own data changed (preferences) — drops that principal only, so a user
   *   cannot make every API-key caller on the node pay argon2id again.
   */
  invalidate: (scope?: InvalidationScope) => void;
}
