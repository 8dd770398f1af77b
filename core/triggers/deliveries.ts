import type { Knex } from 'knex';
import { newId } from '../db/ids.js';

const TABLE = 'trigger_deliveries';

export type DeliveryStatus = 'pending' | 'sending' | 'delivered' | 'failed' | 'canceled';

/** One attempt of a delivery, kept in the row's history. */
export interface DeliveryAttempt {
  attempt: number;
  at: number;
  delivered: boolean;
  retryable: boolean;
  detail: string | null;
  /** When the next attempt is due, if one is. */
  nextAttemptAt: number | null;
}

/** A queued delivery: what was queued, and where its attempts stand. */
export interface Delivery extends NewDelivery {
  id: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  leaseUntil: number | null;
  lastError: string | null;
  history: DeliveryAttempt[];
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

/** What the dispatcher (or a run) queues. */
export interface NewDelivery {
  tenant: string;
  dedupeKey: string;
  triggerId: string;
  triggerName: string;
  triggerEvent: string;
  thresholdDays: number | null;
  eventId: string | null;
  eventSeq: number | null;
  certificateId: string | null;
}

interface DeliveryRow {
  id: string;
  tenant: string;
  dedupe_key: string;
  trigger_id: string;
  trigger_name: string;
  trigger_event: string;
  threshold_days: number | null;
  event_id: string | null;
  event_seq: number | string | null;
  certificate_id: string | null;
  status: string;
  attempts: number;
  next_attempt_at: number | string;
  lease_until: number | string | null;
  last_error: string | null;
  history: string;
  created_at: number | string;
  updated_at: number | string;
  finished_at: number | string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

const fromRow = (r: DeliveryRow): Delivery => ({
  id: r.id,
  tenant: r.tenant,
  dedupeKey: r.dedupe_key,
  triggerId: r.trigger_id,
  triggerName: r.trigger_name,
  triggerEvent: r.trigger_event,
  thresholdDays: num(r.threshold_days),
  eventId: r.event_id,
  eventSeq: num(r.event_seq),
  certificateId: r.certificate_id,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  leaseUntil: num(r.lease_until),
  lastError: r.last_error,
  history: JSON.parse(r.history) as DeliveryAttempt[],
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  finishedAt: num(r.finished_at),
});

/**
 * The delivery queue (migration 0012). Rows are the source of truth: a worker claims a due row with a
 * conditional UPDATE (only one claimer wins), holds it for a lease, and writes the outcome; a node that
 * dies mid-send leaves a lease that expires and the row becomes due again. Nothing is kept in memory.
 */
export class DeliveryQueue {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  /**
   * Queues deliveries; one whose dedupe key is already queued is skipped (its answered id then names no row).
   * `claimedForMs` (a run, which attempts at once): the rows are written already claimed by the caller for
   * that long (status sending, attempt 1), so no worker draining the queue can take them first.
   */
  async enqueue(db: Knex | Knex.Transaction, deliveries: readonly NewDelivery[], options: { status?: DeliveryStatus; claimedForMs?: number } = {}): Promise<string[]> {
    if (deliveries.length === 0) return [];
    const now = this.clock();
    const claimed = options.claimedForMs !== undefined;
    const rows = deliveries.map((d) => ({
      id: newId(now),
      tenant: d.tenant,
      dedupe_key: d.dedupeKey,
      trigger_id: d.triggerId,
      trigger_name: d.triggerName,
      trigger_event: d.triggerEvent,
      threshold_days: d.thresholdDays,
      event_id: d.eventId,
      event_seq: d.eventSeq,
      certificate_id: d.certificateId,
      status: claimed ? 'sending' : (options.status ?? 'pending'),
      attempts: claimed ? 1 : 0,
      next_attempt_at: now,
      lease_until: claimed ? now + options.claimedForMs! : null,
      last_error: null,
      history: '[]',
      created_at: now,
      updated_at: now,
      finished_at: null,
    }));
    for (let i = 0; i < rows.length; i += 200) await db(TABLE).insert(rows.slice(i, i + 200)).onConflict('dedupe_key').ignore();
    return rows.map((r) => r.id);
  }

  async get(id: string): Promise<Delivery | null> {
    const row = (await this.knex(TABLE).where({ id }).first()) as DeliveryRow | undefined;
    return row ? fromRow(row) : null;
  }

  /** Deliveries of a tenant, newest first (for tests and operators). */
  async list(tenant: string, filter: { triggerName?: string; certificateId?: string } = {}): Promise<Delivery[]> {
    const qb = this.knex(TABLE).where({ tenant });
    if (filter.triggerName) qb.andWhere('trigger_name', filter.triggerName);
    if (filter.certificateId) qb.andWhere('certificate_id', filter.certificateId);
    return ((await qb.orderBy('created_at', 'desc').orderBy('id', 'desc')) as DeliveryRow[]).map(fromRow);
  }

  /** Sends that outlived their lease (their node died or stopped mid-send) become due again. */
  async releaseExpiredLeases(): Promise<number> {
    const now = this.clock();
    return this.knex(TABLE).where({ status: 'sending' }).andWhere('lease_until', '<', now).update({ status: 'pending', lease_until: null, next_attempt_at: now, updated_at: now });
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`: each is taken by one conditional UPDATE, so a row
   * another node claimed first is skipped. Each claim counts as an attempt.
   */
  async claimDue(limit: number, leaseMs: number): Promise<Delivery[]> {
    const now = this.clock();
    const due = (await this.knex(TABLE).where({ status: 'pending' }).andWhere('next_attempt_at', '<=', now).orderBy('next_attempt_at').limit(limit).select('id')) as { id: string }[];
    const claimed: Delivery[] = [];
    for (const { id } of due) {
      const delivery = await this.claim(id, leaseMs);
      if (delivery) claimed.push(delivery);
    }
    return claimed;
  }

  /** Claims one delivery whatever its due date (a run answers at once); null when someone else holds it. */
  async claim(id: string, leaseMs: number): Promise<Delivery | null> {
    const now = this.clock();
    const won = await this.knex(TABLE)
      .where({ id, status: 'pending' })
      .update({ status: 'sending', lease_until: now + leaseMs, attempts: this.knex.raw('attempts + 1'), updated_at: now });
    return won === 1 ? this.get(id) : null;
  }

  /** The earliest due date of a pending delivery, if any (to wake the worker for a retry). */
  async nextDue(): Promise<number | null> {
    const row = (await this.knex(TABLE).where({ status: 'pending' }).min({ at: 'next_attempt_at' }).first()) as { at: number | string | null } | undefined;
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  }

  /** Writes an attempt's outcome: pending again (a retry at `nextAttemptAt`) or final. Only while this claim holds. */
  async settle(delivery: Delivery, attempt: DeliveryAttempt, status: DeliveryStatus, db: Knex | Knex.Transaction = this.knex): Promise<void> {
    const now = this.clock();
    const history = [...delivery.history, attempt];
    const final = status !== 'pending';
    await db(TABLE)
      .where({ id: delivery.id, status: 'sending' })
      .update({
        status,
        lease_until: null,
        next_attempt_at: attempt.nextAttemptAt ?? delivery.nextAttemptAt,
        last_error: attempt.delivered ? null : attempt.detail,
        history: JSON.stringify(history),
        updated_at: now,
        finished_at: final ? now : null,
      });
  }
}
