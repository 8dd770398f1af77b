import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import type { Authenticator } from './auth/authenticator.js';
import type { PasswordHasher } from './passwords/hasher.js';
import type { PasswordPolicyService } from './password-policies/service.js';
import type { PrincipalResolver } from './principals/resolver.js';
import type { IdentityProviderService } from './providers/service.js';
import type { LocalIdentityRepository } from './store/local-identities.js';

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
  /**
   * Call after every write to identities, principal information, memberships, roles, teams or
   * providers: this node's key, session and principal caches are dropped at once.
   */
  invalidate: () => void;
}
