import type { FastifyInstance } from 'fastify';
import type { ConfigRegistry } from '../registry.js';

/** GET /api/v1/adoc: the configuration cookbook (being written). */
export function cookbookRoutes(_app: FastifyInstance, _registry: ConfigRegistry): void {}
