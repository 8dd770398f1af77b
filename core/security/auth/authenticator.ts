import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { parseCookie } from 'cookie';
import type { EventStore } from '../../events/store.js';
import { ProblemError } from '../../errors/index.js';
import type { Authorizer } from '../../http/access.js';
import type { RouteAccess } from '../../http/route-config.js';
import type { PrincipalIdentity, PrincipalResolver, ResolvedPrincipal } from '../principals/resolver.js';
import type { IdentityProviderService } from '../providers/service.js';
import { CSRF_COOKIE, CSRF_HEADER, safeEqual, SESSION_COOKIE, type SessionClaims, type SessionTokens } from './session.js';
import type { LoginThrottle, ThrottleKey } from './throttle.js';

export type AuthMethod = 'api-key' | 'basic' | 'session' | 'provider';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authorizer on every non-public route. */
    principal: ResolvedPrincipal | null;
    authMethod: AuthMethod | null;
    /** The session the request came with (cookie), for logout. */
    session: SessionClaims | null;
  }
}

export interface AuthenticatorDeps {
  knex: Knex;
  providers: IdentityProviderService;
  resolver: PrincipalResolver;
  sessions: SessionTokens;
  throttle: LoginThrottle;
  events: EventStore;
  logger: Logger;
  clock: () => number;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  /** Whether the team named `team` lists the principal as a manager. */
  isTeamManager: (principal: ResolvedPrincipal, team: string) => boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const MAX_SECRET = 1024;

const one = (v: string | string[] | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

function retryAfter(ms: number): ProblemError {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return new ProblemError('SEC-RATE-001', { message: `Too many failed logins: retry in ${seconds} s`, headers: { 'retry-after': String(seconds) } });
}

/**
 * Authentication and authorization of every non-public route (the kernel's single Authorizer):
 *
 * - X-API-ID + X-API-KEY (or HTTP Basic) are asked of each enabled identity provider; a verified pair
 *   is remembered, keyed by an HMAC of the pair under a per-process random key (the secret itself is
 *   never kept), so later calls skip argon2id.
 * - A PLAY_SESSION cookie (set by /authenticate) is checked for its signature, expiry, revocation and
 *   provider, and the principal must still exist.
 * - Failed credential logins are throttled per (identifier, client address) and per client address, and
 *   written as events; many failures of one identifier from anywhere raise an alert event, never a lock.
 * - CSRF (spec "Authentication", rules 4–8): a state-changing request carrying a Cookie or an
 *   Authorization header must echo the csrf-token cookie in the csrf-token header.
 * - Then the route's declared access: `authenticated`, or a permission (optionally also granted to the
 *   principal itself or to a team's manager).
 */
export class Authenticator implements Authorizer {
  private readonly keyCache: LRUCache<string, { providerName: string; identity: PrincipalIdentity }> | null;
  private readonly sessionCache: LRUCache<string, PrincipalIdentity> | null;
  /** Verified session tokens (the whole token is the key: a MAC alone could be grafted on another payload). */
  private readonly tokenCache: LRUCache<string, SessionClaims> | null;
  private readonly cacheKey = randomBytes(32);

  constructor(private readonly deps: AuthenticatorDeps) {
    const options = { max: deps.cacheMaxEntries, ttl: deps.cacheTtlMs };
    this.keyCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
    this.sessionCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
    this.tokenCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
  }

  /** Drops every cached key, session and principal (after a security change on this node). */
  invalidate(): void {
    this.keyCache?.clear();
    this.sessionCache?.clear();
    this.tokenCache?.clear();
    this.deps.resolver.invalidate();
  }

  async authorize(request: FastifyRequest, access: Exclude<RouteAccess, 'public'>): Promise<void> {
    let principal = request.principal;
    if (!principal) {
      principal = await this.authenticate(request);
      request.principal = principal;
      this.checkCsrf(request);
    }
    if (access === 'authenticated') return;
    if (principal.permissions.allows(access.permission)) return;
    if (access.orSelf !== undefined && this.isSelf(request, principal, access.orSelf)) return;
    if (access.orTeamManager !== undefined) {
      const team = (request.params as Record<string, string | undefined>)[access.orTeamManager];
      if (team !== undefined && this.deps.isTeamManager(principal, team)) return;
    }
    throw new ProblemError('SEC-PERM-001', { message: `This operation requires the permission ${access.permission}` });
  }

  /** Who the request proves to be; throws 401 (SEC-AUTH-00x) or 429 (SEC-RATE-001). */
  async authenticate(request: FastifyRequest): Promise<ResolvedPrincipal> {
    const headers = request.headers;
    const tenant = request.tenant;
    const apiId = one(headers['x-api-id']);
    const apiKey = one(headers['x-api-key']);
    if (apiId !== undefined || apiKey !== undefined) {
      if (!apiId || !apiKey) throw new ProblemError('SEC-AUTH-002');
      return this.credentialLogin(request, tenant, apiId, apiKey, 'api-key');
    }
    const authorization = one(headers.authorization);
    if (authorization !== undefined && /^basic /i.test(authorization)) {
      const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon <= 0) throw new ProblemError('SEC-AUTH-002');
      return this.credentialLogin(request, tenant, decoded.slice(0, colon), decoded.slice(colon + 1), 'basic');
    }
    const token = this.cookies(request)[SESSION_COOKIE];
    if (token !== undefined) return this.sessionLogin(request, token);
    return this.providerLogin(request, tenant);
  }

  private async credentialLogin(request: FastifyRequest, tenant: string, identifier: string, secret: string, method: AuthMethod): Promise<ResolvedPrincipal> {
    if (identifier.length > 191 || secret.length > MAX_SECRET) throw new ProblemError('SEC-AUTH-002');
    const keys: ThrottleKey[] = [
      { kind: 'pair', tenant, identifier, address: request.ip },
      { kind: 'address', value: request.ip },
    ];
    const cacheKey = this.keyCache ? createHmac('sha256', this.cacheKey).update(`${tenant}\u0000${identifier}\u0000${secret}`).digest('base64') : '';
    const cached = this.keyCache?.get(cacheKey);
    if (cached) {
      const wait = this.deps.throttle.lockedInMemory(keys);
      if (wait > 0) throw retryAfter(wait);
      if (await this.deps.providers.byName(tenant, cached.providerName)) {
        request.authMethod = method;
        return this.deps.resolver.resolve(cached.identity);
      }
      this.keyCache!.delete(cacheKey);
    }
    const wait = await this.deps.throttle.locked(keys);
    if (wait > 0) throw retryAfter(wait);

    const found = await this.askProviders(request, tenant);
    if (!found) {
      await this.deps.throttle.recordFailure(keys);
      await this.failed(request, tenant, identifier, method);
      await this.alertIfTargeted(request, tenant, identifier);
      throw new ProblemError('SEC-AUTH-002');
    }
    if (found.identity.identifier === identifier) await this.deps.throttle.reset(keys[0]!);
    this.keyCache?.set(cacheKey, found);
    request.authMethod = method;
    return this.deps.resolver.resolve(found.identity);
  }

  /** Credentials other than a key or a session (certificates, provider-specific headers). */
  private async providerLogin(request: FastifyRequest, tenant: string): Promise<ResolvedPrincipal> {
    const found = await this.askProviders(request, tenant);
    if (!found) {
      const hasCredentials = request.headers.authorization !== undefined || request.headers.cookie !== undefined;
      throw new ProblemError(hasCredentials ? 'SEC-AUTH-002' : 'SEC-AUTH-001');
    }
    request.authMethod = 'provider';
    return this.deps.resolver.resolve(found.identity);
  }

  private async askProviders(request: FastifyRequest, tenant: string): Promise<{ providerName: string; identity: PrincipalIdentity } | null> {
    const input = { headers: request.headers, tenant, remoteAddress: request.ip };
    for (const active of await this.deps.providers.enabled(tenant)) {
      try {
        const principal = await active.provider.authenticate(input);
        if (principal) {
          return {
            providerName: active.name,
            identity: {
              identifier: principal.identifier,
              name: principal.name ?? null,
              email: principal.email ?? null,
              tenant,
              identityProviderName: active.name,
              identityProviderType: active.type,
            },
          };
        }
      } catch (err) {
        request.log.warn({ provider: active.name, err }, 'identity provider failed while authenticating; treated as no match');
      }
    }
    return null;
  }

  private async sessionLogin(request: FastifyRequest, token: string): Promise<ResolvedPrincipal> {
    let claims: SessionClaims | 'expired' | null | undefined = this.tokenCache?.get(token);
    if (claims !== undefined && claims.expiresAt <= this.deps.clock()) {
      this.tokenCache!.delete(token);
      claims = 'expired';
    }
    if (claims === undefined) {
      claims = await this.deps.sessions.verify(token);
      if (claims !== null && claims !== 'expired') this.tokenCache?.set(token, claims);
    }
    if (claims === 'expired') throw new ProblemError('SEC-AUTH-003');
    if (claims === null || claims.tenant !== request.tenant) throw new ProblemError('SEC-AUTH-002');
    let identity = this.sessionCache?.get(claims.jti);
    if (!identity) {
      const revoked = await this.deps.knex('security_revoked_sessions').where({ jti: claims.jti }).first();
      if (revoked) throw new ProblemError('SEC-AUTH-003', { message: 'The session has ended (logged out), authenticate again' });
      const active = await this.deps.providers.byName(claims.tenant, claims.identityProviderName);
      if (!active) throw new ProblemError('SEC-AUTH-004');
      let name: string | null = null;
      let email: string | null = null;
      if (active.provider.lookup) {
        const current = await active.provider.lookup(claims.identifier, claims.tenant);
        if (!current) throw new ProblemError('SEC-AUTH-005');
        if (current.credentialsChangedAt !== undefined && current.credentialsChangedAt > claims.issuedAt) {
          throw new ProblemError('SEC-AUTH-003', { message: 'The credentials changed after this session began, authenticate again' });
        }
        name = current.name ?? null;
        email = current.email ?? null;
      }
      identity = { identifier: claims.identifier, name, email, tenant: claims.tenant, identityProviderName: active.name, identityProviderType: active.type };
      this.sessionCache?.set(claims.jti, identity);
    }
    request.session = claims;
    request.authMethod = 'session';
    return this.deps.resolver.resolve(identity);
  }

  /** Ends a session everywhere: its token id is refused until the token would have expired anyway. */
  async revoke(claims: SessionClaims): Promise<void> {
    this.sessionCache?.delete(claims.jti);
    this.tokenCache?.clear();
    await this.deps.knex('security_revoked_sessions').insert({ jti: claims.jti, expires_at: claims.expiresAt }).onConflict('jti').ignore();
    // Housekeeping: forget revocations of tokens that have expired by now.
    await this.deps.knex('security_revoked_sessions').where('expires_at', '<', this.deps.clock()).delete();
  }

  /** Spec "Authentication" rules 4–8. */
  private checkCsrf(request: FastifyRequest): void {
    if (SAFE_METHODS.has(request.method)) return;
    const { cookie, authorization } = request.headers;
    if (cookie === undefined && authorization === undefined) return;
    const header = one(request.headers[CSRF_HEADER]);
    const expected = this.cookies(request)[CSRF_COOKIE];
    const ok =
      header !== undefined &&
      expected !== undefined &&
      safeEqual(header, expected) &&
      (request.session === null || safeEqual(header, this.deps.sessions.csrfTokenFor(request.session.jti)));
    if (!ok) throw new ProblemError('SEC-AUTH-002');
  }

  private isSelf(request: FastifyRequest, principal: ResolvedPrincipal, where: string): boolean {
    const [source, field] = where.split('.') as ['params' | 'body' | 'query', string];
    const bag = (request[source] ?? {}) as Record<string, unknown>;
    return bag[field] === principal.identifier;
  }

  private cookies(request: FastifyRequest): Record<string, string | undefined> {
    const header = request.headers.cookie;
    return header ? parseCookie(header) : {};
  }

  /** Many failures for one identifier (from any address): an alert event, since locking it would lock out its owner. */
  private async alertIfTargeted(request: FastifyRequest, tenant: string, identifier: string): Promise<void> {
    try {
      const { alert, failures } = await this.deps.throttle.identifierFailureAlert(tenant, identifier);
      if (!alert) return;
      request.log.warn({ identifier, failures }, 'many failed logins for one identifier');
      await this.deps.events.append({ tenant, code: 'SEC-LOGIN-TARGETED', module: 'security', status: 'failure', principal: identifier, objectType: 'principal', objectId: identifier, payload: { failures, address: request.ip } });
    } catch (err) {
      request.log.error({ err }, 'could not record the login alert');
    }
  }

  private async failed(request: FastifyRequest, tenant: string, identifier: string, method: AuthMethod): Promise<void> {
    request.log.info({ identifier, method, address: request.ip }, 'login failed');
    try {
      await this.deps.events.append({
        tenant,
        code: 'SEC-LOGIN-FAILURE',
        module: 'security',
        status: 'failure',
        principal: identifier,
        objectType: 'principal',
        objectId: identifier,
        payload: { method, address: request.ip, route: request.routeOptions.url ?? request.url },
      });
    } catch (err) {
      request.log.error({ err }, 'could not record the failed login event');
    }
  }
}
