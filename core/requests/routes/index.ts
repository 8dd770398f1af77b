import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';
import type { PkiGateway } from '../../pki/connectors/types.js';
import type { ProfileService } from '../../profiles/types.js';
import type { SecurityCore } from '../../security/index.js';

export interface RequestDeps {
  gateway: PkiGateway;
  profiles: ProfileService;
  security: SecurityCore;
}

/** /api/v1/requests/… and /api/v1/challenge/submit; registers the gateway's completion handlers. */
export async function registerRequests(app: FastifyInstance, services: CoreServices, deps: RequestDeps): Promise<void> {
  void app;
  void services;
  void deps;
  // TODO(issue 7): the routes.
}
