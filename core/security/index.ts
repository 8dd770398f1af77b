import type { LocalAccountsFacade } from '@certwright/sdk';
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { CertwrightConfig } from '../config/index.js';
import type { EventStore } from '../events/store.js';
import type { Authorizer } from '../http/access.js';
import type { ProvidedServices } from '../plugins/provided.js';
import type { SecretBox } from '../secrets/index.js';
import { Authenticator } from './auth/authenticator.js';
import { SessionTokens } from './auth/session.js';
import { LoginThrottle } from './auth/throttle.js';
import { ensureInitialAdministrator } from './bootstrap.js';
import { PasswordHasher } from './passwords/hasher.js';
import { PrincipalResolver } from './principals/resolver.js';
import { IdentityProviderService } from './providers/service.js';
import { sessionRoutes } from './routes/session-routes.js';
import { raTeamRoutes } from './groups/ra-team-routes.js';
import { roleRoutes } from './groups/role-routes.js';
import { teamRoutes } from './groups/team-routes.js';
import { localIdentityRoutes } from './locals/routes.js';
import { passwordPolicyRoutes } from './password-policies/routes.js';
import { passwordPolicyType } from './password-policies/config-type.js';
import { roleType } from './groups/role-config-type.js';
import { RoleStore } from './groups/role-store.js';
import { teamType } from './groups/team-config-type.js';
import { TeamStore } from './groups/team-store.js';
import { PasswordPolicyRepository } from './password-policies/repository.js';
import type { ConfigObjectType } from '@certwright/sdk';
import { PasswordPolicyService } from './password-policies/service.js';
import { principalDataRoutes } from './principal-data/routes.js';
import { principalInfoRoutes } from './principal-infos/routes.js';
import { identityProviderRoutes } from './providers/routes.js';
import { identityProviderType } from './providers/config-type.js';
import type { InvalidationScope, SecurityRouteContext } from './route-context.js';
import { LocalIdentityRepository } from './store/local-identities.js';
import { scimProfileType } from './scim/profile-type.js';
import { scimRoutes } from './scim/routes.js';
import type { PluginManifest } from '@certwright/sdk';
import type { ConfigRegistry } from '../config-objects/index.js';
import type { ProxyRouter } from '../egress/index.js';
import { serviceAccountType, type ServiceAccount } from './service-accounts/config-type.js';
import { ServiceAccountVerifier } from './service-accounts/verifier.js';
import { PopNonces } from './pop/nonces.js';

export interface SecurityDeps {
  config: CertwrightConfig;
  knex: Knex;
  secrets: SecretBox;
  events: EventStore;
  logger: Logger;
  clock: () => number;
  provided: ProvidedServices;
  manifestOf: (pluginId: string) => PluginManifest | undefined;
  /** The configuration registry (service accounts live there) and the egress proxies (their JWKS URLs). */
  configObjects: ConfigRegistry;
  proxies: ProxyRouter;
}

/**
 * The security core (DESIGN.md §3): local identities, identity providers, principals, sessions, CSRF,
 * throttling and the authorizer every route goes through. Built before plugins load (identity-provider
 * plugins get the local accounts facade), routes registered with the other core routes, the first
 * administrator created once plugins have registered their provider types.
 */
export class SecurityCore {
  readonly hasher: PasswordHasher;
  readonly identities: LocalIdentityRepository;
  readonly resolver: PrincipalResolver;
  readonly providers: IdentityProviderService;
  readonly sessions: SessionTokens;
  readonly throttle: LoginThrottle;
  readonly authenticator: Authenticator;
  readonly passwordPolicies: PasswordPolicyService;
  readonly serviceAccounts: ServiceAccountVerifier;

  constructor(private readonly deps: SecurityDeps) {
    const { config, knex, clock, logger } = deps;
    const s = config.security;
    this.hasher = new PasswordHasher(s.argon2);
    this.identities = new LocalIdentityRepository(knex, clock);
    this.resolver = new PrincipalResolver(knex, { ttlMs: s.cacheTtlMs, maxEntries: s.cacheMaxEntries });
    this.providers = new IdentityProviderService({
      knex,
      registry: deps.provided.identityProviders,
      manifestOf: deps.manifestOf,
      logger: logger.child({ component: 'identity-providers' }),
      clock,
      refreshMs: s.cacheTtlMs,
      onChange: () => this.invalidate(),
      secrets: deps.secrets,
    });
    this.passwordPolicies = new PasswordPolicyService(knex, clock);
    this.sessions = new SessionTokens(deps.secrets.deriveKey('session-signing'), s.session.lifetimeMs, clock);
    this.throttle = new LoginThrottle(knex, s.throttle, clock);
    this.serviceAccounts = new ServiceAccountVerifier({
      find: async (tenant, name) => (await deps.configObjects.resolve('service-account', tenant, name)) as unknown as ServiceAccount | null,
      routeFor: (url, tenant) => deps.proxies.routeFor(url, tenant),
      resolver: this.resolver,
      logger: logger.child({ component: 'service-accounts' }),
      clock,
      cacheTtlMs: s.cacheTtlMs,
      cacheMaxEntries: s.cacheMaxEntries,
      jwksRefreshCooldownMs: s.serviceAccounts.jwksRefreshCooldownMs,
    });
    // A changed account or role applies from the next request on this node.
    deps.configObjects.onChange('service-account', () => this.serviceAccounts.invalidate());
    deps.configObjects.onChange('role', () => this.serviceAccounts.invalidate());
    this.authenticator = new Authenticator({
      knex,
      providers: this.providers,
      resolver: this.resolver,
      sessions: this.sessions,
      throttle: this.throttle,
      events: deps.events,
      logger,
      clock,
      cacheTtlMs: s.cacheTtlMs,
      cacheMaxEntries: s.cacheMaxEntries,
      isTeamManager: (principal, team) => principal.teams.some((t) => t.name === team && t.manager),
      serviceAccounts: this.serviceAccounts,
      popNonces: new PopNonces(knex, clock),
    });
  }

