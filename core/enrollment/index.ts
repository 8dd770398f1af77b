/**
 * Enrollment (issue 7): PKI connectors and queues, certificate profiles, and the request workflows over
 * them, registered in dependency order. The kernel calls `bootstrap` once plugins are started.
 */
import type { FastifyInstance } from 'fastify';
import { registerPkiConnectors } from '../pki/connectors/index.js';
import { registerProfiles } from '../profiles/index.js';
import { registerRequests } from '../requests/routes/index.js';
import type { SecurityCore } from '../security/index.js';
import type { CoreServices } from '../services.js';
import type { PkiGateway } from '../pki/connectors/types.js';
import type { ProfileService } from '../profiles/types.js';
import type { RequestWorkflows } from '../requests/workflow/service.js';

export interface Enrollment {
  gateway: PkiGateway;
  profiles: ProfileService;
  workflows: RequestWorkflows;
  /** First start: the local CA connector and the `default` profile (config pki.bootstrap). */
  bootstrap(tenant: string): Promise<void>;
}

export async function registerEnrollment(app: FastifyInstance, services: CoreServices, security: SecurityCore): Promise<Enrollment> {
  const connectors = await registerPkiConnectors(app, services);
  const profiles = await registerProfiles(app, services);
  const workflows = await registerRequests(app, services, { gateway: connectors.gateway, profiles, security });
  return {
    gateway: connectors.gateway,
    profiles,
    workflows,
    bootstrap: async (tenant) => {
      if (services.config.pki.bootstrap.localCa) await connectors.bootstrap(tenant, profiles);
    },
  };
}
