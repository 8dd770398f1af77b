import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { DecodeWorkers } from '../workers/index.js';
import { caRoutes } from './routes/ca-routes.js';
import { crlCacheRoutes } from './routes/crl-cache-routes.js';
import { decoderRoutes } from './routes/decoder-routes.js';
import { rareDecoderRoutes } from './routes/rare-decoder-routes.js';
import { protocolDecoderRoutes } from './routes/protocol-decoder-routes.js';
import { trustChainRoutes } from './routes/trust-chain-routes.js';

/** What every PKI route module receives. */
export interface PkiRouteContext {
  knex: Knex;
  clock: () => number;
  events: EventStore;
  logger: Logger;
  scheduler: Scheduler;
}

/** The decoder routes of CPU-heavy objects also get the kernel's worker pool. */
export interface DecoderRouteContext extends PkiRouteContext {
  workers: DecodeWorkers;
}

/**
 * The PKI toolkit's routes (DESIGN.md §3): decoders (X.509, CSR, CRL, PKCS#12, PKCS#7, OCSP, TSP,
 * OpenSSH, detect), CAs, trust chains and the CRL cache. PKCS#12 files, large CRLs and large detections
 * decode on `workers`.
 */
export async function registerPkiRoutes(app: FastifyInstance, ctx: PkiRouteContext, workers: DecodeWorkers): Promise<void> {
  const withWorkers: DecoderRouteContext = { ...ctx, workers };
  for (const routes of [decoderRoutes, rareDecoderRoutes, protocolDecoderRoutes, caRoutes, trustChainRoutes, crlCacheRoutes]) {
    await app.register(routes as (app: FastifyInstance, ctx: DecoderRouteContext) => Promise<void>, withWorkers);
  }
}
