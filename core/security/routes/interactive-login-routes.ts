import type { Principal } from '@certwright/sdk';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { parseCookie } from 'cookie';
import { ProblemError } from '../../errors/index.js';
import type { EventStore } from '../../events/store.js';
import type { PrincipalResolver } from '../principals/resolver.js';
import { syncClaimMemberships } from '../providers/claim-memberships.js';
import type { ActiveProvider, IdentityProviderService } from '../providers/service.js';
import type { InvalidationScope } from '../route-context.js';
import type { SessionCookies } from './session-routes.js';

export interface InteractiveLoginOptions {
  providers: IdentityProviderService;
  resolver: PrincipalResolver;
  /** The master key's AES-256-GCM box (SecretBox): seals the login state kept in the browser. */
  secrets: { seal(plaintext: string, aad?: string): string; openString(sealed: string, aad?: string): string };
  knex: Knex;
  events: EventStore;
  clock: () => number;
  invalidate: (scope?: InvalidationScope) => void;
  cookies: SessionCookies;
}

const BASE = '/api/v1/security/identity/providers';
const tags = ['security'];
/** The login state between /login and /callback: sealed, HttpOnly, only sent to the callback path. */
export const LOGIN_STATE_COOKIE = 'certwright-login-state';
/** How long a browser has to come back from the provider. */
export const LOGIN_STATE_TTL_MS = 10 * 60_000;
const MAX_RETURN_TO = 2048;

/** What the state cookie holds, sealed (the provider's own state `s` included: PKCE verifier, nonce, state). */
interface LoginState {
  /** Provider name and tenant (also bound by the seal's associated data). */
  p: string;
  t: string;
  /** Expiry, epoch ms. */
  exp: number;
  /** The callback URL given to `start`: `finish` must exchange the code with the same redirect_uri. */
  cb: string;
  /** Where the browser goes after the login: a same-origin path. */
  rt: string;
  s: Record<string, string>;
}

const nameParams = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;
const stateAad = (tenant: string, name: string): string => `login-state:${tenant}:${name}`;
const callbackPath = (name: string): string => `${BASE}/${encodeURIComponent(name)}/callback`;

/**
 * A `returnTo` the browser may be sent to: a path on this origin only. Refused: absolute URLs, scheme-relative
 * `//host` and its backslash spellings (browsers read `/\host` as `//host`), and control characters (a tab or a
 * newline inside `/\t/host` is dropped by URL parsers). An open redirect would let a phishing link borrow the
 * platform's login.
 */
export function safeReturnTo(value: string | undefined): string | null {
  if (value === undefined || value === '') return '/';
  if (value.length > MAX_RETURN_TO || !value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return null;
  const base = 'http://certwright.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return null;
  }
  return url.origin === base ? value : null;
}

/**
 * The interactive login of a provider that has one (SDK 1.10 InteractiveLogin: OpenID Connect):
 *
 * - GET …/providers/:name/login asks the provider where to send the browser, keeps what the provider must
 *   remember (PKCE verifier, state, nonce) sealed under the master key in a short-lived HttpOnly SameSite=Lax
 *   cookie that only the callback path receives, and answers 302 to the provider. Lax: the provider brings the
 *   browser back with a top-level GET, which carries Lax cookies; no other site can make it send the cookie on
 *   a sub-request. Nothing is stored on the server, so any node can serve the callback.
 * - GET …/providers/:name/callback opens that state, lets the provider check the answer (`finish`), grants
 *   the memberships the claims name (claim-memberships.ts), opens a session exactly as /authenticate does
 *   (PLAY_SESSION + csrf-token), writes SEC-LOGIN-SUCCESS, and answers 302 to the `returnTo` given to /login.
 *   Any failure is a 401 problem (SEC-AUTH-002, SEC-AUTH-003 when the state is missing or too old, SEC-AUTH-005
 *   for a disabled principal) and a SEC-LOGIN-FAILURE event, the cause in the technical log only.
 *
 * Unknown, disabled and non-interactive providers are 404 SEC-IDP-003 on both routes.
 */
