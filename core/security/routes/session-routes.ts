import { acceptsExactlyJson, varyOnAccept } from '../../http/accept.js';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Knex } from 'knex';
import type { EventStore } from '../../events/store.js';
import type { Authenticator } from '../auth/authenticator.js';
import { CSRF_COOKIE, SESSION_COOKIE, type SessionTokens } from '../auth/session.js';
import type { PrincipalResolver } from '../principals/resolver.js';
import { localizedTextSchema, selfSchema, selfView } from '../principals/view.js';
import type { IdentityProviderService } from '../providers/service.js';
import type { InvalidationScope } from '../route-context.js';
import { interactiveLoginRoutes } from './interactive-login-routes.js';

export interface SessionRouteOptions {
  resolver: PrincipalResolver;
  authenticator: Authenticator;
  sessions: SessionTokens;
  lifetimeMs: number;
  secureCookies: 'auto' | 'always' | 'never';
  /** For the interactive logins (interactive-login-routes.ts): providers, the master key's box, memberships, events. */
  providers: IdentityProviderService;
  secrets: { seal(plaintext: string, aad?: string): string; openString(sealed: string, aad?: string): string };
  knex: Knex;
  events: EventStore;
  clock: () => number;
  invalidate: (scope?: InvalidationScope) => void;
}

export interface CookieToSet {
  name: string;
  value: string;
  httpOnly: boolean;
  maxAge: number;
  /** Default `/`. */
  path?: string;
}

/** What a login route needs to open a session: the cookies /authenticate sets, written one way. */
export interface SessionCookies {
  /** Sets cookies (SameSite=Lax, Secure per security.session.secureCookies) on the reply. */
  set(reply: FastifyReply, cookies: CookieToSet[]): void;
  /** Issues a session for the principal and sets PLAY_SESSION (HttpOnly) and csrf-token (readable by the page). */
  open(reply: FastifyReply, who: { identifier: string; tenant: string; identityProviderName: string; identityProviderType: string }): Promise<void>;
}

/** The session cookies of /authenticate, shared with the interactive login's callback. */
export function sessionCookies(opts: Pick<SessionRouteOptions, 'sessions' | 'lifetimeMs' | 'secureCookies'>): SessionCookies {
  const secure = (request: FastifyRequest): boolean => (opts.secureCookies === 'auto' ? request.protocol === 'https' : opts.secureCookies === 'always');
  const set = (reply: FastifyReply, cookies: CookieToSet[]): void => {
    reply.header(
      'set-cookie',
      cookies.map(({ path, ...c }) => stringifySetCookie({ ...c, path: path ?? '/', sameSite: 'lax', secure: secure(reply.request) })),
    );
  };
  return {
    set,
    async open(reply, who) {
      const { token, claims } = await opts.sessions.issue(who);
      const maxAge = Math.floor(opts.lifetimeMs / 1000);
      set(reply, [
        { name: SESSION_COOKIE, value: token, httpOnly: true, maxAge },
        // Readable by the page's script, which echoes it in the csrf-token header.
        { name: CSRF_COOKIE, value: opts.sessions.csrfTokenFor(claims.jti), httpOnly: false, maxAge },
      ]);
    },
  };
}

const tags = ['security'];
const COMMON = 'common' as const;

/**
 * GET /api/v1/security/principals/self, /authenticate (the login: sets PLAY_SESSION and csrf-token),
 * /logout (ends the session everywhere and clears both cookies), GET /api/v1/security/csrf (the
 * token to echo, for clients that lost the cookie), and the interactive logins' /login and /callback.
 */
export async function sessionRoutes(app: FastifyInstance, opts: SessionRouteOptions): Promise<void> {
  const { resolver, authenticator, sessions } = opts;
  app.addSchema(localizedTextSchema);
  app.addSchema(selfSchema);

  const cookies = sessionCookies(opts);
  const setCookies = cookies.set;

  const dashboardsOf = (request: FastifyRequest): Promise<Record<string, unknown>[]> =>
    resolver.dashboards(request.principal!.tenant, request.principal!.identifier);

  app.get('/api/v1/security/principals/self', {
    config: { capability: COMMON, access: 'authenticated' },
    schema: { tags, summary: 'The authenticated principal: identity, permissions, roles, teams, preferences', response: { 200: { $ref: 'PrincipalSelf#' } } },
    handler: async (request, reply) => {
      varyOnAccept(reply);
      return selfView(request.principal!, await dashboardsOf(request), acceptsExactlyJson(request.headers.accept));
    },
  });

  app.get('/api/v1/security/principals/authenticate', {
    config: { capability: COMMON, access: 'authenticated' },
    schema: {
      tags,
      summary: 'Log in: checks the credentials and sets the PLAY_SESSION and csrf-token cookies',
      response: { 200: { $ref: 'PrincipalSelf#' } },
    },
    handler: async (request, reply) => {
      const p = request.principal!;
      varyOnAccept(reply);
      // Spec "Authentication" rule 2: a service account's JWT opens no session; it is shown on every call.
      if (request.authMethod === 'service-account') return selfView(p, await dashboardsOf(request), acceptsExactlyJson(request.headers.accept));
      await cookies.open(reply, {
        identifier: p.identifier,
        tenant: p.tenant,
        identityProviderName: p.identityProviderName,
        identityProviderType: p.identityProviderType,
      });
      return selfView(p, await dashboardsOf(request), acceptsExactlyJson(request.headers.accept));
    },
  });

  app.get('/api/v1/security/principals/logout', {
    config: { capability: COMMON, access: 'public' },
    schema: { tags, summary: 'Log out: ends the session on every node and clears the session cookies', response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      const token = request.headers.cookie ? parseCookie(request.headers.cookie)[SESSION_COOKIE] : undefined;
      if (token !== undefined) {
        const claims = await sessions.verify(token);
        if (claims !== null && claims !== 'expired') await authenticator.revoke(claims);
      }
      setCookies(reply, [
        { name: SESSION_COOKIE, value: '', httpOnly: true, maxAge: 0 },
        { name: CSRF_COOKIE, value: '', httpOnly: false, maxAge: 0 },
      ]);
      return reply.code(204).send();
    },
  });

  app.get('/api/v1/security/csrf', {
    config: { capability: COMMON, access: 'authenticated' },
    schema: {
      tags,
      summary: 'The csrf-token to echo on state-changing requests (also set as the csrf-token cookie)',
      response: { 200: { type: 'object', required: ['token', 'csrfToken'], properties: { token: { type: 'string' }, csrfToken: { type: 'string' } } } },
    },
    handler: async (request, reply) => {
      const token = request.session ? sessions.csrfTokenFor(request.session.jti) : randomBytes(24).toString('base64url');
      setCookies(reply, [{ name: CSRF_COOKIE, value: token, httpOnly: false, maxAge: Math.floor(opts.lifetimeMs / 1000) }]);
      return { token, csrfToken: token };
    },
  });

  // GET /api/v1/security/identity/providers/:name/login and /callback (OpenID Connect and other browser logins).
  await interactiveLoginRoutes(app, {
    providers: opts.providers,
    resolver,
    secrets: opts.secrets,
    knex: opts.knex,
    events: opts.events,
    clock: opts.clock,
    invalidate: opts.invalidate,
    cookies,
  });
}
