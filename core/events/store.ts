import type { Knex } from 'knex';
import type { DatabaseEngine } from '../db/connection.js';
import { newId } from '../db/ids.js';
import { ChainWalker, eventHash, type ChainedFields, type HashedEvent } from './chain.js';

export type EventStatus = 'success' | 'failure' | 'warning';

export interface NewEventInput {
  tenant: string;
  code: string;
  module: string;
  status: EventStatus;
  principal?: string | null;
  objectType?: string | null;
  objectId?: string | null;
  payload?: Record<string, unknown>;
}

/** An event as stored: its chained fields and its hash. */
export type StoredEvent = HashedEvent;

interface EventRow {
  id: string;
  seq: number | string;
  tenant: string;
  code: string;
  module: string;
  status: string;
  principal: string | null;
  object_type: string | null;
  object_id: string | null;
  payload: string;
  created_at: number | string;
  prev_hash: string;
  hash: string;
}

const fromRow = (r: EventRow): StoredEvent => ({
  id: r.id,
  seq: Number(r.seq),
  tenant: r.tenant,
  code: r.code,
  module: r.module,
  status: r.status,
  principal: r.principal,
  objectType: r.object_type,
  objectId: r.object_id,
  payload: r.payload,
  createdAt: Number(r.created_at),
  prevHash: r.prev_hash,
  hash: r.hash,
});

/**
 * The append-only event store. Each event carries the hash of the previous one; appends take a lock on
 * the single chain-head row (SELECT … FOR UPDATE on MySQL; on SQLite a write to it first takes the
 * database's write lock), so concurrent writers, in one process or several, extend one unbroken chain.
 */
export class EventStore {
  /**
   * Called after each append is committed (trigger dispatch nudges itself with it). A listener only
   * hints: whoever reacts to events reads them from the table, so a missed call loses nothing.
   */
  readonly appended = new Set<(event: StoredEvent) => void>();

  constructor(
    private readonly knex: Knex,
    private readonly engine: DatabaseEngine,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Appends one event. With `trx`, inside the caller's transaction: the event exists only if the caller's
   * other writes do (an expiry notice and its event, say), and the chain head stays locked until it ends.
   */
  async append(input: NewEventInput, options: { trx?: Knex.Transaction } = {}): Promise<StoredEvent> {
    const { trx } = options;
    const stored = await (trx ? this.write(trx, input) : this.knex.transaction((t) => this.write(t, input)));
    if (this.appended.size > 0) {
      const notify = () => {
        for (const listener of this.appended) listener(stored);
      };
      if (trx) trx.executionPromise.then(notify, () => undefined);
      else notify();
    }
    return stored;
  }

  private async write(trx: Knex.Transaction, input: NewEventInput): Promise<StoredEvent> {
    const payload = JSON.stringify(input.payload ?? {});
    // SQLite: take the write lock before reading the head. A transaction that reads first holds a snapshot,
    // and when another process commits meanwhile its first write fails at once (SQLITE_BUSY_SNAPSHOT)
    // instead of waiting; a write first waits (busy_timeout) and then reads the newest head.
    if (this.engine === 'sqlite') await trx('event_chain').where({ id: 1 }).update({ seq: trx.raw('??', ['seq']) });
    const headQuery = trx('event_chain').where({ id: 1 }).first('seq', 'hash');
    const head = (await (this.engine === 'mysql' ? headQuery.forUpdate() : headQuery)) as { seq: number | string; hash: string } | undefined;
    if (!head) throw new Error('event chain head is missing: migrations not applied');
    const createdAt = this.clock();
    const fields: ChainedFields = {
      id: newId(createdAt),
      seq: Number(head.seq) + 1,
      tenant: input.tenant,
      code: input.code,
      module: input.module,
      status: input.status,
      principal: input.principal ?? null,
      objectType: input.objectType ?? null,
      objectId: input.objectId ?? null,
      payload,
      createdAt,
      prevHash: head.hash,
    };
    const hash = eventHash(fields);
    await trx('events').insert({
      id: fields.id,
      seq: fields.seq,
      tenant: fields.tenant,
      code: fields.code,
      module: fields.module,
      status: fields.status,
      principal: fields.principal,
      object_type: fields.objectType,
      object_id: fields.objectId,
      payload,
      created_at: createdAt,
      prev_hash: fields.prevHash,
      hash,
    });
    await trx('event_chain').where({ id: 1 }).update({ seq: fields.seq, hash });
    return { ...fields, hash };
  }

  async get(tenant: string, id: string): Promise<StoredEvent | undefined> {
    const row = (await this.knex('events').where({ tenant, id }).first()) as EventRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The chain head: the last appended seq and hash (seq 0 and the genesis hash before any event). */
  async head(): Promise<{ seq: number; hash: string }> {
    const head = (await this.knex('event_chain').where({ id: 1 }).first('seq', 'hash')) as { seq: number | string; hash: string } | undefined;
    if (!head) throw new Error('event chain head is missing: migrations not applied');
    return { seq: Number(head.seq), hash: head.hash };
  }

  /** Up to `limit` events with seq > afterSeq (and <= toSeq), in seq order: the bounded page of every chain walk. */
  async page(afterSeq: number, limit: number, toSeq = Number.MAX_SAFE_INTEGER): Promise<StoredEvent[]> {
    const rows = (await this.knex('events').where('seq', '>', afterSeq).andWhere('seq', '<=', toSeq).orderBy('seq').limit(limit)) as EventRow[];
    return rows.map(fromRow);
  }

  /** The events at these seqs (checkpoint checks), by seq. */
  async atSeqs(seqs: readonly number[]): Promise<Map<number, StoredEvent>> {
    if (seqs.length === 0) return new Map();
    const rows = (await this.knex('events').whereIn('seq', seqs)) as EventRow[];
    return new Map(rows.map((r) => [Number(r.seq), fromRow(r)]));
  }

  /**
   * Walks the chain in seq order in bounded pages and answers the first broken link, if any: a hash that
   * does not match the fields, a prev_hash that does not match the previous event, a gap in seq, or a
   * head that does not match the last event (a removed tail). The integrity job (core/events/integrity)
   * does the same walk with progress and the signed checkpoints.
   */
  async verify(pageSize = 1000): Promise<{ ok: true; count: number } | { ok: false; count: number; seq: number; id: string | null; reason: string }> {
    const walker = new ChainWalker();
    for (;;) {
      const events = await this.page(walker.last.seq, pageSize);
      for (const event of events) {
        const broken = walker.next(event);
        if (broken) return { ok: false, count: walker.checked, ...broken };
      }
      if (events.length < pageSize) break;
    }
    const count = walker.checked;
    const head = await this.head();
    if (head.seq !== count || head.hash !== walker.last.hash) {
      return { ok: false, count, seq: count + 1, id: null, reason: `chain head is at ${head.seq} but the events end at ${count}` };
    }
    return { ok: true, count };
  }
}
