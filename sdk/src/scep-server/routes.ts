/**
 * SCEP routes on a protocol scope: <prefix>/<profile>/pkiclient.exe (and scepRA), and the NDES-style
 * <prefix>/<profile>/mscep[/*] with mscep_admin, the page that hands out one-time challenges.
 * Operations come in the `operation` query parameter (RFC 8894 §4.1): GetCACaps, GetCACert, PKIOperation
 * (GET with `message`, base64 or its URL-safe form, or POST with the DER body).
 */
import type { RouteScope } from '../contracts/protocol.js';
import { ScepHttpError, type ScepService } from './service.js';


interface Req {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  ip?: string;
}
interface Reply {
  code(status: number): Reply;
  header(name: string, value: string | number): Reply;
  send(body?: unknown): unknown;
}

export interface ScepRoutePaths {
  /** `<prefix>/:profile/pkiclient.exe` GET and POST (e.g. /scep, /intune). */
  pkiclient?: string[];
  /** `<prefix>/:profile/scepRA` GET. */
  scepRa?: string[];
  /** NDES paths: `<prefix>/:profile/mscep[/*]` GET and POST, and `<prefix>/:profile/mscep_admin[/*]` GET (e.g. /certsrv, /jamf). */
  ndes?: string[];
}

/**
 * Mounts one SCEP flavour's routes on a protocol scope. Call `addScepBodyParser` once per scope first (a scope has
 * one parser per media type).
 */
export function addScepBodyParser(scope: RouteScope, maxBodyBytes: number): void {
  // Clients label PKIOperation bodies variously (application/x-pki-message, octet-stream, none): all are bytes.
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => done(null, body));
}

export function registerScepRoutes(scope: RouteScope, deps: { service: ScepService; maxBodyBytes: number; paths: ScepRoutePaths; tag?: string }): void {
  const { service, maxBodyBytes, paths } = deps;
  const tags = [deps.tag ?? 'SCEP'];

  const fail = async (req: Req, reply: Reply, err: unknown): Promise<unknown> => {
    const known = err instanceof ScepHttpError ? err : httpErrorOfFastify(err);
    if (!known) throw err;
    await service.failed(req.params.profile ?? null, String(req.query?.operation ?? ''), known.code, known.message, req.ip).catch(() => undefined);
    if (known.status === 401) reply.header('www-authenticate', 'Basic realm="SCEP", charset="UTF-8"');
    return reply.code(known.status).header('content-type', 'text/plain; charset=utf-8').send(`${known.code}: ${known.message}\n`);
  };
  const errorHandler = (err: unknown, req: Req, reply: Reply) => fail(req, reply, err);

  /** One SCEP call: the operation, from the query, and its message (GET parameter or POST body). */
  const operation = (raOnly: boolean) => async (req: Req, reply: Reply) => {
    try {
      const profile = req.params.profile ?? '';
      const op = req.query?.operation;
      if (!op && raOnly) {
        const ra = await service.raCertificate(profile);
        return reply.code(200).header('content-type', 'application/x-x509-ca-cert').send(ra);
      }
      switch (op) {
        case 'GetCACaps':
          return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(await service.capabilities(profile));
        case 'GetCACert': {
          const answer = await service.caCertificates(profile);
          return reply.code(200).header('content-type', answer.contentType).send(answer.body);
        }
        case 'PKIOperation': {
          const message = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : messageOfQuery(req.query.message, maxBodyBytes);
          const answer = await service.pkiOperation(profile, message, req.ip);
          return reply.code(200).header('content-type', 'application/x-pki-message').send(answer);
        }
        default:
          throw new ScepHttpError(400, 'SCEP-001', `Unknown or missing operation ${String(op ?? '').slice(0, 40) || '(none)'}: GetCACaps, GetCACert or PKIOperation`);
      }
    } catch (err) {
      return fail(req, reply, err);
    }
  };

  const admin = async (req: Req, reply: Reply) => {
    try {
      const page = await service.adminPage(req.params.profile ?? '', req.headers.authorization, req.ip);
      return reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(page);
    } catch (err) {
      return fail(req, reply, err);
    }
  };

  const route = (method: 'GET' | 'POST', url: string, summary: string, handler: (req: Req, reply: Reply) => Promise<unknown>) =>
    scope.route({ method, url, schema: { tags, summary }, errorHandler, handler });

  for (const prefix of paths.ndes ?? []) {
    route('GET', `${prefix}/:profile/mscep_admin`, 'NDES-style page showing a fresh one-time SCEP challenge (HTTP Basic, a local account)', admin);
    route('GET', `${prefix}/:profile/mscep_admin/*`, 'NDES-style challenge page (any tail)', admin);
    for (const tail of ['', '/*']) {
      route('GET', `${prefix}/:profile/mscep${tail}`, 'SCEP GetCACaps, GetCACert, PKIOperation by GET (NDES path)', operation(false));
      route('POST', `${prefix}/:profile/mscep${tail}`, 'SCEP PKIOperation by POST (NDES path)', operation(false));
    }
  }
  for (const prefix of paths.pkiclient ?? []) {
    route('GET', `${prefix}/:profile/pkiclient.exe`, 'SCEP GetCACaps, GetCACert, PKIOperation by GET', operation(false));
    route('POST', `${prefix}/:profile/pkiclient.exe`, 'SCEP PKIOperation by POST', operation(false));
  }
  for (const prefix of paths.scepRa ?? []) route('GET', `${prefix}/:profile/scepRA`, 'SCEP operations, or without one the RA certificate (DER)', operation(true));
}

/** The GET form's message: base64, standard or URL-safe (scepclient), URL-decoded by the query parser. */
function messageOfQuery(value: string | undefined, limit: number): Buffer {
  if (!value) throw new ScepHttpError(400, 'SCEP-002', 'PKIOperation needs a message (GET parameter or POST body)');
  if (value.length > Math.ceil((limit * 4) / 3) + 4) throw new ScepHttpError(413, 'SCEP-003', 'The message is too large');
  // A '+' a client did not percent-encode reads back as a space.
  const text = value.replace(/ /g, '+').replace(/[\r\n]+/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new ScepHttpError(400, 'SCEP-002', 'The message is not base64');
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function httpErrorOfFastify(err: unknown): ScepHttpError | null {
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e?.statusCode === 413) return new ScepHttpError(413, 'SCEP-003', 'The message is too large');
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new ScepHttpError(400, 'SCEP-002', String(e.message ?? 'unreadable request').slice(0, 120));
  return null;
}
