import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../services.js';

/** Triggers: configuration routes, dispatch and delivery jobs, the expiry scan, the run route. */
export async function registerTriggers(_app: FastifyInstance, _services: CoreServices): Promise<void> {}
