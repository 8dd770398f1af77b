import type { Knex } from 'knex';
import type { DatabaseEngine } from '../db/connection.js';
import { newId } from '../db/ids.js';
import { eventHash, GENESIS_HASH, type ChainedFields } from './chain.js';

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

export interface StoredEvent extends ChainedFields {
  hash: string;
}

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
 * the single chain-head row (SELECT … FOR UPDATE on MySQL; SQLite serialises writers itself), so
 * concurrent writers, in one process or several, extend one unbroken chain.
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

  /**
   * Walks the chain in seq order in bounded pages and answers the first broken link, if any: a hash that
   * does not match the fields, a prev_hash that does not match the previous event, a gap in seq, or a
   * head that does not match the last event (a removed tail).
   */
  async verify(pageSize = 1000): Promise<{ ok: true; count: number } | { ok: false; count: number; seq: number; id: string | null; reason: string }> {
    let prevHash = GENESIS_HASH;
    let expectedSeq = 1;
    let count = 0;
    for (;;) {
      const rows = (await this.knex('events').where('seq', '>=', expectedSeq).orderBy('seq').limit(pageSize)) as EventRow[];
      for (const row of rows) {
        const event = fromRow(row);
        if (event.seq !== expectedSeq) return { ok: false, count, seq: expectedSeq, id: null, reason: `event ${expectedSeq} is missing` };
        if (event.prevHash !== prevHash) return { ok: false, count, seq: event.seq, id: event.id, reason: 'previous hash does not match' };
        const { hash, ...fields } = event;
        if (eventHash(fields) !== hash) return { ok: false, count, seq: event.seq, id: event.id, reason: 'event content does not match its hash' };
        prevHash = hash;
        expectedSeq++;
        count++;
      }
      if (rows.length < pageSize) break;
    }
    const head = (await this.knex('event_chain').where({ id: 1 }).first('seq', 'hash')) as { seq: number | string; hash: string };
    if (Number(head.seq) !== count || head.hash !== prevHash) {
      return { ok: false, count, seq: count + 1, id: null, reason: `chain head is at ${Number(head.seq)} but the events end at ${count}` };
    }
    return { ok: true, count };
  }
}
