import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ProblemError } from '../../errors/index.js';
import type { EventStore } from '../../events/store.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import { parseDuration } from '../cas/duration.js';
import type { CaChange } from '../cas/service.js';
import type { CaRecord, CaStore } from '../cas/store.js';
import { normaliseSerial } from '../crl/entry-index.js';
import type { NodeCache } from '../trust/nodes.js';
import { acceptCrl } from './accept.js';
import { DEFAULT_FETCH_LIMITS, fetchCrl, type FetchLimits } from './fetch.js';
import type { CrlCacheStore, RevocationRow } from './store.js';

/** The one job that refreshes CRLs; its data names the CA (`caId`) and the run. One pending job per CA. */
export const CRL_JOB = 'pki-crl-refresh';

const token = (): string => randomBytes(6).toString('hex');

/** When to fetch again: at the CRL's nextUpdate, but never sooner than `minMs` nor later than `maxMs` (or the CA's `refresh`). */
export interface CrlSchedule {
  minMs: number;
  maxMs: number;
  /** After a failed or refused fetch. */
  retryMs: number;
}

export const DEFAULT_SCHEDULE: CrlSchedule = { minMs: 60_000, maxMs: 24 * 3_600_000, retryMs: 15 * 60_000 };

/** What the cache knows of a serial: revoked (when, why), good (per a current CRL), or unknown. */
export type Revocation =
  | { status: 'revoked'; revoked: true; reason: string | null; date: number }
  | { status: 'good'; revoked: false; thisUpdate: number; nextUpdate: number | null }
  | { status: 'unknown'; revoked: null; cause: 'no-ca' | 'no-crl' | 'stale' };

export interface RefreshOutcome {
  ok: boolean;
  error?: string;
  /** Epoch ms of the next fetch; null when there is nothing to fetch from. */
  nextRefreshAt: number | null;
}

export interface CrlCacheDeps {
  store: CrlCacheStore;
  cas: CaStore;
  nodes: NodeCache;
  scheduler: Scheduler;
  events: EventStore;
  logger: Logger;
  clock: () => number;
  schedule?: Partial<CrlSchedule>;
  fetch?: Partial<FetchLimits>;
}

/**
 * The CRL cache (DESIGN.md §2, "every background action is an Agenda job"): each CA's CRL is fetched from
 * its distribution point by the job CRL_JOB, checked against the CA (acceptCrl), stored with its revoked
 * serials, and fetched again at its nextUpdate. A CRL that cannot be fetched or is refused never replaces
 * the previous one. `isRevoked` answers other modules from the serial index.
 */
export class CrlCacheService {
  private readonly schedule: CrlSchedule;
  private readonly limits: FetchLimits;

  constructor(private readonly deps: CrlCacheDeps) {
    this.schedule = { ...DEFAULT_SCHEDULE, ...deps.schedule };
    this.limits = { ...DEFAULT_FETCH_LIMITS, ...deps.fetch };
  }

  /** Registers the job; called once per kernel, before the scheduler starts. */
  defineJob(): void {
    this.deps.scheduler.define<{ caId: string; run?: string }>(CRL_JOB, ({ tenant, data }) => this.run(tenant, data.caId, data.run), { concurrency: 4 });
  }

  /** Keeps the cache in step with the CAs: a new or changed CA is fetched now; a deleted one forgotten. */
  async onCaChange(change: CaChange): Promise<void> {
    const { tenant, ca, previous } = change;
    if (change.kind === 'delete') {
      await this.deps.scheduler.cancel(CRL_JOB, { caId: ca.id });
      await this.deps.store.removeCa(ca.id);
      return;
    }
    // Another key: the cached CRL was verified with the old one.
    if (previous && previous.publicKeyThumbprint !== ca.publicKeyThumbprint) await this.deps.store.removeCa(ca.id);
    // A change of flags alone does not send us to the distribution point again.
    const fetchAgain =
      !previous ||
      previous.thumbprintSha256 !== ca.thumbprintSha256 ||
      previous.crlUrl !== ca.crlUrl ||
      previous.timeout !== ca.timeout ||
      previous.refresh !== ca.refresh ||
      !(await this.deps.store.get(tenant, ca.id))?.fetchedAt;
    if (fetchAgain) await this.plan(tenant, ca.id);
    // A new CA certificate may name its issuer's distribution point (see distributionPoint).
    for (const issuer of await this.deps.cas.bySubject(tenant, ca.issuerDn)) {
      if (issuer.id !== ca.id && !(await this.deps.store.get(tenant, issuer.id))?.fetchedAt) await this.plan(tenant, issuer.id);
    }
  }

