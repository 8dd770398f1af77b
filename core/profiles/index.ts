import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../services.js';
import { profileRoutes } from './routes.js';
import { Profiles } from './service.js';
import type { ProfileService } from './types.js';

/** /api/v1/certificate/profiles/ (standard set) and the profile service the request workflows use. */
export async function registerProfiles(app: FastifyInstance, services: CoreServices): Promise<ProfileService> {
  const profiles = new Profiles(services.knex, services.events, services.clock);
  await app.register(profileRoutes, { services, profiles });
  return profiles;
}
