import { ConfigurationError, PendingError, PermanentError, TransientError, type IssueOutcome, type IssueRequest, type PkiConnector, type RevokeRequest } from '@certwright/sdk';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import { faultPoint } from './fault.js';
import type { ConnectorInstances } from './instances.js';
import { DEFAULT_QUEUE_SETTINGS, type ConnectorRecord, type QueueItem, type QueueSettings } from './model.js';
import { QueueFull, type QueueItems, type QueueRef } from './queue.js';
import type { ConnectorRepository, QueueRules } from './repository.js';
import { QueueThrottle, type Admission, type Permit } from './throttle.js';
import type { CompletionHandlers, FinalIssue, FinalRevoke, IssueOptions, IssueResult, PkiGateway, QueueItemState, RevokeResult } from './types.js';

export const QUEUE_JOB = 'pki.queue';
/** Items claimed per read of the queue, and attempts in flight at once on one node. */
const CLAIM_BATCH = 32;
const CONCURRENCY = 8;

/** What one connector call came to, before it is applied. */
type Answer =
  | { kind: 'issued'; certificatePem: string; chainPem: string[] }
  | { kind: 'revoked' }
  | { kind: 'pending'; pollToken: string | null; retryAfterSeconds: number; detail: string }
  | { kind: 'transient'; retryAfterSeconds: number | null; detail: string }
  | { kind: 'rejected'; reason: string };

/** The delay before the next try after `attempts` attempts: initialDelay × 2^(attempts-1), at most maxDelay (seconds). */
export const backoffSeconds = (settings: QueueSettings, attempts: number): number =>
  Math.min(settings.initialDelaySeconds * 2 ** Math.max(0, attempts - 1), settings.maxDelaySeconds);

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Classifies a connector answer or error (SDK typed errors; anything untyped is transient). */
function answerOf(outcome: IssueOutcome): Answer {
  switch (outcome.status) {
    case 'issued':
      return { kind: 'issued', certificatePem: outcome.certificatePem, chainPem: outcome.chainPem ?? [] };
    case 'pending':
      return { kind: 'pending', pollToken: outcome.pollToken, retryAfterSeconds: outcome.retryAfterSeconds, detail: 'pending at the CA' };
    case 'rejected':
      return { kind: 'rejected', reason: outcome.reason };
    default:
      return { kind: 'transient', retryAfterSeconds: null, detail: `the connector answered an unknown status "${String((outcome as { status?: unknown }).status)}"` };
  }
}

function answerOfError(err: unknown): Answer {
  if (err instanceof PendingError) return { kind: 'pending', pollToken: err.pollToken ?? null, retryAfterSeconds: err.retryAfterSeconds, detail: `pending: ${err.message}` };
  if (err instanceof TransientError) return { kind: 'transient', retryAfterSeconds: err.retryAfterSeconds ?? null, detail: err.message };
  if (err instanceof ConfigurationError) return { kind: 'rejected', reason: `the PKI connector is misconfigured: ${err.message}` };
  if (err instanceof PermanentError) return { kind: 'rejected', reason: err.message };
  // A problem of ours about the connector (missing, disabled, not starting) may pass: retried.
  if (err instanceof ProblemError) return { kind: 'transient', retryAfterSeconds: null, detail: err.detail ?? err.message };
  return { kind: 'transient', retryAfterSeconds: null, detail: message(err) };
}

/**
 * The PKI gateway (types.ts) and the queue job. An attempt: the item is committed first (running, under a
 * lease), the connector is called, and its answer applied — a final one by the completion handler in one
 * transaction with the item's removal; pending and transient ones leave the item waiting for the job.
 */
export class Gateway implements PkiGateway {
  private handlers: CompletionHandlers | null = null;
  private stopping = false;
  private running: Promise<void> | null = null;
  private again = false;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private readonly chains = new Map<string, { version: number; at: number; chain: Promise<string[]> }>();
  private readonly throttle: QueueThrottle;
  /** Queues the last pass found at their throttle, and when they may run again (null: when a call ends). */
  private blocked: { ref: QueueRef; retryAt: number | null }[] = [];
  /** Told when a revocation through a connector completed (the CRL cache drops that connector's CRL). */
  onRevoked: (tenant: string, connector: string) => void = () => undefined;
  /** Set by the publication module (it owns the CRL cache): the connector's current CRL. */
  crlSource: (tenant: string, connector: string) => Promise<Uint8Array | null> = async () => null;

