import { createHmac, randomBytes } from 'node:crypto';
import { CredentialsRefusedError } from '@certwright/sdk';
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
import { TokenRefused, type ServiceAccountVerifier } from '../service-accounts/verifier.js';
import type { PopNonces } from '../pop/nonces.js';
import { ProofRefused, verifyProof } from '../pop/proof.js';
import { PermissionSet } from '../permissions/permission-set.js';

/** `service-account`: a JWKS service account's JWT, shown on every request (never a session, spec rule 2). */
/** `pop`: a proof of possession of a certificate's key (X-JWT-CERT-POP), for the holder's own certificate only. */
export type AuthMethod = 'api-key' | 'basic' | 'session' | 'provider' | 'service-account' | 'pop';

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
  /** JWKS service accounts (X-API-SVA). */
  serviceAccounts: ServiceAccountVerifier;
  /** Replay-Nonce values of proofs of possession. */
  popNonces: PopNonces;
}

/** The only routes a proof of possession opens: a holder renews, revokes or updates its own certificate there. */
const POP_ROUTES = new Set(['POST /api/v1/requests/submit', 'POST /api/v1/requests/template', 'GET /api/v1/automation/lifecycle/:policy/verify']);
/** Who a proof of possession logs in as: the holder of the certificate whose SHA-1 thumbprint follows. */
export const POP_PROVIDER = 'proof-of-possession';
export const popIdentifier = (thumbprint: string): string => `pop:${thumbprint}`;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The client certificate of the TLS connection (the HTTPS listener requests one and lets the identity providers
 * judge it), as PEM; undefined over plain HTTP or when the client sent none. Memoised on the request.
 */
