import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CAPABILITIES } from '@certwright/sdk';
import type { HostPolicy } from './host-policy.js';
import { ERROR_CATALOGUE, ProblemError, problemBody, type ErrorCode, type ProblemBody } from '../errors/index.js';
import { problemMediaType, sendProblem } from './problem-reply.js';

/** fastify's own error codes → our catalogue. Anything not here and not a ProblemError is a 500. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'HTTP-002',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'HTTP-002',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'HTTP-002',
  FST_ERR_CTP_BODY_TOO_LARGE: 'HTTP-005',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'HTTP-004',
  FST_ERR_CTP_INVALID_TYPE: 'HTTP-004',
  FST_ERR_BAD_URL: 'HTTP-008',
  FST_ERR_ASYNC_CONSTRAINT: 'HTTP-008',
};

/**
 * One place turns every failure into a problem+json answer with a stable code. Internal messages and
 * stacks go to the log under the request id, never to the client.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ProblemError) {
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, error.toBody(), error.headers);
    }
    if (error.validation) {
      // The route's collection code when it names one; the detail names the field (`body/retries must be >= 0`).
      const own = (request.routeOptions.config as { invalidCode?: string } | undefined)?.invalidCode;
      const code = (own !== undefined && own in ERROR_CATALOGUE ? own : 'HTTP-003') as ErrorCode;
      return sendProblem(reply, problemBody(code, { detail: error.message }));
    }
    const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
    if (mapped) return sendProblem(reply, problemBody(mapped));
    // A body-parser SyntaxError (JSON.parse) or proto-poisoning refusal carries statusCode 400.
    if (error.statusCode === 400 || error instanceof SyntaxError) return sendProblem(reply, problemBody('HTTP-002'));
    if (error.statusCode === 413) return sendProblem(reply, problemBody('HTTP-005'));
    if (error.statusCode === 415) return sendProblem(reply, problemBody('HTTP-004'));
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, problemBody('SRV-001'));
  });

  app.setNotFoundHandler((_request, reply) => sendProblem(reply, problemBody('HTTP-001')));
}

/**
 * fastify answers a few failures itself, before routing and so before any hook: a path whose
 * percent-encoding is not UTF-8 (FST_ERR_BAD_URL), a path parameter over maxParamLength, a failing async
 * constraint. Its default answers echo the path as application/json and skip the host gate. This is the
 * `frameworkErrors` option: the host gate first (a host that may reach nothing gets the unknown-route 404,
 * as for any route), then the platform's problem, without the path.
 */
export function frameworkErrorHandler(policy: () => HostPolicy) {
  // The reply fastify builds here runs no onSend hook (which drops the charset fastify adds to text): a Buffer is sent as it is.
  const send = (request: FastifyRequest, reply: FastifyReply, body: ProblemBody): void => {
    reply.code(body.status).header('x-request-id', request.id).header('content-type', problemMediaType(request)).send(Buffer.from(JSON.stringify(body)));
  };
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    if (!policy().allowsAnyOnHost(request.host, CAPABILITIES)) return send(request, reply, problemBody('HTTP-001'));
    const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment is longer than the server accepts' : error.code === 'FST_ERR_BAD_URL' ? 'The path is not valid percent-encoded UTF-8' : undefined;
    send(request, reply, problemBody('HTTP-008', detail ? { detail } : {}));
  };
}
