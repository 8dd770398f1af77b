// PLACEHOLDER — being written (issue 4). The export's name and signature are fixed.
import type { FastifyInstance } from 'fastify';
import type { SecurityRouteContext } from '../route-context.js';

export async function teamRoutes(_app: FastifyInstance, _ctx: SecurityRouteContext): Promise<void> {}
