import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, type ProblemBody } from '../errors/index.js';

/**
 * The media type of an error answer. problem+json, except for a caller that shows it takes plain JSON
 * only: an Accept listing application/json but not application/problem+json, or no Accept at all from
 * Go's default HTTP client — the vendor's v1 Go SDK (horizon-go http/client.go, Unmarshal) decodes an
 * error body only when Content-Type is exactly application/json and turns anything else into "Unknown".
 * The body is the same either way.
 */
export function problemMediaType(request: FastifyRequest): string {
  const accept = request.headers.accept;
  if (accept === undefined) return /^Go-http-client\//.test(request.headers['user-agent'] ?? '') ? 'application/json' : PROBLEM_CONTENT_TYPE;
  const types = accept.toLowerCase().split(',').map((t) => t.split(';')[0]!.trim());
  return types.includes('application/json') && !types.includes('application/problem+json') && !types.includes('*/*') ? 'application/json' : PROBLEM_CONTENT_TYPE;
}

export function sendProblem(reply: FastifyReply, body: ProblemBody, headers?: Record<string, string>): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(body.status).type(problemMediaType(reply.request)).send(body);
}
