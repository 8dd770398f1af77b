import { createHash } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { ProxyRoute } from '../../egress/index.js';
import { fetchThrough } from '../../egress/index.js';
import type { Permission } from '../permissions/permission-set.js';
import type { PrincipalResolver, ResolvedPrincipal } from '../principals/resolver.js';
import { SERVICE_ACCOUNT_ALGORITHMS, type ServiceAccount } from './config-type.js';

export const SERVICE_ACCOUNT_PROVIDER = 'service-accounts';
export const SERVICE_ACCOUNT_TYPE = 'jwks';

/** Why a token was refused: for the technical log only (spec "Authentication" rule 3). */
export class TokenRefused extends Error {}

export interface ServiceAccountVerifierDeps {
  /** The account with its fields, or null when there is none of that name. */
  find(tenant: string, name: string): Promise<ServiceAccount | null>;
  /** The proxy for a JWKS URL (undefined: direct). */
  routeFor(url: URL, tenant: string): Promise<ProxyRoute | undefined>;
  resolver: PrincipalResolver;
  logger: Logger;
  clock: () => number;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  /** At most one JWKS fetch per URL within this delay, however many unknown kids arrive. */
  jwksRefreshCooldownMs: number;
}

const REMOTE_OPTIONS = { cacheMaxAge: 10 * 60_000, timeoutDuration: 5_000 };
const MAX_TOKEN = 16 * 1024;

/** `*` matches any run of characters, everything else literally. */
function globMatches(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
  return re.test(value);
}

function claimMatches(expected: string | number | boolean, actual: unknown): boolean {
  if (typeof expected === 'string') return typeof actual === 'string' && globMatches(expected, actual);
  return actual === expected;
}

/**
 * Verifies service-account JWTs: the signature against the account's JWKS (static keys, or a URL fetched with
 * jose's remote key set through the egress proxies), then the claim rules, then builds the principal from the
 * account's own permissions and roles. A verified token is remembered until it expires (at most the security
 * cache period), so a busy workload pays one signature check per token, not per request.
 */
export class ServiceAccountVerifier {
  private readonly keySets = new Map<string, JWTVerifyGetKey>();
  private readonly verified: LRUCache<string, ResolvedPrincipal> | null;

  constructor(private readonly deps: ServiceAccountVerifierDeps) {
    this.verified = deps.cacheTtlMs > 0 ? new LRUCache({ max: deps.cacheMaxEntries, ttl: deps.cacheTtlMs }) : null;
  }

  /** After a change of service accounts or roles. */
  invalidate(): void {
    this.verified?.clear();
    this.keySets.clear();
  }

  /** The principal the token proves for account `name`; throws TokenRefused with the reason. */
  async verify(tenant: string, name: string, token: string): Promise<ResolvedPrincipal> {
    if (token.length > MAX_TOKEN) throw new TokenRefused('token longer than 16 KiB');
    const key = createHash('sha256').update(`${tenant}\u0000${name}\u0000${token}`).digest('base64');
    const cached = this.verified?.get(key);
    if (cached) return cached;

    const account = await this.deps.find(tenant, name);
    if (!account) throw new TokenRefused('no such service account');
    if (!account.enabled) throw new TokenRefused('service account disabled');
    const payload = await this.checkToken(tenant, account, token);
    const principal = await this.deps.resolver.compose(
      { identifier: account.name, tenant, identityProviderName: SERVICE_ACCOUNT_PROVIDER, identityProviderType: SERVICE_ACCOUNT_TYPE, name: account.description ?? null, email: null },
      (account.permissions ?? []) as Permission[],
      account.roles ?? [],
    );
    const untilExpiry = (payload.exp ?? 0) * 1000 - this.deps.clock();
    if (untilExpiry > 0) this.verified?.set(key, principal, { ttl: Math.min(untilExpiry, this.deps.cacheTtlMs) });
    return principal;
  }

  private async checkToken(tenant: string, account: ServiceAccount, token: string): Promise<JWTPayload> {
    const options = {
      issuer: account.issuer,
      audience: account.audience,
      algorithms: account.algorithms ?? [...SERVICE_ACCOUNT_ALGORITHMS],
      requiredClaims: ['exp', ...(account.maxTokenAgeSeconds ? ['iat'] : [])],
      ...(account.maxTokenAgeSeconds ? { maxTokenAge: account.maxTokenAgeSeconds } : {}),
      currentDate: new Date(this.deps.clock()),
      clockTolerance: 30,
    };
    let payload: JWTPayload | null = null;
    let lastKeyError: unknown = null;
    for (const [i, source] of account.jwks.entries()) {
      try {
        payload = (await jwtVerify(token, this.keySet(tenant, account, i, source), options)).payload;
        break;
      } catch (err) {
        // Another source may hold the key; any other failure (claims, expiry, malformed) is the token's.
        if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWSSignatureVerificationFailed) {
          lastKeyError = err;
          continue;
        }
        throw new TokenRefused(describe(err));
      }
    }
    if (!payload) throw new TokenRefused(describe(lastKeyError));
    if (account.subjects?.length && !account.subjects.some((p) => typeof payload!.sub === 'string' && globMatches(p, payload!.sub))) {
      throw new TokenRefused(`subject "${String(payload.sub)}" matches no subject pattern`);
    }
    for (const [claim, accepted] of Object.entries(account.requiredClaims ?? {})) {
      const values = Array.isArray(accepted) ? accepted : [accepted];
      if (!values.some((v) => claimMatches(v, payload![claim]))) throw new TokenRefused(`claim "${claim}" does not have an accepted value`);
    }
    return payload;
  }

  private keySet(tenant: string, account: ServiceAccount, index: number, source: ServiceAccount['jwks'][number]): JWTVerifyGetKey {
    const id = `${tenant}\u0000${account.name}\u0000${index}\u0000${source.url ?? JSON.stringify(source.keys)}`;
    let set = this.keySets.get(id);
    if (!set) {
      if (source.url) {
        const url = new URL(source.url);
        set = createRemoteJWKSet(url, {
          ...REMOTE_OPTIONS,
          // A token with an unknown kid fetches the JWKS again (key rotation), at most once per cooldown per
          // URL: a flood of made-up kids cannot turn into a flood of requests to the issuer.
          cooldownDuration: this.deps.jwksRefreshCooldownMs,
          // Through the HTTP proxy the administrator set for that destination, like every outbound call.
          [customFetch]: async (target: string, init: RequestInit) => {
            const route = await this.deps.routeFor(new URL(target), tenant);
            return route ? fetchThrough(route, target, init) : fetch(target, init);
          },
        });
      } else {
        set = createLocalJWKSet({ keys: source.keys ?? [] });
      }
      this.keySets.set(id, set);
    }
    return set;
  }
}

function describe(err: unknown): string {
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
