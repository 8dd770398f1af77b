import { createHash } from 'node:crypto';
import type { EgressPolicy, IdentityProvider, PluginContext, Principal } from '@certwright/sdk';
import * as oidc from 'openid-client';
import { groupClaim, stringClaim, type ClaimMapping } from './claims.js';
import { egressFetch } from './egress-fetch.js';

export interface OidcConfig {
  issuer?: string;
  metadata?: Record<string, unknown> & { issuer: string };
  clientId: string;
  /** Name of a credential (raw: its secret; password: its password). */
  clientSecret: string;
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  scopes?: string[];
  claims?: Partial<ClaimMapping>;
  roleMap?: Record<string, string>;
  teamMap?: Record<string, string>;
  allowedAlgorithms?: string[];
  userinfo?: boolean;
  allowHttp?: boolean;
  allowPrivateNetworks?: boolean;
  timeoutMs?: number;
}

/** Discovered metadata is read again after this long (a provider may move endpoints or add keys). */
const METADATA_TTL_MS = 60 * 60_000;
/** Discovery, JWKS and token answers are small; this leaves room for large key sets. */
const MAX_RESPONSE_BYTES = 512 * 1024;

type Ctx = Pick<PluginContext, 'http' | 'credentials' | 'kv' | 'clock' | 'logger'>;

/** What the platform keeps of a principal between logins, for sessions (lookup): its name and email. */
interface Profile {
  name?: string;
  email?: string;
}