  /** Fetches now, on whichever node takes the job first (any planned fetch of this CA is replaced). */
  async plan(tenant: string, caId: string): Promise<void> {
    await this.deps.scheduler.cancel(CRL_JOB, { caId });
    await this.deps.scheduler.now(CRL_JOB, { caId, run: token() }, { tenant });
  }

  /**
   * The job: refresh, then replace this job by the next one. Each job carries its own `run` token so a run
   * removes only itself: a fetch planned meanwhile (a CA update, plan()) survives, and then no other is added.
   */
  private async run(tenant: string, caId: string, run: string | undefined): Promise<void> {
    const ca = await this.deps.cas.byId(tenant, caId);
    if (!ca) {
      await this.deps.scheduler.cancel(CRL_JOB, { caId });
      await this.deps.store.removeCa(caId);
      return;
    }
    let outcome: RefreshOutcome;
    try {
      outcome = await this.refresh(tenant, ca);
    } catch (err) {
      // A database hiccup: still plan the next attempt, or this CA would never be fetched again.
      this.deps.logger.error({ err, ca: ca.name }, 'CRL refresh failed');
      outcome = { ok: false, nextRefreshAt: this.deps.clock() + this.schedule.retryMs };
    }
    // Removing the running job is fine: Agenda tolerates a job removed during its run.
    await this.deps.scheduler.cancel(CRL_JOB, run ? { caId, run } : { caId });
    if (outcome.nextRefreshAt === null || (await this.deps.scheduler.nextRunAt(CRL_JOB, { caId })) !== null) return;
    await this.deps.scheduler.schedule(new Date(outcome.nextRefreshAt), CRL_JOB, { caId, run: token() }, { tenant });
  }

  /** One fetch of a CA's CRL; never throws for a fetch or CRL problem (it is recorded as the last error). */
  async refresh(tenant: string, ca: CaRecord): Promise<RefreshOutcome> {
    const now = this.deps.clock();
    const url = await this.distributionPoint(tenant, ca);
    if (!url) {
      const error = 'No CRL distribution point: set the CA\'s crlUrl, or import a CA certificate it issued that names one';
      await this.deps.store.recordFailure(tenant, ca.id, now, error, null, null);
      return { ok: false, error, nextRefreshAt: null };
    }
    const cached = await this.deps.store.get(tenant, ca.id);
    try {
      const timeoutMs = (ca.timeout && parseDuration(ca.timeout)) || this.limits.timeoutMs;
      const body = await fetchCrl(url, { ...this.limits, timeoutMs });
      const node = this.deps.nodes.ofCa(ca);
      const { crl, der } = acceptCrl(body, ca, node.info, node.x509.publicKey, cached);
      const nextRefreshAt = this.nextRefresh(ca, now, crl.nextUpdate);
      const entries = crl.entries
        .filter((e) => e.reason !== 'REMOVEFROMCRL')
        .map((e) => ({ serial: e.serial, revocationDate: e.revocationDate, reason: e.reason ?? null }));
      await this.deps.store.store(
        tenant,
        ca.id,
        { der, sha256: crl.thumbprints.sha256, thisUpdate: crl.thisUpdate, nextUpdate: crl.nextUpdate, crlNumber: crl.crlNumber, entries },
        now,
        url,
        nextRefreshAt,
      );
      if (cached?.crlSha256 !== crl.thumbprints.sha256) {
        await this.event(tenant, ca, 'CRL-UPDATE', 'success', { url, crlNumber: crl.crlNumber, entries: entries.length, nextUpdate: crl.nextUpdate });
      }
      return { ok: true, nextRefreshAt };
    } catch (err) {
      const error = err instanceof ProblemError ? `${err.code}: ${err.message}${err.detail ? ` (${err.detail})` : ''}` : (err as Error).message;
      const nextRefreshAt = now + Math.min(this.maxFor(ca), Math.max(this.schedule.minMs, this.schedule.retryMs));
      this.deps.logger.warn({ ca: ca.name, url, error }, 'CRL refresh failed: the cached CRL is kept');
      // A refused CRL (wrong signer, rollback) is a security event; an unreachable server is not. Recorded
      // before the cache row, so whoever sees the error there finds the event too.
      if (err instanceof ProblemError && err.code === 'CRL-002') await this.event(tenant, ca, 'CRL-REFUSED', 'failure', { url, error });
      await this.deps.store.recordFailure(tenant, ca.id, now, error, url, nextRefreshAt);
      return { ok: false, error, nextRefreshAt };
    }
  }

