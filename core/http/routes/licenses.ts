import type { FastifyInstance } from 'fastify';
import type { PluginSummary } from '../../plugins/manager.js';

const moduleSchema = {
  type: 'object',
  required: ['id', 'name', 'kind', 'version', 'state', 'source'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    kind: { type: ['string', 'null'] },
    version: { type: ['string', 'null'] },
    state: { type: 'string', enum: ['registered', 'active', 'degraded', 'disabled'] },
    source: { type: 'string', enum: ['built-in', 'path', 'npm'] },
    capability: { type: 'string' },
    description: { type: 'string' },
    reason: { type: 'string' },
  },
} as const;

/** GET /api/v1/licenses/modules: installed plugins with kind, version and state (degraded ones with why). */
export async function licenseRoutes(app: FastifyInstance, opts: { modules: () => PluginSummary[] }): Promise<void> {
  app.get(
    '/api/v1/licenses/modules',
    {
      config: { capability: 'common', access: 'authenticated' },
      schema: { tags: ['licenses'], summary: 'Installed modules (plugins) and their state', response: { 200: { type: 'array', items: moduleSchema } } },
    },
    async () => opts.modules(),
  );
}
