import { CAPABILITIES } from '@certwright/sdk';
import type { FastifyInstance } from 'fastify';
import type { HostPolicy } from '../host-policy.js';

const entrySchema = {
  type: 'object',
  required: ['host', ...CAPABILITIES],
  properties: { host: { type: 'string' }, ...Object.fromEntries(CAPABILITIES.map((c) => [c, { type: 'boolean' }])) },
} as const;

const serialised = new WeakMap<HostPolicy, string>();

/** GET /api/v1/endpoints/: the allowed hosts and their capabilities, in the shape of `certwright.endpoints`. */
export async function endpointsRoutes(app: FastifyInstance, opts: { hostPolicy: () => HostPolicy }): Promise<void> {
  app.get(
    '/api/v1/endpoints/',
    {
      config: { capability: 'common', access: 'authenticated' },
      schema: { tags: ['system'], summary: 'Allowed hosts and their capabilities', response: { 200: { type: 'array', items: entrySchema } } },
    },
    async (_request, reply) => {
      // The answer changes only with the policy: serialise once per policy object.
      const policy = opts.hostPolicy();
      let body = serialised.get(policy);
      if (body === undefined) {
        body = JSON.stringify(policy.entries);
        serialised.set(policy, body);
      }
      return reply.type('application/json').send(body);
    },
  );
}
