import type { FastifyInstance } from 'fastify';
import { problemBody } from '../../errors/index.js';
import { sendProblem } from '../problem-reply.js';

export interface ReadinessCheck {
  /** Resolves with the names of failed checks (empty = ready). Never throws. */
  (): Promise<string[]>;
}

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' }, checks: { type: 'object', additionalProperties: { type: 'string' } } },
} as const;

/** Liveness and readiness probes, answered on every host (load balancers probe by address). */
export async function healthRoutes(app: FastifyInstance, opts: { readiness: ReadinessCheck }): Promise<void> {
  app.get(
    '/healthz',
    { config: { capability: 'any', access: 'public' }, schema: { tags: ['system'], summary: 'Liveness', response: { 200: statusSchema } } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      config: { capability: 'any', access: 'public' },
      schema: { tags: ['system'], summary: 'Readiness: database reachable and migrations applied', response: { 200: statusSchema } },
    },
    async (_request, reply) => {
      const failed = await opts.readiness();
      if (failed.length === 0) return { status: 'ready' };
      return sendProblem(reply, problemBody('SRV-002', { detail: `failed checks: ${failed.join(', ')}` }));
    },
  );
}
