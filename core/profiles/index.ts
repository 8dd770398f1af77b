import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../services.js';
import type { ProfileService } from './types.js';

/** /api/v1/certificate/profiles/ (standard set) and the profile service the request workflows use. */
export async function registerProfiles(app: FastifyInstance, services: CoreServices): Promise<ProfileService> {
  // TODO(issue 7): replaced by the real module; until then nothing is registered.
  void app;
  void services;
  const missing = (): never => {
    throw new Error('profiles are not built yet');
  };
  return { get: async () => null, require: missing, list: async () => [], ensureDefault: async () => undefined, templateOf: missing, resolve: missing, rightsOf: missing };
}
