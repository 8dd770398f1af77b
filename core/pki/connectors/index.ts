import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../../services.js';
import type { ProfileService } from '../../profiles/types.js';
import type { PkiGateway } from './types.js';

export interface PkiConnectorsModule {
  gateway: PkiGateway;
  /**
   * First start (config pki.bootstrap): with no PKI connector in the tenant and the local-ca type installed,
   * creates connector `local-ca` and profile `default` bound to it (race-safe across nodes).
   */
  bootstrap(tenant: string, profiles: ProfileService): Promise<void>;
}

/** /api/v1/pki/connectors/, /api/v1/pki/queues/, the CRL / OCSP / CA publication routes, the queue job. */
export async function registerPkiConnectors(app: FastifyInstance, services: CoreServices): Promise<PkiConnectorsModule> {
  // TODO(issue 7): replaced by the real module; until then nothing is registered.
  void app;
  void services;
  const missing = (): never => {
    throw new Error('PKI connectors are not built yet');
  };
  return {
    gateway: { setHandlers: () => undefined, issue: missing, revoke: missing, caChain: missing, exists: async () => false, queueState: async () => null },
    bootstrap: async () => undefined,
  };
}
