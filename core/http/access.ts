import type { FastifyRequest } from 'fastify';
import { ProblemError } from '../errors/index.js';
import type { RouteAccess } from './route-config.js';

/**
 * Decides whether a request may run a route that is not public. The security core provides the real
 * one (credentials, principals, permissions); until it is installed every non-public route answers 401,
 * so a route can never be reachable by accident.
 */
export interface Authorizer {
  /** Throws a ProblemError (401 SEC-AUTH-00x, 403 SEC-PERM-001) to refuse. */
  authorize(request: FastifyRequest, access: Exclude<RouteAccess, 'public'>): Promise<void>;
}

export const denyAllAuthorizer: Authorizer = {
  authorize: () => Promise.reject(new ProblemError('SEC-AUTH-001')),
};
