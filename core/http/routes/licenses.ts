import { CAPABILITIES } from '@certwright/sdk';
import type { FastifyInstance } from 'fastify';
import type { PluginSummary } from '../../plugins/manager.js';
import { INTERFACE_VERSION } from '../../security/principals/view.js';

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

/**
 * GET /api/v1/licenses: Horizon's licence object `{isValid, expiration, version, modules}` (the MCP
 * server reads it to detect the server's version, client-compat §7). Certwright is open source: the
 * licence is always valid and never expires (`expiration: null`); `version` is the interface version it
 * implements, as principals/self's `_horizonVersion`; `modules` are the capabilities, each valid.
 */
const licenseSchema = {
  type: 'object',
  required: ['isValid', 'expiration', 'version', 'modules'],
  properties: {
    isValid: { type: 'boolean', description: 'Always true: no licence key is needed' },
    expiration: { type: ['integer', 'null'], description: 'Epoch ms; null: never expires' },
    version: { type: 'string', description: 'The Horizon interface version implemented (as principals/self _horizonVersion)' },
    certwrightVersion: { type: 'string' },
    modules: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'module', 'isValid', 'expiration'],
        properties: {
          name: { type: 'string', description: 'A capability: webra, est, scep, acme, …' },
          module: { type: 'string', description: 'The same name, under the key the v1 Go SDK reads (ModuleLicenseInfo.Module)' },
          isValid: { type: 'boolean' },
          expiration: { type: ['integer', 'null'] },
        },
      },
    },
  },
} as const;

/** GET /api/v1/licenses/modules: installed plugins with kind, version and state (degraded ones with why). */
export async function licenseRoutes(app: FastifyInstance, opts: { modules: () => PluginSummary[]; version: string }): Promise<void> {
  app.get(
    '/api/v1/licenses',
    {
      config: { capability: 'common', access: 'authenticated' },
      schema: { tags: ['licenses'], summary: 'The licence: always valid, never expiring, with the interface version and the capabilities', response: { 200: licenseSchema } },
    },
    async () => ({
      isValid: true,
      expiration: null,
      version: INTERFACE_VERSION,
      certwrightVersion: opts.version,
      modules: CAPABILITIES.map((name) => ({ name, module: name, isValid: true, expiration: null })),
    }),
  );
  app.get(
    '/api/v1/licenses/modules',
    {
      config: { capability: 'common', access: 'authenticated' },
      schema: { tags: ['licenses'], summary: 'Installed modules (plugins) and their state', response: { 200: { type: 'array', items: moduleSchema } } },
    },
    async () => opts.modules(),
  );
}
