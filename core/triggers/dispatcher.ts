import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { DeliveryQueue, NewDelivery } from './deliveries.js';
import { TRIGGER_EVENT_NAMES, triggerEventOf } from './events.js';
import { certificateOfEvent, certificatesMatching } from './matching.js';
import type { Trigger } from './model.js';
import type { TriggerRepository } from './repository.js';

/** Events read per transaction. */
export const DISPATCH_PAGE = 500;
const CURSOR = 'dispatch';

interface EventRow {
  id: string;
  seq: number | string;
  tenant: string;
  code: string;
  object_type: string | null;
  object_id: string | null;
  payload: string;
  created_at: number | string;
}

/** A candidate delivery before the trigger's query has been checked. */
interface Candidate {
  trigger: Trigger;
  delivery: NewDelivery;
}

/**
 * Turns events into deliveries. A cursor (trigger_cursor.seq) says how far the event store has been
 * read; each page is one transaction that takes the cursor row first (an UPDATE: a write lock on both
 * engines, so two dispatchers, on one node or two, take turns), reads the next events, queues one
 * delivery per (trigger, event, certificate) under a unique dedupe key, and moves the cursor past
 * them. A crash before the commit leaves the cursor where it was; nothing is skipped or queued twice.
 */
export class Dispatcher {
  constructor(
    private readonly knex: Knex,
    private readonly triggers: TriggerRepository,
    private readonly queue: DeliveryQueue,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {}

  /** Dispatches pages until the cursor reaches the end of the store; answers how many deliveries were queued. */
  async dispatch(isStopping: () => boolean = () => false): Promise<number> {
    let queued = 0;
    while (!isStopping()) {
      const page = await this.dispatchPage();
      queued += page.queued;
      if (page.events < DISPATCH_PAGE) break;
    }
    return queued;
  }

  /** One page: answers how many events were read and deliveries queued. */
  async dispatchPage(): Promise<{ events: number; queued: number }> {
    return this.knex.transaction(async (trx) => {
      // The lock first: the cursor row is written before it is read.
      await trx('trigger_cursor').where({ name: CURSOR }).update({ updated_at: this.clock() });
      const cursor = (await trx('trigger_cursor').where({ name: CURSOR }).first('seq')) as { seq: number | string };
      // Triggers and events from one snapshot: a trigger not yet visible has its creation event, and
      // every event after it, not yet visible either (appends hold the chain head until commit).
      const triggers = await this.triggers.enabledFor(TRIGGER_EVENT_NAMES, trx);
      const from = Number(cursor.seq);
      if (triggers.length === 0) {
        // Nothing to match: move to the head without reading the events.
        const head = (await trx('event_chain').where({ id: 1 }).first('seq')) as { seq: number | string };
        if (Number(head.seq) > from) await trx('trigger_cursor').where({ name: CURSOR }).update({ seq: Number(head.seq) });
        return { events: 0, queued: 0 };
      }
      const events = (await trx('events')
        .where('seq', '>', from)
        .orderBy('seq')
        .limit(DISPATCH_PAGE)
        .select('id', 'seq', 'tenant', 'code', 'object_type', 'object_id', 'payload', 'created_at')) as EventRow[];
      if (events.length === 0) return { events: 0, queued: 0 };
      const deliveries = await this.match(trx, events, triggers);
      if (deliveries.length > 0) await this.queue.enqueue(trx, deliveries);
      await trx('trigger_cursor').where({ name: CURSOR }).update({ seq: Number(events[events.length - 1]!.seq) });
      if (deliveries.length > 0) this.logger.debug({ from, to: Number(events[events.length - 1]!.seq), queued: deliveries.length }, 'trigger deliveries queued');
      return { events: events.length, queued: deliveries.length };
    });
  }

  /** The deliveries a page of events asks for: event → trigger event, thresholds, then each trigger's query. */
  private async match(trx: Knex.Transaction, events: readonly EventRow[], triggers: readonly Trigger[]): Promise<NewDelivery[]> {
    const candidates: Candidate[] = [];
    for (const row of events) {
      const name = triggerEventOf(row.code);
      if (!name) continue;
      const seq = Number(row.seq);
      const payload = parse(row.payload);
      const certificateId = certificateOfEvent({ objectType: row.object_type, objectId: row.object_id, payload });
      const threshold = name === 'expiring' && typeof payload.thresholdDays === 'number' ? payload.thresholdDays : null;
      // A certificate first seen inside several thresholds raises the smallest; the others ride along.
      const crossed = threshold === null ? [] : [threshold, ...(Array.isArray(payload.passedThresholds) ? payload.passedThresholds.filter((d): d is number => typeof d === 'number') : [])];
      for (const trigger of triggers) {
        if (trigger.tenant !== row.tenant || !trigger.events.includes(name)) continue;
        // A trigger reacts to what happens after it was created, not to the history before it.
        if (seq <= trigger.createdSeq) continue;
        if (name === 'expiring' && !crossed.some((days) => trigger.thresholds.includes(days))) continue;
        if (trigger.query !== null && certificateId === null) continue;
        candidates.push({
          trigger,
          delivery: {
            tenant: row.tenant,
            dedupeKey: `${trigger.id}:${row.id}:${certificateId ?? '-'}`,
            triggerId: trigger.id,
            triggerName: trigger.name,
            triggerEvent: name,
            thresholdDays: threshold,
            eventId: row.id,
            eventSeq: Number(row.seq),
            certificateId,
          },
        });
      }
    }
    // One query per trigger for the page's certificates, not one per event.
    const admitted = new Map<string, Set<string>>();
    const now = this.clock();
    for (const trigger of new Set(candidates.filter((c) => c.trigger.query !== null).map((c) => c.trigger))) {
      const ids = [...new Set(candidates.filter((c) => c.trigger === trigger).map((c) => c.delivery.certificateId!))];
      try {
        admitted.set(trigger.id, await certificatesMatching(trx as unknown as Knex, trigger.tenant, ids, trigger.query, now));
      } catch (err) {
        // A stored query that no longer parses (the language changed) admits nothing, loudly.
        this.logger.warn({ trigger: trigger.name, err: (err as Error).message }, 'trigger query does not apply: the trigger matches nothing');
        admitted.set(trigger.id, new Set());
      }
    }
    return candidates.filter((c) => c.trigger.query === null || admitted.get(c.trigger.id)!.has(c.delivery.certificateId!)).map((c) => c.delivery);
  }
}

function parse(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