  crl(tenant: string, connector: string): Promise<Uint8Array | null> {
    return this.crlSource(tenant, connector);
  }

  constructor(
    private readonly services: CoreServices,
    private readonly repository: ConnectorRepository,
    private readonly instances: ConnectorInstances,
    private readonly items: QueueItems,
    private readonly logger: Logger,
  ) {
    this.throttle = new QueueThrottle(services.knex, services.clock, () => this.leaseMs);
  }

  get leaseMs(): number {
    return this.services.config.pki.queue.leaseMs;
  }

  setHandlers(handlers: CompletionHandlers): void {
    this.handlers = handlers;
  }

  /** The base of the publication URLs: config pki.publicBaseUrl, else http://<server.host>:<server.port>. */
  publicBaseUrl(): string {
    const configured = this.services.config.pki.publicBaseUrl;
    if (configured) return configured.replace(/\/+$/, '');
    const { host, port } = this.services.config.server;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  publicationOf(connector: string): NonNullable<IssueRequest['publication']> {
    const base = `${this.publicBaseUrl()}/pki/${encodeURIComponent(connector)}`;
    return { crlUrl: `${base}/crl`, ocspUrl: `${base}/ocsp`, caIssuersUrl: `${base}/ca` };
  }

  async exists(tenant: string, connector: string): Promise<boolean> {
    return this.instances.enabled(tenant, connector);
  }

  async caChain(tenant: string, connector: string): Promise<string[]> {
    const { record, connector: instance } = await this.instances.resolve(tenant, connector);
    const key = `${tenant}\u0000${connector}`;
    const now = this.services.clock();
    const cached = this.chains.get(key);
    if (cached && cached.version === record.version && now - cached.at < 60_000) return cached.chain;
    const chain = instance.getCaChain();
    this.chains.set(key, { version: record.version, at: now, chain });
    try {
      return await chain;
    } catch (err) {
      this.chains.delete(key);
      throw new ProblemError('PKI-CONN-007', { detail: `the CA chain of "${connector}": ${message(err)}` });
    }
  }

  async queueState(tenant: string, requestId: string): Promise<QueueItemState | null> {
    const item = await this.items.get(tenant, requestId);
    if (!item) return null;
    return {
      requestId: item.requestId,
      queue: item.queue,
      connector: item.connector,
      operation: item.operation,
      state: item.state,
      attempts: item.attempts,
      nextAttemptAt: item.state === 'waiting' ? item.nextAttemptAt : item.state === 'running' ? item.leaseUntil : null,
      lastError: item.lastError,
    };
  }

  async issue(tenant: string, connector: string, request: IssueRequest, options: IssueOptions = {}): Promise<IssueResult> {
    const payload: IssueRequest = { ...request, publication: request.publication ?? this.publicationOf(connector) };
    const result = await this.start(tenant, connector, 'issue', request.requestId, payload as unknown as Record<string, unknown>, options.with);
    return result as IssueResult;
  }

  async revoke(tenant: string, connector: string, requestId: string, request: RevokeRequest): Promise<RevokeResult> {
    return (await this.start(tenant, connector, 'revoke', requestId, request as unknown as Record<string, unknown>)) as RevokeResult;
  }

  /**
   * Writes the item, makes the first attempt (unless the queue is paused or at its throttle: the item then
   * waits for the job) and applies its answer. A queue at its size refuses the item (PKI-QUEUE-006).
   */
  private async start(
    tenant: string,
    connector: string,
    operation: 'issue' | 'revoke',
    requestId: string,
    payload: Record<string, unknown>,
    write?: (trx: Knex.Transaction) => Promise<void>,
  ): Promise<IssueResult | RevokeResult> {
    let record: ConnectorRecord;
    let rules: QueueRules;
    try {
      ({ record } = await this.instances.resolve(tenant, connector));
      rules = await this.repository.queueRules(tenant, record.queue);
    } catch (err) {
      // No item can be written: the caller's writes are committed alone (IssueOptions.with).
      if (write) await this.services.knex.transaction(write);
      throw err;
    }
    const admission: Admission = rules.paused ? { permit: null, retryAt: null } : await this.throttle.admit(tenant, record.queue, rules);
    const permit = admission.permit;
    let inserted: Awaited<ReturnType<QueueItems['insert']>>;
    try {
      inserted = await this.items.insert(
        { tenant, requestId, connector, queue: record.queue, operation, payload },
        { running: permit !== null, leaseMs: this.leaseMs, size: rules.size, ...(admission.permit === null && admission.retryAt !== null ? { dueAt: admission.retryAt } : {}), ...(write ? { with: write } : {}) },
      );
    } catch (err) {
      if (permit) await this.release(permit);
      if (!(err instanceof QueueFull)) throw err;
      // As when no item can be written: the caller's writes alone, then the refusal.
      if (write) await this.services.knex.transaction(write);
      throw new ProblemError('PKI-QUEUE-006', { detail: `${err.message}; try again once it has sent some of them to the PKI connector` });
    }
    const { item, existing } = inserted;
    if (existing || permit === null) {
      if (permit) await this.release(permit);
      if (!existing) this.wake(item.nextAttemptAt ?? this.services.clock());
      return this.stateResult(item);
    }
    try {
      const answer = await this.call(item);
      faultPoint('pki-after-connector-answer');
      return await this.apply(item, answer);
    } finally {
      await this.release(permit);
    }
  }

  /**
   * Ends a call's hold on its queue's throttle; a throttled queue may now run an item that waits for it. A
   * release that fails (database) is logged, not thrown over the call's outcome: a shared place then frees
   * when its lease passes (throttle.ts).
   */
  private async release(permit: Permit): Promise<void> {
    await permit.release().catch((err: unknown) => this.logger.error({ err }, 'PKI queue throttle release failed'));
    if (permit.throttled) this.wake(this.services.clock());
  }

  private stateResult(item: QueueItem): IssueResult | RevokeResult {
    if (item.state === 'failed') return { status: 'rejected', reason: item.lastError ?? 'the PKI queue gave up' };
    return { status: 'queued', retryAt: (item.state === 'waiting' ? item.nextAttemptAt : item.leaseUntil) ?? this.services.clock(), detail: item.lastError ?? undefined };
  }

  /** One call of the connector for a claimed item: issue (or poll with its token), or revoke. */
  private async call(item: QueueItem): Promise<Answer> {
    let instance: PkiConnector;
    try {
      instance = (await this.instances.resolve(item.tenant, item.connector)).connector;
    } catch (err) {
      // A connector deleted under its items never answers again.
      if (err instanceof ProblemError && err.code === 'PKI-CONN-003' && !(await this.repository.stamp(item.tenant, item.connector))) {
        return { kind: 'rejected', reason: `the PKI connector "${item.connector}" no longer exists` };
      }
      return answerOfError(err);
    }
    try {
      if (item.operation === 'revoke') {
        await instance.revoke(item.payload as unknown as RevokeRequest);
        return { kind: 'revoked' };
      }
      const outcome = item.pollToken ? await instance.poll(item.pollToken) : await instance.issue(item.payload as unknown as IssueRequest);
      return answerOf(outcome);
    } catch (err) {
      return answerOfError(err);
    }
  }

  /** Applies an attempt's answer to its item; answers what the caller (or the job) learns. */
  private async apply(item: QueueItem, answer: Answer): Promise<IssueResult | RevokeResult> {
    const now = this.services.clock();
    if (answer.kind === 'pending' || answer.kind === 'transient') {
      const settings = await this.repository.settingsOf(item.tenant, item.queue).catch(() => DEFAULT_QUEUE_SETTINGS);
      if (answer.kind === 'transient' && item.attempts > settings.retries) return this.giveUp(item, answer.detail);
      const delaySeconds = answer.kind === 'pending' ? Math.max(0, answer.retryAfterSeconds) : (answer.retryAfterSeconds ?? backoffSeconds(settings, item.attempts));
      const nextAttemptAt = now + Math.round(delaySeconds * 1000);
      const waited = await this.items.wait(item, {
        nextAttemptAt,
        ...(answer.kind === 'pending' && answer.pollToken ? { pollToken: answer.pollToken } : {}),
        lastError: answer.detail,
      });
      if (waited) this.wake(nextAttemptAt);
      this.logger.info({ tenant: item.tenant, request: item.requestId, connector: item.connector, attempt: item.attempts, outcome: answer.kind, detail: answer.detail, nextAttemptAt }, 'PKI queue item waits');
      return { status: 'queued', retryAt: nextAttemptAt, detail: answer.detail };
    }
    const final: FinalIssue | FinalRevoke =
      answer.kind === 'issued'
        ? { status: 'issued', certificatePem: answer.certificatePem, chainPem: answer.chainPem }
        : answer.kind === 'revoked'
          ? { status: 'revoked' }
          : { status: 'rejected', reason: answer.reason };
    await this.complete(item, final);
    return final;
  }

  /** The final outcome: the handler and the item's removal in one transaction (once, whoever gets there first). */
  private async complete(item: QueueItem, final: FinalIssue | FinalRevoke, gaveUp?: string): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) this.logger.warn({ request: item.requestId }, 'no PKI completion handlers are registered: the outcome is only answered to the caller');
    // Completions of concurrent attempts share commits (GroupCommit; the handlers write through trx only).
    await this.services.groupCommit.run(async (trx: Knex.Transaction) => {
      // Giving up records the attempts of the item as locked; a final answer only needs it live, and removing
      // it (the claim, one statement) proves that.
      const current = gaveUp !== undefined ? await this.items.lockForCompletion(trx, item) : (await this.items.removeLive(trx, item)) ? item : null;
      if (!current || current.state === 'failed') return;
      if (handlers) {
        if (item.operation === 'revoke') await handlers.revoked(trx, item.tenant, item.requestId, final as FinalRevoke);
        else await handlers.issued(trx, item.tenant, item.requestId, final as FinalIssue);
      }
      if (gaveUp !== undefined) {
        await this.items.markFailed(trx, item.id, gaveUp);
        await this.services.events.append(
          {
            tenant: item.tenant,
            code: 'PKI-QUEUE-GAVE-UP',
            module: 'pki',
            status: 'failure',
            principal: null,
            objectType: 'request',
            objectId: item.requestId,
            payload: { queue: item.queue, connector: item.connector, operation: item.operation, attempts: current.attempts, lastError: gaveUp },
          },
          { trx },
        );
      }
    });
    if (final.status === 'revoked') this.onRevoked(item.tenant, item.connector);
  }

  /** Retries used up: the request learns it was rejected, the item stays `failed` (visible in the queue state). */
  private async giveUp(item: QueueItem, detail: string): Promise<IssueResult | RevokeResult> {
    const reason = `the PKI queue "${item.queue}" gave up after ${item.attempts} attempts: ${detail}`;
    this.logger.warn({ tenant: item.tenant, request: item.requestId, connector: item.connector, attempts: item.attempts, detail }, 'PKI queue gave up');
    const final = { status: 'rejected' as const, reason };
    await this.complete(item, final, reason);
    return final;
  }

  // --- the job ---

  /** Defines `pki.queue` and, on a node that runs jobs, its schedule; stops with the HTTP server. */
  async install(onClose: (hook: () => Promise<void>) => void): Promise<void> {
    const { scheduler, config } = this.services;
    scheduler.define(QUEUE_JOB, () => this.pass());
    if (this.services.runsJobs) await scheduler.every(config.pki.queue.pollEveryMs, QUEUE_JOB);
    onClose(async () => {
      this.stopping = true;
      clearTimeout(this.wakeTimer);
      await this.running?.catch(() => undefined);
    });
  }

  /** Runs due items until none is due. One pass at a time per node; one asked for meanwhile runs after it. */
  pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.drain();
        } while (this.again && !this.stopping);
        await this.wakeForNext();
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** Claims and runs due items in batches; answers how many attempts were made. */
  async drain(): Promise<number> {
    let attempted = 0;
    while (!this.stopping) {
      const claimed = await this.claimBatch();
      if (claimed.length === 0) break;
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, async () => {
          for (let i = next++; i < claimed.length; i = next++) {
            const { item, permit } = claimed[i]!;
            // A database error leaves the item to its lease: tried again after it.
            await this.attempt(item)
              .catch((err: unknown) => this.logger.error({ err, request: item.requestId }, 'PKI queue attempt failed'))
              .finally(() => this.release(permit));
          }
        }),
      );
      attempted += claimed.length;
    }
    return attempted;
  }

  /**
   * Claims up to CLAIM_BATCH due items, each with a permit of its queue's throttle. Items of paused queues
   * and of queues at their throttle are left out of the read, so they cannot fill a batch and starve the
   * others; `blocked` keeps the throttled ones for the wake-up (wakeForNext).
   */
  private async claimBatch(): Promise<{ item: QueueItem; permit: Permit }[]> {
    const paused = await this.pausedRefs();
    const blocked = new Map<string, { ref: QueueRef; retryAt: number | null }>();
    const claimed: { item: QueueItem; permit: Permit }[] = [];
    // A page of candidates all of throttled queues reads again without them (a few times at most).
    for (let page = 0; page < 4 && claimed.length === 0 && !this.stopping; page++) {
      const skip = [...paused, ...[...blocked.values()].map((b) => b.ref)];
      const candidates = await this.items.dueCandidates(CLAIM_BATCH * 2, skip);
      const blockedBefore = blocked.size;
      for (const c of candidates) {
        if (claimed.length >= CLAIM_BATCH) break;
        const key = `${c.tenant}\u0000${c.queue}`;
        if (blocked.has(key)) continue;
        const admission = await this.throttle.admit(c.tenant, c.queue, await this.repository.queueRules(c.tenant, c.queue));
        if (admission.permit === null) {
          blocked.set(key, { ref: { tenant: c.tenant, queue: c.queue }, retryAt: admission.retryAt });
          continue;
        }
        const item = await this.items.claim(c.id, this.leaseMs);
        if (item) claimed.push({ item, permit: admission.permit });
        else await this.release(admission.permit);
      }
      if (candidates.length < CLAIM_BATCH * 2 || blocked.size === blockedBefore) break;
    }
    this.blocked = [...blocked.values()];
    return claimed;
  }

  /** The paused queues of every tenant. */
  private async pausedRefs(): Promise<QueueRef[]> {
    return [...(await this.repository.pausedQueues())].map((key) => {
      const [tenant, queue] = key.split('\u0000') as [string, string];
      return { tenant, queue };
    });
  }

  private async attempt(item: QueueItem): Promise<void> {
    const answer = await this.call(item);
    faultPoint('pki-after-connector-answer');
    await this.apply(item, answer);
  }

  /** An item due before the next scheduled run wakes this node's job at its time (nodes that run jobs only). */
  wake(at: number): void {
    if (this.stopping || !this.services.runsJobs) return;
    if (!this.services.scheduler.agenda.isActiveJobProcessor()) return;
    const wait = Math.max(0, at - this.services.clock());
    if (wait >= this.services.config.pki.queue.pollEveryMs) return;
    if (this.wakeTimer && this.wakeAt <= at) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wakeAt = Infinity;
      this.pass().catch((err: unknown) => this.logger.error({ err }, 'PKI queue pass failed'));
    }, wait + 5);
    this.wakeTimer.unref();
  }

  /**
   * Wakes for the next due item of a queue that can run it, or when a throttled queue's window ends. Items
   * of paused queues, and of queues whose calls are all in flight, are left out: waking for them would find
   * nothing to run and wake again at once. A call ending on this node wakes the job (release); one ending
   * on another node, a resumed queue, are seen at the next scheduled run.
   */
  private async wakeForNext(): Promise<void> {
    if (this.stopping) return;
    const paused = await this.pausedRefs();
    const due = await this.items.nextDue([...paused, ...this.blocked.map((b) => b.ref)]);
    const windows = this.blocked.flatMap((b) => (b.retryAt === null ? [] : [b.retryAt]));
    const at = [...(due === null ? [] : [due]), ...windows];
    if (at.length > 0) this.wake(Math.min(...at));
  }
}