  /**
   * Where the CA publishes its CRL: the configured override, else the distribution point named by a CA
   * certificate it issued (a CA's own certificate names its issuer's CRL, not its own).
   */
  async distributionPoint(tenant: string, ca: CaRecord): Promise<string | null> {
    if (ca.crlUrl) return ca.crlUrl;
    const self = this.deps.nodes.ofCa(ca);
    for (const issued of await this.deps.cas.byIssuer(tenant, ca.subjectDn)) {
      if (issued.id === ca.id) continue;
      const node = this.deps.nodes.ofCa(issued);
      if (!this.deps.nodes.signedBy(node, self)) continue;
      const url = node.info.extensions.crlDistributionPoints?.find((u) => /^https?:\/\//i.test(u));
      if (url) return url;
    }
    return null;
  }

  /**
   * Is `serial` revoked by this CA (`{ca}`: its name) or by the CA named `issuer` (with the certificate's
   * AKI when known, to tell apart CAs sharing a name)? One indexed read.
   */
  async isRevoked(tenant: string, by: { ca: string } | { issuer: string; aki?: string }, serial: string): Promise<Revocation> {
    const rows = await this.deps.store.lookup(tenant, 'ca' in by ? { name: by.ca } : { issuerDn: by.issuer, ski: by.aki?.toLowerCase() }, normaliseSerial(serial));
    return this.answer(rows);
  }

  /** By CA id (the trust builder knows the issuing CA). */
  async isRevokedById(caId: string, serial: string): Promise<{ revoked: true; reason: string | null; date: number } | null> {
    const entry = await this.deps.store.entry(caId, normaliseSerial(serial));
    return entry ? { revoked: true, reason: entry.reason, date: entry.revocationDate } : null;
  }

  private answer(rows: RevocationRow[]): Revocation {
    if (rows.length === 0) return { status: 'unknown', revoked: null, cause: 'no-ca' };
    const listed = rows.find((r) => r.entry);
    if (listed?.entry) return { status: 'revoked', revoked: true, reason: listed.entry.reason, date: listed.entry.revocationDate };
    const now = this.deps.clock();
    const withCrl = rows.filter((r) => r.thisUpdate !== null);
    if (withCrl.length === 0) return { status: 'unknown', revoked: null, cause: 'no-crl' };
    const current = withCrl.find((r) => r.nextUpdate === null || r.nextUpdate >= now);
    if (!current) return { status: 'unknown', revoked: null, cause: 'stale' };
    return { status: 'good', revoked: false, thisUpdate: current.thisUpdate!, nextUpdate: current.nextUpdate };
  }

  private maxFor(ca: CaRecord): number {
    return (ca.refresh && parseDuration(ca.refresh)) || this.schedule.maxMs;
  }

  /** nextUpdate, kept within [now + min, now + max]. */
  private nextRefresh(ca: CaRecord, now: number, nextUpdate: number | null): number {
    const max = now + this.maxFor(ca);
    return Math.min(max, Math.max(now + this.schedule.minMs, nextUpdate ?? max));
  }

  private async event(tenant: string, ca: CaRecord, code: string, status: 'success' | 'failure', payload: Record<string, unknown>): Promise<void> {
    await this.deps.events.append({ tenant, code, module: 'pki', status, objectType: 'ca', objectId: ca.name, payload });
  }
}
