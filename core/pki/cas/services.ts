import type { Knex } from 'knex';
import type { PkiRouteContext } from '../index.js';
import { CrlCacheService, type CrlSchedule } from '../crl-cache/service.js';
import { CrlCacheStore } from '../crl-cache/store.js';
import type { FetchLimits } from '../crl-cache/fetch.js';
import { TrustService } from '../trust/service.js';
import { CaService } from './service.js';
import { CaStore } from './store.js';

/** The CA, trust chain and CRL cache services of one kernel. */
export interface PkiServices {
  cas: CaService;
  caStore: CaStore;
  trust: TrustService;
  crls: CrlCacheService;
  crlStore: CrlCacheStore;
}

export interface PkiServiceOptions {
  crlSchedule?: Partial<CrlSchedule>;
  crlFetch?: Partial<FetchLimits>;
}

const byDatabase = new WeakMap<Knex, PkiServices>();

/**
 * One set of services per kernel (keyed by its database handle), whichever route module asks first: the
 * CA routes, the trust chain routes and the CRL cache routes share the CA listeners, the parsed-certificate
 * cache and the one definition of the CRL job.
 */
export function pkiServices(ctx: PkiRouteContext, options: PkiServiceOptions = {}): PkiServices {
  let services = byDatabase.get(ctx.knex);
  if (!services) {
    const caStore = new CaStore(ctx.knex, ctx.clock);
    const cas = new CaService(caStore, ctx.events, ctx.clock);
    // The trust builder asks the CRL cache about each link: created first, wired to it just below.
    let crls: CrlCacheService | undefined;
    const trust = new TrustService(caStore, ctx.clock, (subject, issuer) =>
      issuer.ca && crls ? crls.isRevokedById(issuer.ca.id, subject.info.serial) : Promise.resolve(null),
    );
    const crlStore = new CrlCacheStore(ctx.knex);
    crls = new CrlCacheService({
      store: crlStore,
      cas: caStore,
      nodes: trust.nodes,
      scheduler: ctx.scheduler,
      events: ctx.events,
      logger: ctx.logger.child({ component: 'crl-cache' }),
      clock: ctx.clock,
      schedule: options.crlSchedule,
      fetch: options.crlFetch,
    });
    crls.defineJob();
    const cache = crls;
    cas.onChange((change) => cache.onCaChange(change));
    services = { cas, caStore, trust, crls, crlStore };
    byDatabase.set(ctx.knex, services);
  }
  return services;
}
