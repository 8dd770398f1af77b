import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';

/** The events capability's routes: events and discovery events search / CSV / get / dictionary, analytics. */
export async function registerEventRoutes(_app: FastifyInstance, _services: CoreServices): Promise<void> {}