export async function interactiveLoginRoutes(app: FastifyInstance, opts: InteractiveLoginOptions): Promise<void> {
  const { providers, secrets, cookies } = opts;

  const interactiveProvider = async (request: FastifyRequest, name: string): Promise<ActiveProvider & { provider: Required<Pick<ActiveProvider['provider'], 'interactive'>> }> => {
    const active = await providers.byName(request.tenant, name);
    if (!active?.provider.interactive) throw new ProblemError('SEC-IDP-003', { message: `No enabled identity provider named "${name}" logs in through the browser` });
    return active as ActiveProvider & { provider: Required<Pick<ActiveProvider['provider'], 'interactive'>> };
  };

  /*
   * The callback URL the provider sends the browser back to, from the request's own protocol and host: behind a
   * reverse proxy, fastify's trustProxy (server.trustProxy) makes them the client-facing ones (X-Forwarded-Proto,
   * X-Forwarded-Host) only when the proxy is trusted. A forged Host cannot redirect a login elsewhere: the route
   * answers only on hosts allowed the `common` capability, and the provider accepts only the redirect URIs
   * registered for the client. The URL goes into the sealed state, so /callback exchanges the code with exactly it.
   */
  const callbackUrl = (request: FastifyRequest, name: string): string => `${request.protocol}://${request.host}${callbackPath(name)}`;

  const clearState = (reply: FastifyReply, name: string): void =>
    cookies.set(reply, [{ name: LOGIN_STATE_COOKIE, value: '', httpOnly: true, maxAge: 0, path: callbackPath(name) }]);

  app.get<{ Params: { name: string }; Querystring: { returnTo?: string } }>(`${BASE}/:name/login`, {
    // Public: this is where a login begins.
    config: { capability: 'common', access: 'public' },
    schema: {
      tags,
      summary: 'Start a browser login with an identity provider (OpenID Connect): 302 to the provider',
      params: nameParams,
      querystring: {
        type: 'object',
        properties: { returnTo: { type: 'string', maxLength: MAX_RETURN_TO, description: 'A path on this origin to land on after the login (default /)' } },
      },
      response: { 302: { type: 'null', description: 'To the provider; sets the sealed login-state cookie' } },
    },
    handler: async (request, reply) => {
      const { name } = request.params;
      const returnTo = safeReturnTo(request.query.returnTo);
      if (returnTo === null) throw new ProblemError('HTTP-003', { message: 'returnTo must be a path on this origin (starting with a single /)' });
      const active = await interactiveProvider(request, name);
      const cb = callbackUrl(request, name);
      let started: { redirectUrl: string; state: Record<string, string> };
      try {
        started = await active.provider.interactive.start({ tenant: request.tenant, callbackUrl: cb });
      } catch (err) {
        request.log.warn({ provider: name, err }, 'identity provider could not start a login');
        throw new ProblemError('SRV-002', { message: 'The identity provider cannot be reached now: try again later' });
      }
      const state: LoginState = { p: name, t: request.tenant, exp: opts.clock() + LOGIN_STATE_TTL_MS, cb, rt: returnTo, s: started.state };
      cookies.set(reply, [
        {
          name: LOGIN_STATE_COOKIE,
          value: secrets.seal(JSON.stringify(state), stateAad(request.tenant, name)),
          httpOnly: true,
          maxAge: Math.floor(LOGIN_STATE_TTL_MS / 1000),
          path: callbackPath(name),
        },
      ]);
      return reply.header('cache-control', 'no-store').redirect(started.redirectUrl, 302);
    },
  });

  app.get<{ Params: { name: string }; Querystring: Record<string, string> }>(`${BASE}/:name/callback`, {
    // Public: the browser comes back from the provider with nothing but the sealed state and the provider's answer.
    config: { capability: 'common', access: 'public' },
    schema: {
      tags,
      summary: 'Where the identity provider sends the browser back: opens the session (PLAY_SESSION) and answers 302 to returnTo',
      params: nameParams,
      querystring: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 } },
      response: { 302: { type: 'null', description: 'Logged in: sets PLAY_SESSION and csrf-token' } },
    },
    handler: async (request, reply) => {
      const { name } = request.params;
      const tenant = request.tenant;
      /** The login's event (an audit record: a failure to write it is logged, never the login's failure). */
      const loginEvent = async (code: 'SEC-LOGIN-SUCCESS' | 'SEC-LOGIN-FAILURE', principal: string | null, payload: Record<string, unknown>): Promise<void> => {
        try {
          await opts.events.append({
            tenant,
            code,
            module: 'security',
            status: code === 'SEC-LOGIN-SUCCESS' ? 'success' : 'failure',
            principal,
            objectType: 'principal',
            objectId: principal,
            payload: { method: 'interactive', address: request.ip, ...payload },
          });
        } catch (err) {
          request.log.error({ err, code }, 'could not record the login event');
        }
      };
      // Whatever happens now, the state is spent.
      clearState(reply, name);
      const fail = async (code: 'SEC-AUTH-002' | 'SEC-AUTH-003' | 'SEC-AUTH-005' | 'SEC-IDP-003', reason: string, err?: unknown, identifier?: string): Promise<never> => {
        // What the browser or its user got wrong (a stale or forged state) is routine; a provider refusing the
        // platform (a wrong client secret, a bad token, a provider down) is what an operator needs to see.
        const level = reason === 'refused-by-provider' ? 'warn' : 'info';
        request.log[level]({ provider: name, reason, ...(err !== undefined ? { err } : {}), address: request.ip }, 'interactive login failed');
        await loginEvent('SEC-LOGIN-FAILURE', identifier ?? null, { provider: name, reason, route: request.routeOptions.url ?? request.url });
        if (code === 'SEC-IDP-003') throw new ProblemError(code, { message: `No enabled identity provider named "${name}" logs in through the browser` });
        if (code === 'SEC-AUTH-003') throw new ProblemError(code, { message: 'The login was not started here or took too long: start it again' });
        throw new ProblemError(code);
      };

      let active: Awaited<ReturnType<typeof interactiveProvider>>;
      try {
        active = await interactiveProvider(request, name);
      } catch (err) {
        if (err instanceof ProblemError) return fail('SEC-IDP-003', 'unknown-provider');
        throw err;
      }

      const sealed = request.headers.cookie ? parseCookie(request.headers.cookie)[LOGIN_STATE_COOKIE] : undefined;
      if (!sealed) return fail('SEC-AUTH-003', 'state-missing');
      let state: LoginState;
      try {
        state = JSON.parse(secrets.openString(sealed, stateAad(tenant, name))) as LoginState;
      } catch (err) {
        return fail('SEC-AUTH-002', 'state-invalid', err);
      }
      if (state.p !== name || state.t !== tenant || typeof state.s !== 'object' || state.s === null) return fail('SEC-AUTH-002', 'state-invalid');
      if (!(state.exp > opts.clock())) return fail('SEC-AUTH-003', 'state-expired');
      const returnTo = safeReturnTo(state.rt) ?? '/';

      let principal: Principal | null;
      try {
        principal = await active.provider.interactive.finish({ tenant, callbackUrl: state.cb, callbackQuery: { ...request.query }, state: state.s });
      } catch (err) {
        return fail('SEC-AUTH-002', 'refused-by-provider', err);
      }
      if (!principal) return fail('SEC-AUTH-002', 'no-principal');
      const identifier = principal.identifier;
      if (typeof identifier !== 'string' || identifier.length === 0 || identifier.length > 191) return fail('SEC-AUTH-002', 'bad-identifier');

      const identity = { identifier, name: principal.name ?? null, email: principal.email ?? null, tenant, identityProviderName: active.name, identityProviderType: active.type };
      let change;
      try {
        change = await syncClaimMemberships(opts.knex, request.log, { tenant, identifier, providerName: active.name }, { roles: principal.roles, teams: principal.teams });
      } finally {
        opts.invalidate({ tenant, identifier });
      }
      try {
        // A principal information that says `enabled: false` refuses the login, whatever the provider vouched for.
        await opts.resolver.resolve(identity);
      } catch (err) {
        if (err instanceof ProblemError && err.code === 'SEC-AUTH-005') return fail('SEC-AUTH-005', 'principal-disabled', undefined, identifier);
        throw err;
      }

      await cookies.open(reply, { identifier, tenant, identityProviderName: active.name, identityProviderType: active.type });
      await loginEvent('SEC-LOGIN-SUCCESS', identifier, {
        provider: active.name,
        rolesAdded: change.added.roles,
        rolesRemoved: change.removed.roles,
        teamsAdded: change.added.teams,
        teamsRemoved: change.removed.teams,
      });
      return reply.header('cache-control', 'no-store').redirect(returnTo, 302);
    },
  });
}