  get authorizer(): Authorizer {
    return this.authenticator;
  }

  /** After a security change on this node (see SecurityRouteContext.invalidate for the scopes). */
  invalidate(scope?: InvalidationScope): void {
    if (scope === undefined) this.authenticator.invalidate();
    else if (scope === 'principals') this.resolver.invalidate();
    else this.resolver.forget(scope.tenant, scope.identifier);
  }

  /** What identity-provider plugins get as `ctx.localAccounts`. */
  localAccounts(): LocalAccountsFacade {
    const view = (i: { identifier: string; name: string | null; email: string | null; secretChangedAt: number | null }) => ({
      identifier: i.identifier,
      ...(i.name ? { name: i.name } : {}),
      ...(i.email ? { email: i.email } : {}),
      ...(i.secretChangedAt !== null ? { secretChangedAt: i.secretChangedAt } : {}),
    });
    return {
      verify: async (tenant, identifier, secret, context) => {
        const check = async () => {
          const credential = await this.identities.credentialOf(tenant, identifier);
          const ok = await this.hasher.verify(credential?.enabled ? credential.hash : null, secret);
          return ok && credential ? view(credential.identity) : null;
        };
        // An identity provider runs inside a login, which throttles and caches already; a protocol's own
        // Basic check (context given) gets the same protection here.
        return context ? this.authenticator.verifyLocalSecret(tenant, identifier, secret, context.remoteAddress, check) : check();
      },
      find: async (tenant, identifier) => {
        const identity = await this.identities.find(tenant, identifier);
        return identity?.enabled ? view(identity) : null;
      },
    };
  }

  async registerRoutes(app: FastifyInstance): Promise<void> {
    app.decorateRequest('principal', null);
    app.decorateRequest('authMethod', null);
    app.decorateRequest('session', null);
    const s = this.deps.config.security;
    await app.register(sessionRoutes, {
      resolver: this.resolver,
      authenticator: this.authenticator,
      sessions: this.sessions,
      lifetimeMs: s.session.lifetimeMs,
      secureCookies: s.session.secureCookies,
      providers: this.providers,
      secrets: this.deps.secrets,
      knex: this.deps.knex,
      events: this.deps.events,
      clock: this.deps.clock,
      invalidate: (scope) => this.invalidate(scope),
    });
    const ctx: SecurityRouteContext = {
      knex: this.deps.knex,
      clock: this.deps.clock,
      events: this.deps.events,
      logger: this.deps.logger,
      hasher: this.hasher,
      identities: this.identities,
      resolver: this.resolver,
      providers: this.providers,
      authenticator: this.authenticator,
      passwordPolicies: this.passwordPolicies,
      throttle: this.throttle,
      invalidate: (scope) => this.invalidate(scope),
    };
    for (const routes of [
      localIdentityRoutes,
      identityProviderRoutes,
      passwordPolicyRoutes,
      principalInfoRoutes,
      roleRoutes,
      teamRoutes,
      raTeamRoutes,
      principalDataRoutes,
      scimRoutes,
    ]) {
      await app.register(routes, ctx);
    }
  }

  /** The security collections on the configuration registry (core/config-objects); identity providers keep their routes. */
  configTypes(): ConfigObjectType[] {
    const { knex, clock } = this.deps;
    // A role or team change applies to principals from the next request (as recordChange did).
    const invalidatePrincipals = (): void => this.invalidate('principals');
    return [
      passwordPolicyType((db) => new PasswordPolicyRepository(db, clock)),
      roleType(new RoleStore(knex, clock), invalidatePrincipals),
      teamType(new TeamStore(knex, clock), invalidatePrincipals),
      identityProviderType(this.providers),
      serviceAccountType(),
      scimProfileType,
    ];
  }

  /** First start: the `local` identity provider and the `administrator` account. */
  async bootstrap(tenant: string): Promise<void> {
    await this.providers.ensureDefault(tenant);
    await this.passwordPolicies.ensureDefault(tenant);
    await ensureInitialAdministrator(tenant, this.deps.config.security.adminSecret, {
      knex: this.deps.knex,
      identities: this.identities,
      hasher: this.hasher,
      logger: this.deps.logger,
      dataDir: this.deps.config.dataDir,
      clock: this.deps.clock,
    });
  }
}
