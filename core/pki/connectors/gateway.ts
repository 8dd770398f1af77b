import { ConfigurationError, PendingError, PermanentError, TransientError, type IssueOutcome, type IssueRequest, type PkiConnector, type RevokeRequest } from '@certwright/sdk';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ProblemError } from '../../errors/index.js';
import type { CoreServices } from '../../services.js';
import { faultPoint } from './fault.js';
import type { ConnectorInstances } from './instances.js';
import { DEFAULT_QUEUE_SETTINGS, type ConnectorRecord, type QueueItem, type QueueSettings } from './model.js';
import type { QueueItems } from './queue.js';
import type { ConnectorRepository } from './repository.js';
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
  /** Told when a revocation through a connector completed (the CRL cache drops that connector's CRL). */
  onRevoked: (tenant: string, connector: string) => void = () => undefined;

  constructor(
    private readonly services: CoreServices,
    private readonly repository: ConnectorRepository,
    private readonly instances: ConnectorInstances,
    private readonly items: QueueItems,
    private readonly logger: Logger,
  ) {}

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

  /** Writes the item, makes the first attempt (unless the queue is paused) and applies its answer. */
  private async start(
    tenant: string,
    connector: string,
    operation: 'issue' | 'revoke',
    requestId: string,
    payload: Record<string, unknown>,
    write?: (trx: Knex.Transaction) => Promise<void>,
  ): Promise<IssueResult | RevokeResult> {
    let record: ConnectorRecord;
    let paused: boolean;
    try {
      ({ record } = await this.instances.resolve(tenant, connector));
      paused = await this.repository.queuePaused(tenant, record.queue);
    } catch (err) {
      // No item can be written: the caller's writes are committed alone (IssueOptions.with).
      if (write) await this.services.knex.transaction(write);
      throw err;
    }
    const { item, existing } = await this.items.insert({ tenant, requestId, connector, queue: record.queue, operation, payload }, { running: !paused, leaseMs: this.leaseMs, ...(write ? { with: write } : {}) });
    if (existing || paused) {
      if (paused && !existing) this.wake(item.nextAttemptAt ?? this.services.clock());
      return this.stateResult(item);
    }
    const answer = await this.call(item);
    faultPoint('pki-after-connector-answer');
    return this.apply(item, answer);
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
      const claimed = await this.items.claimDue(CLAIM_BATCH, this.leaseMs);
      if (claimed.length === 0) break;
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, async () => {
          for (let i = next++; i < claimed.length; i = next++) {
            const item = claimed[i]!;
            // A database error leaves the item to its lease: tried again after it.
            await this.attempt(item).catch((err: unknown) => this.logger.error({ err, request: item.requestId }, 'PKI queue attempt failed'));
          }
        }),
      );
      attempted += claimed.length;
    }
    return attempted;
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

  private async wakeForNext(): Promise<void> {
    if (this.stopping) return;
    const due = await this.items.nextDue();
    if (due !== null) this.wake(due);
  }
}
