/**
 * The ACME routes of the spec's list, on the scope the kernel gates to capability `acme`. Every answer
 * carries Replay-Nonce (but the directory) and Link rel="index"; errors are RFC 8555 problem documents.
 */
import type { EnrollmentFacade, PluginLogger, ProtocolProfile, RouteScope } from '@certwright/sdk';
import type { NonceStore } from './nonces.js';
import { AcmeProblem } from './problems.js';
import type { AcmeServer, Call } from './server.js';

const JOSE = 'application/jose+json';
const tags = ['ACME'];
/** A JWS body: a key-change's nested JWS is the largest legitimate one, a few KiB. */
const BODY_LIMIT = 64 * 1024;

interface Reply {
  code(status: number): Reply;
  header(name: string, value: string | string[]): Reply;
  type(value: string): Reply;
  send(body?: unknown): unknown;
}
interface Req {
  params: Record<string, string>;
  body?: unknown;
  method: string;
  protocol: string;
  hostname: string;
  headers: Record<string, string | string[] | undefined>;
  url: string;
}

export function registerAcmeRoutes(scope: RouteScope, deps: { server: AcmeServer; nonces: NonceStore; enrollment: EnrollmentFacade; logger: PluginLogger }): void {
  const { server, nonces, enrollment, logger } = deps;

  // JWS bodies (and, leniently, JSON-labelled ones: problems come from the JWS checks, not the media type).
  scope.addContentTypeParser(JOSE, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));

  const baseOf = (req: Req): string => {
    const host = typeof req.headers.host === 'string' ? req.headers.host : req.hostname;
    return `${req.protocol}://${host}`;
  };

  /** The profile of the URL, when ACME is enabled on it; otherwise 404 (as any unknown URL). */
  const callOf = async (req: Req): Promise<Call> => {
    const name = req.params.profile ?? '';
    const profile: ProtocolProfile | null = await enrollment.profile('acme', name);
    if (!profile) throw new AcmeProblem('malformed', `No ACME directory for profile ${name.slice(0, 191)}`, { status: 404 });
    const base = baseOf(req);
    return { base, profile, url: `${base}${req.url.split('?')[0]}` };
  };

  const withNonce = async (reply: Reply, call: Call | null): Promise<void> => {
    reply.header('replay-nonce', await nonces.issue());
    reply.header('cache-control', 'no-store');
    if (call) reply.header('link', `<${server.urls(call).directory}>;rel="index"`);
  };

  const problem = async (reply: Reply, call: Call | null, err: unknown): Promise<unknown> => {
    const p = err instanceof AcmeProblem ? err : null;
    if (!p) logger.error({ err }, 'ACME request failed');
    const answer = p ?? new AcmeProblem('serverInternal', 'The server could not answer this request');
    await withNonce(reply, call);
    for (const [k, v] of Object.entries(answer.extra.headers ?? {})) reply.header(k, v);
    return reply.code(answer.status).type('application/problem+json').send(JSON.stringify(answer.document()));
  };

  /** Runs a handler with the profile resolved; every failure becomes a problem document. */
  const handle =
    (fn: (req: Req, reply: Reply, call: Call) => Promise<unknown>) =>
    async (req: Req, reply: Reply): Promise<unknown> => {
      let call: Call | null = null;
      try {
        call = await callOf(req);
        if (req.method === 'POST' && !String(req.headers['content-type'] ?? '').toLowerCase().startsWith(JOSE)) {
          throw new AcmeProblem('malformed', `ACME requests are ${JOSE}`, { status: 415 });
        }
        await withNonce(reply, call);
        return await fn(req, reply, call);
      } catch (err) {
        return problem(reply, call, err);
      }
    };

  const json = (reply: Reply, status: number, body: unknown, location?: string): unknown => {
    if (location) reply.header('location', location);
    return reply.code(status).type('application/json').send(JSON.stringify(body));
  };
  /** POST-as-GET or GET: the body only for POST. */
  const bodyOf = (req: Req): unknown => (req.method === 'POST' ? (req.body ?? '') : undefined);

  const route = (method: string | string[], url: string, summary: string, handler: (req: Req, reply: Reply) => Promise<unknown>) =>
    scope.route({ method, url, schema: { tags, summary }, config: { access: 'public' }, handler: handler as (request: unknown, reply: unknown) => unknown });

  // RFC 8555 §6.3: the directory and newNonce answer GET and POST-as-GET alike (the body is not needed).
  route(['GET', 'POST'], '/acme/:profile/directory', 'ACME directory (RFC 8555 §7.1.1)', handle(async (_req, reply, call) => json(reply, 200, await server.directory(call))));

  route('GET', '/acme/:profile/renewal-info/:certId', 'ACME Renewal Information: the suggested renewal window (RFC 9773)', handle(async (req, reply, call) => {
    reply.header('retry-after', '21600');
    return json(reply, 200, await server.renewalInfo(call, req.params.certId!));
  }));

  route(['GET', 'HEAD', 'POST'], '/acme/:profile/new-nonce', 'A fresh replay nonce (RFC 8555 §7.2)', handle(async (req, reply) => reply.code(req.method === 'HEAD' ? 200 : 204).send()));

  route('POST', '/acme/:profile/new-acct', 'Create or find an account (RFC 8555 §7.3)', handle(async (req, reply, call) => {
    const out = await server.newAccount(call, req.body);
    return json(reply, out.status, out.body, out.location);
  }));

  route('POST', '/acme/acct/:profile/:accountId', 'Read, update or deactivate an account (RFC 8555 §7.3.2, §7.3.6)', handle(async (req, reply, call) => {
    const body = await server.updateAccount(call, req.params.accountId!, req.body);
    return json(reply, 200, body, server.urls(call).account(req.params.accountId!));
  }));

  // Any other resource under an account URL (the spec's `*restUri`): none exists, answered as ACME answers it.
  route('POST', '/acme/acct/:profile/:accountId/*', 'No other resource lives under an account (404 malformed)', handle(async () => {
    throw new AcmeProblem('malformed', 'No such resource under this account', { status: 404 });
  }));

  route('POST', '/acme/:profile/key-change', 'Roll over the account key (RFC 8555 §7.3.5)', handle(async (req, reply, call) => json(reply, 200, await server.keyChange(call, req.body))));

  route(['GET', 'POST'], '/acme/acct/:profile/:accountId/orders', "The account's orders (RFC 8555 §7.1.2.1)", handle(async (req, reply, call) => {
    if (req.method === 'GET') throw new AcmeProblem('malformed', 'Use POST-as-GET', { status: 405 });
    return json(reply, 200, await server.ordersOf(call, req.params.accountId!, req.body));
  }));

  route('POST', '/acme/:profile/new-order', 'Apply for a certificate (RFC 8555 §7.4)', handle(async (req, reply, call) => {
    const out = await server.newOrder(call, req.body);
    return json(reply, 201, out.body, out.location);
  }));

  route(['GET', 'POST'], '/acme/order/:profile/:orderId', 'An order (POST-as-GET)', handle(async (req, reply, call) => {
    const order = await server.getOrder(call, req.params.orderId!, bodyOf(req));
    if (order.status === 'processing') reply.header('retry-after', '2');
    return json(reply, 200, server.orderView(order, call));
  }));

  route(['GET', 'POST'], '/acme/acct/:profile/:accountId/order/:orderId/finalize', 'Finalize an order with a CSR (RFC 8555 §7.4)', handle(async (req, reply, call) => {
    if (req.method === 'GET') throw new AcmeProblem('malformed', 'finalize takes a POST with the CSR', { status: 405 });
    const order = await server.finalize(call, req.params.accountId!, req.params.orderId!, req.body);
    if (order.status === 'processing') reply.header('retry-after', '2');
    return json(reply, 200, server.orderView(order, call), server.urls(call).order(order.id));
  }));

  route(['GET', 'POST'], '/acme/authz/:profile/:id', 'An authorization; status deactivated gives it up (RFC 8555 §7.5)', handle(async (req, reply, call) => {
    const z = await server.getAuthorization(call, req.params.id!, bodyOf(req));
    if (z.challenges.some((c) => c.status === 'processing')) reply.header('retry-after', '2');
    return json(reply, 200, server.authorizationView(z, call));
  }));

  route(['GET', 'POST'], '/acme/authz/:profile/:id/:challengeType', 'A challenge; a POST with {} asks for its validation (RFC 8555 §7.5.1)', handle(async (req, reply, call) => {
    const { authorization, challenge } = await server.respondChallenge(call, req.params.id!, req.params.challengeType!, bodyOf(req));
    reply.header('link', [`<${server.urls(call).directory}>;rel="index"`, `<${server.urls(call).authz(authorization.id)}>;rel="up"`]);
    if (challenge.status === 'processing') reply.header('retry-after', '2');
    return json(reply, 200, server.challengeView(authorization, challenge, call));
  }));

  route(['GET', 'POST'], '/acme/cert/:profile/:orderId', 'The certificate chain, PEM (RFC 8555 §7.4.2)', handle(async (req, reply, call) => {
    const pem = await server.certificate(call, req.params.orderId!, bodyOf(req));
    return reply.code(200).type('application/pem-certificate-chain').send(pem);
  }));

  route('POST', '/acme/:profile/revoke-cert', 'Revoke a certificate by the account key or the certificate key (RFC 8555 §7.6)', handle(async (req, reply, call) => {
    await server.revoke(call, req.body);
    return reply.code(200).send();
  }));
}
