import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';

/** The integrity check of the event chain (job + routes) and the signed checkpoints. */
export async function registerIntegrity(_app: FastifyInstance, _services: CoreServices): Promise<void> {}
