import type { FastifyInstance } from 'fastify';
import type { ConfigRegistry } from '../registry.js';

/** /api/v1/system/configurations/: export and import (being written). */
export function transferRoutes(_app: FastifyInstance, _registry: ConfigRegistry): void {}
