/**
 * The EST routes of the spec (RFC 7030 with RFC 8951), labeled by profile and unlabeled for the configured
 * default profile. Answers are what the strictest client here needs (strongSwan's pki): single-line base64,
 * a Content-Length, small headers. Errors are plain text with a stable EST code.
 */
import type { RouteScope } from '@certwright/sdk';
import { parseEstCsr } from './csr.js';
import { EST_ERRORS, EstError } from './errors.js';
import type { EstCredentials, EstService } from './service.js';

const PKCS7 = 'application/pkcs7-mime; smime-type=certs-only';
const tags = ['EST'];

interface Req {
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  ip?: string;
  raw: { socket: { getPeerCertificate?: (detailed?: boolean) => { raw?: Buffer } } };
}
interface Reply {
  code(status: number): Reply;
  header(name: string, value: string | number): Reply;
  send(body?: unknown): unknown;
  sent?: boolean;
}

export function registerEstRoutes(scope: RouteScope, deps: { service: EstService; defaultProfile: string | null; maxBodyBytes: number }): void {
  const { service, defaultProfile, maxBodyBytes } = deps;

  // Every body reaches the handler as bytes; the handler checks the media type itself so that a wrong one
  // gets EST's answer, not a parser's.
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => done(null, body));

  const profileOf = (req: Req): string => {
    const name = req.params.profile ?? defaultProfile;
    if (!name) throw EST_ERRORS.noProfile('(unlabeled)');
    return name;
  };

  const fail = async (req: Req, reply: Reply, operation: string, err: unknown): Promise<unknown> => {
    const known = err instanceof EstError ? err : estErrorOfFastify(err);
    if (!known) throw err;
    await service.failed(req.params.profile ?? defaultProfile, operation, known, req.ip).catch(() => undefined);
    if (known.status === 401) reply.header('www-authenticate', 'Basic realm="EST", charset="UTF-8"');
    return reply.code(known.status).header('content-type', 'text/plain; charset=utf-8').send(`${known.code}: ${known.message}\n`);
  };

  const errorHandler = (operation: string) => (err: unknown, req: Req, reply: Reply) => fail(req, reply, operation, err);

  const cacerts = async (req: Req, reply: Reply) => {
    try {
      const body = await service.cacerts(profileOf(req));
      return reply.code(200).header('content-type', PKCS7).header('content-transfer-encoding', 'base64').send(body);
    } catch (err) {
      return fail(req, reply, 'cacerts', err);
    }
  };

  const enrollment = (operation: 'simpleenroll' | 'simplereenroll') => async (req: Req, reply: Reply) => {
    try {
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/pkcs10') throw EST_ERRORS.contentType(type);
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.from(typeof req.body === 'string' ? req.body : '');
      const csr = parseEstCsr(body);
      const credentials = credentialsOf(req);
      const name = profileOf(req);
      const answer = operation === 'simpleenroll' ? await service.enroll(name, csr, credentials) : await service.reenroll(name, csr, credentials);
      if (answer.kind === 'pending') return reply.code(202).header('retry-after', String(answer.retryAfterSeconds)).header('content-type', 'text/plain; charset=utf-8').send('The request waits for approval; send the same CSR again later.\n');
      return reply.code(200).header('content-type', PKCS7).header('content-transfer-encoding', 'base64').send(answer.body);
    } catch (err) {
      return fail(req, reply, operation, err);
    }
  };

  for (const prefix of ['/.well-known/est/:profile', '/.well-known/est']) {
    const label = prefix.includes(':profile') ? 'labeled' : 'unlabeled (the default EST profile)';
    scope.route({ method: 'GET', url: `${prefix}/cacerts`, schema: { tags, summary: `EST CA certificates, ${label}` }, errorHandler: errorHandler('cacerts'), handler: cacerts });
    scope.route({ method: 'POST', url: `${prefix}/simpleenroll`, schema: { tags, summary: `EST enrollment, ${label}` }, errorHandler: errorHandler('simpleenroll'), handler: enrollment('simpleenroll') });
    scope.route({ method: 'POST', url: `${prefix}/simplereenroll`, schema: { tags, summary: `EST re-enrollment, ${label}` }, errorHandler: errorHandler('simplereenroll'), handler: enrollment('simplereenroll') });
  }
}

/** HTTP Basic credentials and the TLS client certificate, as far as the request carries them. */
function credentialsOf(req: Req): EstCredentials {
  const out: EstCredentials = { ...(req.ip ? { remoteAddress: req.ip } : {}) };
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string' && /^basic /i.test(authorization)) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw EST_ERRORS.badCredentials();
    out.basic = { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const peer = req.raw.socket.getPeerCertificate?.(false);
  if (peer?.raw && peer.raw.length > 0) out.clientCertificatePem = `-----BEGIN CERTIFICATE-----\n${peer.raw.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  return out;
}

/** Fastify's own refusals before the handler (a body over the limit, a broken JSON body) in EST's form. */
function estErrorOfFastify(err: unknown): EstError | null {
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e?.statusCode === 413) return EST_ERRORS.tooLarge();
  if (e?.statusCode === 415) return EST_ERRORS.contentType('an invalid media type');
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return EST_ERRORS.encoding(String(e.message ?? 'unreadable body').slice(0, 120));
  return null;
}
