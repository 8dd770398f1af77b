import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { parseFiniteDuration } from '../../http/finite-duration.js';
import type { QueueLimits } from './model.js';

const SLOTS = 'pki_queue_slots';

/** A connector call's hold on its queue's throttle, released once the call's answer is applied. */
export interface Permit {
  /** Whether the queue has a throttle at all (a release then may let a waiting item run). */
  readonly throttled: boolean;
  release(): Promise<void>;
}

/** A permit, or none: the queue is at its throttle until `retryAt` (null: until one of its calls ends). */
export type Admission = { permit: Permit } | { permit: null; retryAt: number | null };

const UNTHROTTLED: Permit = { throttled: false, release: async () => undefined };

interface SlotRow {
  slot: number | string;
  holder: string | null;
  held_until: number | string | null;
  started_at: number | string | null;
}

/**
 * The throttle of PKI queues (Horizon's throttleParallelism / throttleDuration / clusterWide,
 * horizon-mcp src/tools/config/pki-queues.ts): every connector call of a queue (the first attempt of a new
 * item and each attempt of the job) first takes a permit. With throttleParallelism N at most N calls of
 * the queue are in flight at once; with throttleDuration D as well, at most N calls start within any D
 * (each of the N places is taken again only D after it was last taken). A queue at its throttle leaves its
 * items waiting; the job runs them when a place frees.
 *
 * clusterWide false: the places are counted on each node (in memory), so a cluster of K nodes makes up to
 * K × N calls. clusterWide true: they are rows of `pki_queue_slots` shared by every node, taken by a
 * conditional UPDATE (one node wins a place), held until the call ends or, if its node dies, until the
 * lease passes. Lowering throttleParallelism while calls run: calls holding places above the new N finish
 * without being counted, so for that moment more than N may be in flight.
 */
export class QueueThrottle {
  /** Node-local places: calls in flight and recent starts, by tenant and queue. */
  private readonly local = new Map<string, { running: number; starts: number[] }>();

  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
    private readonly leaseMs: () => number,
  ) {}

  async admit(tenant: string, queue: string, limits: QueueLimits): Promise<Admission> {
    const n = limits.throttleParallelism;
    if (n === null) return { permit: UNTHROTTLED };
    const windowMs = limits.throttleDuration === null ? null : parseFiniteDuration(limits.throttleDuration);
    return limits.clusterWide ? this.shared(tenant, queue, n, windowMs) : this.onNode(tenant, queue, n, windowMs);
  }

  private onNode(tenant: string, queue: string, n: number, windowMs: number | null): Admission {
    const key = `${tenant}\u0000${queue}`;
    let places = this.local.get(key);
    if (!places) this.local.set(key, (places = { running: 0, starts: [] }));
    const now = this.clock();
    if (windowMs !== null) places.starts = places.starts.filter((at) => at > now - windowMs);
    if (places.running >= n) return { permit: null, retryAt: null };
    if (windowMs !== null && places.starts.length >= n) return { permit: null, retryAt: places.starts[0]! + windowMs };
    places.running++;
    if (windowMs !== null) places.starts.push(now);
    const held = places;
    let released = false;
    return {
      permit: {
        throttled: true,
        release: async () => {
          if (released) return;
          released = true;
          held.running--;
        },
      },
    };
  }

  private async shared(tenant: string, queue: string, n: number, windowMs: number | null): Promise<Admission> {
    const now = this.clock();
    const holder = newId(now);
    const take = { holder, held_until: now + this.leaseMs(), started_at: now };
    const rows = (await this.knex(SLOTS).where({ tenant, queue }).andWhere('slot', '<', n).orderBy('slot').select('slot', 'holder', 'held_until', 'started_at')) as SlotRow[];
    const heldNow = (r: SlotRow): boolean => r.holder !== null && Number(r.held_until) >= now;
    const inWindow = (r: SlotRow): boolean => windowMs !== null && r.started_at !== null && Number(r.started_at) > now - windowMs;
    for (const r of rows) {
      if (heldNow(r) || inWindow(r)) continue;
      // The same conditions again, in the UPDATE: of two nodes taking this place, one changes the row.
      let update = this.knex(SLOTS)
        .where({ tenant, queue, slot: Number(r.slot) })
        .andWhere((q) => q.whereNull('holder').orWhere('held_until', '<', now));
      if (windowMs !== null) update = update.andWhere((q) => q.whereNull('started_at').orWhere('started_at', '<=', now - windowMs));
      if ((await update.update(take)) === 1) return { permit: this.sharedPermit(tenant, queue, Number(r.slot), holder) };
    }
    // Places not used yet are made on first use (a queue of N = 1000 that never runs 1000 calls has fewer
    // rows); the lowest missing ones are among the first rows.length + 1 numbers.
    const existing = new Set(rows.map((r) => Number(r.slot)));
    for (let slot = 0; slot < Math.min(n, rows.length + 1); slot++) {
      if (existing.has(slot)) continue;
      try {
        await this.knex(SLOTS).insert({ tenant, queue, slot, ...take });
        return { permit: this.sharedPermit(tenant, queue, slot, holder) };
      } catch (err) {
        // Another node made and took it meanwhile.
        if (!isUniqueViolation(err)) throw err;
      }
    }
    // Every place is taken: the earliest a place's window ends (a held one frees when its call ends).
    const ends = rows.filter((r) => !heldNow(r) && inWindow(r)).map((r) => Number(r.started_at) + windowMs!);
    return { permit: null, retryAt: ends.length > 0 ? Math.min(...ends) : null };
  }

  private sharedPermit(tenant: string, queue: string, slot: number, holder: string): Permit {
    let released = false;
    return {
      throttled: true,
      release: async () => {
        if (released) return;
        released = true;
        // started_at stays: the window of this place counts from when it was taken.
        await this.knex(SLOTS).where({ tenant, queue, slot, holder }).update({ holder: null, held_until: null });
      },
    };
  }
}
