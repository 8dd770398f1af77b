import type { FastifyReply } from 'fastify';
import { PROBLEM_CONTENT_TYPE, type ProblemBody } from '../errors/index.js';

export function sendProblem(reply: FastifyReply, body: ProblemBody, headers?: Record<string, string>): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}
