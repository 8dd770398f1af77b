import { CAPABILITIES } from '@certwright/sdk';
import type { FastifyInstance } from 'fastify';
import type { HostPolicy } from '../host-policy.js';

const entrySchema = {
  type: 'object',
  required: ['host', ...CAPABILITIES],
  properties: { host: { type: 'string' }, ...Object.fromEntries(CAPABILITIES.map((c) => [c, { type: 'boolean' }])) },
} as const;

/** GET /api/v1/endpoints/: the allowed hosts and their capabilities, in the shape of `certwright.endpoints`. */
export async function endpointsRoutes(app: FastifyInstance, opts: { hostPolicy: () => HostPolicy }): Promise<void> {
  app.get(
    '/api/v1/endpoints/',
    {
      config: { capability: 'common', access: 'public' },
      schema: { tags: ['system'], summary: 'Allowed hosts and their capabilities', response: { 200: { type: 'array', items: entrySchema } } },
    },
    async () => opts.hostPolicy().entries,
  );
}