/** One `oidc` identity provider instance: discovery cached, the client secret read from its credential at each use. */
export function oidcProvider(ctx: Ctx, instanceName: string, config: OidcConfig): IdentityProvider {
  const mapping: ClaimMapping = {
    identifier: config.claims?.identifier ?? 'sub',
    name: config.claims?.name ?? 'name',
    email: config.claims?.email ?? 'email',
    ...(config.claims?.roles !== undefined ? { roles: config.claims.roles } : {}),
    ...(config.claims?.teams !== undefined ? { teams: config.claims.teams } : {}),
  };
  const scopes = config.scopes ?? ['openid', 'email', 'profile'];
  const scope = (scopes.includes('openid') ? scopes : ['openid', ...scopes]).join(' ');
  const timeoutMs = config.timeoutMs ?? 10_000;
  const policy: Partial<EgressPolicy> = {
    allowHttp: config.allowHttp === true,
    allowPrivateNetworks: config.allowPrivateNetworks === true,
    timeoutMs,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  };
  const fetch = egressFetch(ctx.http, policy);
  const profileKey = (tenant: string, identifier: string): string =>
    `profile:${createHash('sha256').update(`${tenant}\u0000${instanceName}\u0000${identifier}`).digest('base64url')}`;

  let discovered: { at: number; metadata: oidc.ServerMetadata } | undefined;
  let discovering: Promise<oidc.ServerMetadata> | undefined;
  let jwksCache: oidc.ExportedJWKSCache | undefined;

  const prepare = (c: oidc.Configuration): oidc.Configuration => {
    c[oidc.customFetch] = fetch;
    c.timeout = Math.ceil(timeoutMs / 1000);
    if (config.allowHttp === true) oidc.allowInsecureRequests(c);
    if (jwksCache) oidc.setJwksCache(c, jwksCache);
    return c;
  };

  async function serverMetadata(): Promise<oidc.ServerMetadata> {
    if (config.metadata) return config.metadata as oidc.ServerMetadata;
    if (discovered && ctx.clock.now() - discovered.at < METADATA_TTL_MS) return discovered.metadata;
    discovering ??= (async () => {
      try {
        const found = await oidc.discovery(new URL(config.issuer!), config.clientId, undefined, oidc.None(), {
          [oidc.customFetch]: fetch,
          timeout: Math.ceil(timeoutMs / 1000),
          ...(config.allowHttp === true ? { execute: [oidc.allowInsecureRequests] } : {}),
        });
        const metadata = found.serverMetadata();
        discovered = { at: ctx.clock.now(), metadata };
        return metadata;
      } finally {
        discovering = undefined;
      }
    })();
    return discovering;
  }

  async function clientSecret(tenant: string): Promise<string> {
    for (const kind of ['raw', 'password'] as const) {
      try {
        const credential = await ctx.credentials.resolve(config.clientSecret, { kind, target: 'identity-provider', tenant });
        const secret = kind === 'raw' ? credential.secret : credential.password;
        if (secret) return secret;
      } catch (err) {
        if (kind === 'password') throw err;
      }
    }
    throw new Error(`credential ${config.clientSecret} holds no secret`);
  }

  async function configuration(secret?: string): Promise<oidc.Configuration> {
    const auth =
      secret === undefined ? oidc.None() : config.tokenEndpointAuthMethod === 'client_secret_post' ? oidc.ClientSecretPost(secret) : oidc.ClientSecretBasic(secret);
    const only = config.allowedAlgorithms?.length === 1 ? { id_token_signed_response_alg: config.allowedAlgorithms[0]! } : {};
    return prepare(new oidc.Configuration(await serverMetadata(), config.clientId, { ...only }, auth));
  }

  const algorithmOf = (jwt: string | undefined): string | undefined => {
    if (!jwt) return undefined;
    try {
      return (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: unknown }).alg as string | undefined;
    } catch {
      return undefined;
    }
  };

  const principalOf = (tenant: string, identifier: string, profile: Profile): Principal => ({
    identifier,
    ...(profile.name !== undefined ? { name: profile.name } : {}),
    ...(profile.email !== undefined ? { email: profile.email } : {}),
    identityProviderName: instanceName,
    identityProviderType: 'oidc',
    tenant,
  });

  return {
    // Only the browser flow logs in through this provider: no header proves anything to it.
    async authenticate() {
      return null;
    },

    /**
     * A session opened by this provider coming back: the provider cannot be asked about the user without them,
     * so the name and email are those of the last login (kept in the plugin's store).
     */
    async lookup(identifier, tenant) {
      const profile = (await ctx.kv.get<Profile>(profileKey(tenant, identifier))) ?? {};
      return principalOf(tenant, identifier, profile);
    },

    interactive: {
      async start({ callbackUrl }) {
        const codeVerifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        const url = oidc.buildAuthorizationUrl(await configuration(), {
          redirect_uri: callbackUrl,
          scope,
          response_type: 'code',
          code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        });
        return { redirectUrl: url.href, state: { codeVerifier, state, nonce } };
      },

      async finish({ tenant, callbackUrl, callbackQuery, state }) {
        const { codeVerifier, state: expectedState, nonce } = state;
        if (!codeVerifier || !expectedState || !nonce) return null;
        const config_ = await configuration(await clientSecret(tenant));
        const current = new URL(callbackUrl);
        for (const [k, v] of Object.entries(callbackQuery)) current.searchParams.set(k, v);
        // Checks the state, the issuer (RFC 9207 `iss` when sent), exchanges the code with the PKCE verifier, and
        // validates the ID token: signature against the provider's JWKS, iss, aud, exp/iat, nonce.
        const tokens = await oidc.authorizationCodeGrant(config_, current, {
          pkceCodeVerifier: codeVerifier,
          expectedState,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
        jwksCache = oidc.getJwksCache(config_) ?? jwksCache;
        const alg = algorithmOf(tokens.id_token);
        if (config.allowedAlgorithms && (alg === undefined || !config.allowedAlgorithms.includes(alg))) {
          throw new Error(`ID token signed with ${alg ?? 'no algorithm'}, not one of allowedAlgorithms`);
        }
        const idClaims = tokens.claims();
        if (!idClaims) throw new Error('no ID token in the token response');
        let claims: Record<string, unknown> = { ...idClaims };
        if (config.userinfo === true) {
          const info = await oidc.fetchUserInfo(config_, tokens.access_token, idClaims.sub);
          // The ID token's own claims win where both say something (it is signed); userinfo adds the rest.
          claims = { ...info, ...idClaims };
        }
        const identifier = stringClaim(claims, mapping.identifier);
        if (identifier === undefined) throw new Error(`the claim "${mapping.identifier}" (the identifier) is missing`);
        const profile: Profile = {};
        const name = stringClaim(claims, mapping.name);
        const email = stringClaim(claims, mapping.email);
        if (name !== undefined) profile.name = name;
        if (email !== undefined) profile.email = email;
        await ctx.kv.set(profileKey(tenant, identifier), profile);
        return {
          ...principalOf(tenant, identifier, profile),
          ...(mapping.roles !== undefined ? { roles: groupClaim(claims, mapping.roles, config.roleMap) } : {}),
          ...(mapping.teams !== undefined ? { teams: groupClaim(claims, mapping.teams, config.teamMap) } : {}),
        };
      },
    },
  };
}
