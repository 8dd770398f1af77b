// PLACEHOLDER — being written (issue 5). The export's name and signature are fixed.
import type { FastifyInstance } from 'fastify';
import type { PkiRouteContext } from '../index.js';

export async function crlCacheRoutes(_app: FastifyInstance, _ctx: PkiRouteContext): Promise<void> {}
