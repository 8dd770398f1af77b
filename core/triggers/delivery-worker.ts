import type { DeliveryResult, EventTrigger } from '@certwright/sdk';
import type { Logger } from 'pino';
import type { StoredEvent } from '../events/store.js';
import type { CertificateObject } from '../inventory/types.js';
import { recordTriggerResult } from '../inventory/trigger-results.js';
import type { CoreServices } from '../services.js';
import type { Delivery, DeliveryAttempt, DeliveryQueue } from './deliveries.js';
import { channelEventOf } from './event-shape.js';
import type { Trigger } from './model.js';
import type { TriggerRepository } from './repository.js';
import { sendOnce } from './send.js';

/** Deliveries claimed per read of the queue. */
const CLAIM_BATCH = 64;
/** Attempts in flight at once: a slow receiver holds one runner, not a whole batch. */
const CONCURRENCY = 16;

export interface DeliverySettings {
  retries: number;
  initialDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
}

/** The delay before retry number `n` (1 = the first retry): initialDelayMs × 2^(n-1), at most maxDelayMs. */
export const retryDelay = (settings: DeliverySettings, n: number): number => Math.min(settings.initialDelayMs * 2 ** Math.max(0, n - 1), settings.maxDelayMs);

/** What an attempt came to. */
export interface AttemptOutcome {
  status: 'delivered' | 'pending' | 'failed' | 'canceled';
  result: DeliveryResult;
  certificate: CertificateObject | null;
}

/**
 * Sends claimed deliveries: builds the event (with the certificate and the trigger), calls the channel
 * with a timeout, and settles the row: delivered; pending again with exponential backoff for a
 * retryable failure while retries remain; failed otherwise. A final outcome on a certificate is written
 * as its trigger result.
 */
export class DeliveryWorker {
  constructor(
    private readonly services: CoreServices,
    private readonly queue: DeliveryQueue,
    private readonly triggers: TriggerRepository,
    private readonly logger: Logger,
  ) {}

  get settings(): DeliverySettings {
    return this.services.config.triggers.delivery;
  }

  /** How long a claim holds: longer than one send may take. */
  get leaseMs(): number {
    return this.settings.timeoutMs * 2 + 5000;
  }

  /** Sends every due delivery (in batches) until none is due; answers how many were attempted. */
  async drain(isStopping: () => boolean): Promise<number> {
    await this.queue.releaseExpiredLeases();
    let attempted = 0;
    while (!isStopping()) {
      const claimed = await this.queue.claimDue(CLAIM_BATCH, this.leaseMs);
      if (claimed.length === 0) break;
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, async () => {
          for (let i = next++; i < claimed.length; i = next++) {
            const d = claimed[i]!;
            // A database error mid-attempt leaves the row to its lease: it is tried again after it.
            await this.attempt(d, this.settings.retries).catch((err: unknown) => this.logger.error({ err, delivery: d.id }, 'trigger delivery attempt failed'));
          }
        }),
      );
      attempted += claimed.length;
    }
    return attempted;
  }

  /**
   * One attempt of a claimed delivery; `retries` bounds the retries after it (0 for a run: one attempt;
   * a trigger's own `retries`, when lower, bounds them further).
   * Never throws for a delivery problem: anything unexpected leaves the row to its lease. `given` (a run):
   * the trigger and event to use, the trigger run even when disabled.
   */
  async attempt(delivery: Delivery, retries: number, given?: { trigger: Trigger; event: StoredEvent }): Promise<AttemptOutcome> {
    const at = this.services.clock();
    const trigger = given?.trigger ?? (await this.triggers.byId(delivery.triggerId));
    if (!trigger || (!given && !trigger.enabled)) {
      const result = { delivered: false, retryable: false, detail: trigger ? 'the trigger is disabled' : 'the trigger was deleted' };
      await this.queue.settle(delivery, { attempt: delivery.attempts, at, delivered: false, retryable: false, detail: result.detail, nextAttemptAt: null }, 'canceled');
      return { status: 'canceled', result, certificate: null };
    }
    const event = given?.event ?? (delivery.eventId ? await this.services.events.get(delivery.tenant, delivery.eventId) : undefined);
    const certificate = delivery.certificateId ? await this.services.inventory.repository.get(delivery.tenant, delivery.certificateId) : null;
    const result = await this.send(trigger, delivery, event, certificate);

    // A trigger's own retry count (Horizon's `retries`) lowers the configured one, never raises it.
    const budget = given ? retries : Math.min(trigger.retries ?? retries, retries);
    const retry = !result.delivered && result.retryable && delivery.attempts <= budget;
    const nextAttemptAt = retry ? at + retryDelay(this.settings, delivery.attempts) : null;
    const status = result.delivered ? 'delivered' : retry ? 'pending' : 'failed';
    const attempt: DeliveryAttempt = { attempt: delivery.attempts, at, delivered: result.delivered, retryable: result.retryable, detail: result.detail ?? null, nextAttemptAt };
    this.logger[result.delivered ? 'debug' : 'info'](
      { delivery: delivery.id, trigger: trigger.name, event: delivery.triggerEvent, attempt: delivery.attempts, status, detail: result.detail },
      'trigger delivery attempted',
    );
    if (status === 'pending' || !delivery.certificateId) {
      await this.queue.settle(delivery, attempt, status);
      return { status, result, certificate };
    }
    // A final outcome and the certificate's trigger result are written together.
    const certificateId = delivery.certificateId;
    const updated = await this.services.knex.transaction(async (trx) => {
      await this.queue.settle(delivery, attempt, status, trx);
      return recordTriggerResult(
        this.services.inventory.repository,
        delivery.tenant,
        certificateId,
        {
          name: trigger.name,
          event: delivery.triggerEvent,
          triggerType: trigger.triggerType,
          lastExecutionDate: at,
          status: result.delivered ? 'success' : 'failure',
          detail: result.detail ?? (result.delivered ? 'delivered' : 'not delivered'),
          retryable: result.retryable,
        },
        { trx },
      );
    });
    return { status, result, certificate: updated };
  }

  private async send(trigger: Trigger, delivery: Delivery, event: StoredEvent | undefined, certificate: CertificateObject | null): Promise<DeliveryResult> {
    if (!event) return { delivered: false, retryable: false, detail: 'the event is no longer in the event store' };
    const channel = this.services.provided.triggerChannels.get(trigger.channel);
    // The channel's plugin may be disabled or degraded for now: try again later.
    if (!channel) return { delivered: false, retryable: true, detail: `the ${trigger.channel} channel is not available` };
    let target: Record<string, unknown>;
    try {
      target = this.triggers.fullTarget(trigger);
    } catch {
      return { delivered: false, retryable: false, detail: 'the secrets of the trigger target do not open with the current master key' };
    }
    const about: EventTrigger = { name: trigger.name, event: delivery.triggerEvent, ...(delivery.thresholdDays !== null ? { thresholdDays: delivery.thresholdDays } : {}) };
    return sendOnce(channel, channelEventOf(event, certificate, about), target, this.settings.timeoutMs);
  }
}
