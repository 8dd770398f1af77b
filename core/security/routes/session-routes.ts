import { acceptsExactlyJson, varyOnAccept } from '../../http/accept.js';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Authenticator } from '../auth/authenticator.js';
import { CSRF_COOKIE, SESSION_COOKIE, type SessionTokens } from '../auth/session.js';
import type { PrincipalResolver } from '../principals/resolver.js';
import { localizedTextSchema, selfSchema, selfView } from '../principals/view.js';

export interface SessionRouteOptions {
  resolver: PrincipalResolver;
  authenticator: Authenticator;
  sessions: SessionTokens;
  lifetimeMs: number;
  secureCookies: 'auto' | 'always' | 'never';
}

const tags = ['security'];
const COMMON = 'common' as const;

/**
 * GET /api/v1/security/principals/self, /authenticate (the login: sets PLAY_SESSION and csrf-token),
 * /logout (ends the session everywhere and clears both cookies), and GET /api/v1/security/csrf (the
 * token to echo, for clients that lost the cookie).
 */
export async function sessionRoutes(app: FastifyInstance, opts: SessionRouteOptions): Promise<void> {
  const { resolver, authenticator, sessions } = opts;
  app.addSchema(localizedTextSchema);
  app.addSchema(selfSchema);

  const secure = (request: FastifyRequest): boolean => (opts.secureCookies === 'auto' ? request.protocol === 'https' : opts.secureCookies === 'always');
  const setCookies = (reply: FastifyReply, cookies: { name: string; value: string; httpOnly: boolean; maxAge: number }[]): void => {
    reply.header(
      'set-cookie',
      cookies.map((c) => stringifySetCookie({ ...c, path: '/', sameSite: 'lax', secure: secure(reply.request) })),
    );
  };

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
      const { token, claims } = await sessions.issue({
        identifier: p.identifier,
        tenant: p.tenant,
        identityProviderName: p.identityProviderName,
        identityProviderType: p.identityProviderType,
      });
      const maxAge = Math.floor(opts.lifetimeMs / 1000);
      setCookies(reply, [
        { name: SESSION_COOKIE, value: token, httpOnly: true, maxAge },
        // Readable by the page's script, which echoes it in the csrf-token header.
        { name: CSRF_COOKIE, value: sessions.csrfTokenFor(claims.jti), httpOnly: false, maxAge },
      ]);
      varyOnAccept(reply);
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
}