const peerPems = new WeakMap<FastifyRequest, string | null>();
export function peerCertificatePem(request: FastifyRequest): string | undefined {
  let pem = peerPems.get(request);
  if (pem === undefined) {
    const socket = request.raw.socket as { getPeerCertificate?: (detailed?: boolean) => { raw?: Buffer } | null };
    const raw = socket.getPeerCertificate?.(false)?.raw;
    pem = raw && raw.length > 0 ? `-----BEGIN CERTIFICATE-----\n${raw.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n` : null;
    peerPems.set(request, pem);
  }
  return pem ?? undefined;
}
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
  /** Local-account secrets verified for plugins (verifyLocalSecret). */
  private readonly localCache: LRUCache<string, object> | null;

  constructor(private readonly deps: AuthenticatorDeps) {
    const options = { max: deps.cacheMaxEntries, ttl: deps.cacheTtlMs };
    this.keyCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
    this.sessionCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
    this.tokenCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
    this.localCache = deps.cacheTtlMs > 0 ? new LRUCache(options) : null;
  }

  /** Drops every cached key, session and principal (after a security change on this node). */
  invalidate(): void {
    this.keyCache?.clear();
    this.sessionCache?.clear();
    this.tokenCache?.clear();
    this.localCache?.clear();
    this.deps.serviceAccounts.invalidate();
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
    const serviceAccount = one(headers['x-api-sva']);
    if (serviceAccount !== undefined) return this.serviceAccountLogin(request, tenant, serviceAccount);
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
    const proof = one(headers['x-jwt-cert-pop']);
    if (proof !== undefined) return this.popLogin(request, tenant, proof);
    const token = this.cookies(request)[SESSION_COOKIE];
    if (token !== undefined) return this.sessionLogin(request, token);
    return this.providerLogin(request, tenant);
  }

  /**
   * A JWKS service account: X-API-SVA names it, the JWT comes in X-API-TOKEN or as a Bearer token. Spec
   * "Authentication" rules 2 and 3: no session, and a refusal says nothing of its cause — the cause goes to
   * the technical log only, never to the events.
   */
  private async serviceAccountLogin(request: FastifyRequest, tenant: string, name: string): Promise<ResolvedPrincipal> {
    const authorization = one(request.headers.authorization);
    const token = one(request.headers['x-api-token']) ?? (authorization && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : undefined);
    try {
      if (!name || !token) throw new TokenRefused('no token (X-API-TOKEN or Authorization: Bearer)');
      const principal = await this.deps.serviceAccounts.verify(tenant, name, token);
      request.authMethod = 'service-account';
      return principal;
    } catch (err) {
      if (!(err instanceof TokenRefused)) request.log.error({ err, serviceAccount: name }, 'service account verification failed');
      else request.log.info({ serviceAccount: name, address: request.ip, reason: err.message }, 'service account token refused');
      throw new ProblemError('SEC-AUTH-007');
    }
  }

  /**
   * Proof of possession (client-compat §1): a JWT signed by the key of the certificate in its `sub`, carrying a
   * nonce this service handed out. Without a valid proof with an unused nonce: 401 `proof required` with a
   * fresh Replay-Nonce (the clients' pre-flight and retry); never a Replay-Nonce on any other answer. The
   * principal holds no permission: the request workflows let it act on that certificate alone, where the
   * profile grants `holder:pop`.
   */
  private async popLogin(request: FastifyRequest, tenant: string, jwt: string): Promise<ResolvedPrincipal> {
    if (!POP_ROUTES.has(`${request.method} ${request.routeOptions.url ?? ''}`)) throw new ProblemError('SEC-AUTH-009', { message: 'A proof of possession is accepted for the holder\'s own requests only (POST /api/v1/requests/submit)' });
    let reason: string;
    try {
      const { certificate, nonce } = await verifyProof(jwt, this.deps.clock());
      if (nonce === null) reason = 'no nonce';
      else if (!(await this.deps.popNonces.consume(tenant, nonce))) reason = 'nonce unknown, expired or already used';
      else {
        request.authMethod = 'pop';
        const own: never[] = [];
        return {
          identifier: popIdentifier(certificate.thumbprint),
          name: certificate.dn,
          email: null,
          tenant,
          identityProviderName: POP_PROVIDER,
          identityProviderType: 'pop',
          permissions: new PermissionSet(own),
          ownPermissions: own,
          roles: [],
          teams: [],
          preferences: {},
        };
      }
    } catch (err) {
      if (!(err instanceof ProofRefused)) request.log.error({ err }, 'proof of possession could not be checked');
      reason = err instanceof Error ? err.message : String(err);
    }
    request.log.info({ address: request.ip, reason }, 'proof of possession refused');
    throw new ProblemError('SEC-AUTH-008', { headers: { 'replay-nonce': await this.deps.popNonces.issue(tenant), 'cache-control': 'no-store' } });
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

  /**
   * A local account's secret presented to a plugin (ctx.localAccounts.verify: EST HTTP Basic, an SCEP admin page):
   * the same throttle per (identifier, address) and per address as a login, and the same verified-secret cache,
   * so a protocol is no side door for guessing secrets and a device does not pay argon2id on every request.
   * Null when throttled or wrong.
   */
  async verifyLocalSecret<T>(tenant: string, identifier: string, secret: string, address: string | undefined, verify: () => Promise<T | null>): Promise<T | null> {
    if (identifier.length > 191 || secret.length > MAX_SECRET) return null;
    const where = address ?? 'plugin';
    const keys: ThrottleKey[] = [
      { kind: 'pair', tenant, identifier, address: where },
      { kind: 'address', value: where },
    ];
    const cacheKey = this.localCache ? createHmac('sha256', this.cacheKey).update(`local\u0000${tenant}\u0000${identifier}\u0000${secret}`).digest('base64') : '';
    const cached = this.localCache?.get(cacheKey) as T | undefined;
    if (cached !== undefined) return this.deps.throttle.lockedInMemory(keys) > 0 ? null : cached;
    if ((await this.deps.throttle.locked(keys)) > 0) return null;
    const found = await verify();
    if (found === null) {
      await this.deps.throttle.recordFailure(keys);
      return null;
    }
    await this.deps.throttle.reset(keys[0]!);
    this.localCache?.set(cacheKey, found as object);
    return found;
  }

  /** Credentials other than a key or a session (certificates, provider-specific headers). */
  private async providerLogin(request: FastifyRequest, tenant: string): Promise<ResolvedPrincipal> {
    let refused = false;
    const found = await this.askProviders(request, tenant, () => (refused = true));
    if (!found) {
      // Credentials a provider recognised and refused, or a client certificate no provider accepted (the provider
      // wrote the failure event with its reason).
      if (refused || peerCertificatePem(request) !== undefined) throw new ProblemError('SEC-AUTH-006');
      const hasCredentials = request.headers.authorization !== undefined || request.headers.cookie !== undefined;
      throw new ProblemError(hasCredentials ? 'SEC-AUTH-002' : 'SEC-AUTH-001');
    }
    request.authMethod = 'provider';
    return this.deps.resolver.resolve(found.identity);
  }

  private async askProviders(request: FastifyRequest, tenant: string, onRefused?: () => void): Promise<{ providerName: string; identity: PrincipalIdentity } | null> {
    const clientCertificatePem = peerCertificatePem(request);
    const connectionAddress = request.raw.socket.remoteAddress;
    const input = { headers: request.headers, tenant, remoteAddress: request.ip, ...(connectionAddress ? { connectionAddress } : {}), ...(clientCertificatePem ? { clientCertificatePem } : {}) };
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
        if (err instanceof CredentialsRefusedError || (err as Error | null)?.name === 'CredentialsRefusedError') onRefused?.();
        else request.log.warn({ provider: active.name, err }, 'identity provider failed while authenticating; treated as no match');
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
    // A Bearer service-account token is no ambient credential (a browser never sends one by itself, unlike
    // cookies and cached Basic credentials): CSRF cannot ride on it, and the workload has no cookie to echo.
    if (request.authMethod === 'service-account' && cookie === undefined) return;
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
