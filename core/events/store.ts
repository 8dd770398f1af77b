import { hostname } from 'node:os';
import type { Knex } from 'knex';
import type { DatabaseEngine } from '../db/connection.js';
import { newId } from '../db/ids.js';
import { finishBeforeCommit } from '../db/group-commit.js';
import { insertRows, updateWhere } from '../db/statements.js';
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

export interface EventRow {
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
  /** The node that wrote the row (not hashed; NULL before migration 0018). */
  node?: string | null;
  /** When the event may be purged, epoch ms; NULL: kept (not hashed). */
  remove_at?: number | string | null;
}

/** knex's nested transactions (savepoints) name the transaction they are in. */
type Nested = { parentTransaction?: Nested };

/** A row of `events` as the store reads it. */
export const eventOfRow = (r: EventRow): StoredEvent => ({
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

/** The row of `events` that stores an event. */
export const rowOfEvent = (e: StoredEvent): EventRow => ({
  id: e.id,
  seq: e.seq,
  tenant: e.tenant,
  code: e.code,
  module: e.module,
  status: e.status,
  principal: e.principal,
  object_type: e.objectType,
  object_id: e.objectId,
  payload: e.payload,
  created_at: e.createdAt,
  prev_hash: e.prevHash,
  hash: e.hash,
});

/**
 * The append-only event store. Each event carries the hash of the previous one; appends take a lock on
 * the single chain-head row (SELECT … FOR UPDATE on MySQL; on SQLite a write to it first takes the
 * database's write lock), so concurrent writers, in one process or several, extend one unbroken chain.
 */
/** Most appends one group commit carries (bounds the transaction and the wait of the last one in). */
const MAX_GROUP = 256;

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
    /** Written with each event as `node` (Horizon's event object): this process, `host:pid` by default. */
    private readonly node: string = `${hostname()}:${process.pid}`,
  ) {}

  /** The head each open transaction wrote last (it holds the head until it ends). */
  private readonly heads = new WeakMap<object, { seq: number; hash: string }>();
  /** Rows of a group commit's transaction not inserted yet: written, with the head, just before its commit. */
  private readonly unwritten = new WeakMap<object, EventRow[]>();
  /** Events `record` held back in a group commit's transaction: chained (head read, hashes) at its end. */
  private readonly unchained = new WeakMap<object, NewEventInput[]>();

  /** Appends waiting for the batch in flight to commit; they go together in the next one. */
  private pending: { input: NewEventInput; resolve: (e: StoredEvent) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  /**
   * Appends one event. With `trx`, inside the caller's transaction: the event exists only if the caller's
   * other writes do (an expiry notice and its event, say), and the chain head stays locked until it ends.
   *
   * Without `trx`, appends are committed in groups: while one transaction holds the chain head, the appends
   * that arrive meanwhile wait and then share the next transaction (one head lock, one multi-row INSERT,
   * one commit). The chain is one sequence, so writers take turns anyway; grouping makes each turn carry
   * every waiting event instead of one (bench/events: 32 writers on MariaDB). A caller's promise settles
   * when its own event is committed, or fails with its own error (a group that fails is retried one event
   * per transaction, so one bad event fails alone).
   */
  async append(input: NewEventInput, options: { trx?: Knex.Transaction } = {}): Promise<StoredEvent> {
    const { trx } = options;
    if (!trx) {
      return new Promise<StoredEvent>((resolve, reject) => {
        this.pending.push({ input, resolve, reject });
        if (!this.flushing) void this.flush();
      });
    }
    return (await this.write(trx, [input]))[0]!;
  }

  /**
   * Appends several events, in order, inside the caller's transaction `trx` under one lock of the chain head
   * (one read of the head, one multi-row INSERT, one head update): what `append` with `{trx}` does one by
   * one, for a caller that writes more than one event in a transaction. `written`: `trx` has written already
   * (on SQLite it holds the write lock, so the head it reads is the newest: no lock-taking write first).
   */
  async appendAll(inputs: readonly NewEventInput[], options: { trx: Knex.Transaction; written?: boolean }): Promise<StoredEvent[]> {
    const { trx } = options;
    if (inputs.length === 0) return [];
    return this.write(trx, inputs, options.written ?? false);
  }

  /**
   * `appendAll` for a caller that needs no answer. In a group commit's transaction of several works the
   * events are chained only at the group's end (core/db/group-commit.ts: the head read and locked there,
   * the hashes, one INSERT, the head update), so the head is held from then to the commit, not from the
   * first work's events on: groups committing on other connections (MySQL/MariaDB) wait for it briefly.
   * Elsewhere it is appendAll. Events appended meanwhile in the same transaction come after these.
   */
  async record(inputs: readonly NewEventInput[], options: { trx: Knex.Transaction; written?: boolean }): Promise<void> {
    const { trx } = options;
    if (inputs.length === 0) return;
    this.checkAncestors(trx);
    if (finishBeforeCommit(trx, this, (t) => this.finish(t))) {
      const held = this.unchained.get(trx);
      if (held) held.push(...inputs);
      else this.unchained.set(trx, [...inputs]);
      return;
    }
    await this.write(trx, inputs, options.written ?? false);
  }

  private notify(events: readonly StoredEvent[]): void {
    for (const event of events) for (const listener of this.appended) listener(event);
  }

  /** Commits the waiting appends, a group at a time, until none waits. */
  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const group = this.pending.splice(0, MAX_GROUP);
        try {
          const stored = await this.knex.transaction((t) => this.write(t, group.map((g) => g.input)));
          group.forEach((g, i) => g.resolve(stored[i]!));
        } catch (err) {
          if (group.length === 1) {
            group[0]!.reject(err);
            continue;
          }
          for (const g of group) {
            try {
              const [stored] = await this.knex.transaction((t) => this.write(t, [g.input]));
              g.resolve(stored!);
            } catch (own) {
              g.reject(own);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** A savepoint of a group transaction holding events back would read an older head than they end at. */
  private checkAncestors(trx: Knex.Transaction): void {
    for (let up = (trx as Nested).parentTransaction; up; up = up.parentTransaction) {
      if (this.unwritten.has(up) || this.unchained.has(up)) throw new Error('events: an append in a savepoint of a group commit transaction that holds unwritten events');
    }
  }

  /** Writes `inputs` as the next events of the chain, in order, inside `trx` (which ends holding the head). */
  private async write(trx: Knex.Transaction, inputs: readonly NewEventInput[], written = false): Promise<StoredEvent[]> {
    this.checkAncestors(trx);
    // Events `record` held back in this transaction come first.
    const held = this.unchained.get(trx);
    if (held) {
      this.unchained.delete(trx);
      await this.chain(trx, held, written);
    }
    return this.chain(trx, inputs, written);
  }

  /** Chains `inputs` after the head `trx` holds (read first if it holds none), and writes or holds back the rows. */
  private async chain(trx: Knex.Transaction, inputs: readonly NewEventInput[], written: boolean): Promise<StoredEvent[]> {
    // SQLite: take the write lock before reading the head. A transaction that reads first holds a snapshot,
    // and when another process commits meanwhile its first write fails at once (SQLITE_BUSY_SNAPSHOT)
    // instead of waiting; a write first waits (busy_timeout) and then reads the newest head. A transaction
    // that has written holds the lock already.
    // A transaction that wrote the head already holds it (lock and value): no second read (a group commit
    // carries the events of many works). A savepoint that appends makes its ancestors read again.
    for (let up = (trx as Nested).parentTransaction; up; up = up.parentTransaction) this.heads.delete(up);
    let head: { seq: number | string; hash: string } | undefined = this.heads.get(trx);
    if (!head) {
      if (this.engine === 'sqlite' && !written) await trx('event_chain').where({ id: 1 }).update({ seq: trx.raw('??', ['seq']) });
      const headQuery = trx('event_chain').where({ id: 1 }).first('seq', 'hash');
      head = (await (this.engine === 'mysql' ? headQuery.forUpdate() : headQuery)) as { seq: number | string; hash: string } | undefined;
    }
    if (!head) throw new Error('event chain head is missing: migrations not applied');
    let seq = Number(head.seq);
    let prevHash = head.hash;
    const stored: StoredEvent[] = [];
    for (const input of inputs) {
      const createdAt = this.clock();
      const fields: ChainedFields = {
        id: newId(createdAt),
        seq: ++seq,
        tenant: input.tenant,
        code: input.code,
        module: input.module,
        status: input.status,
        principal: input.principal ?? null,
        objectType: input.objectType ?? null,
        objectId: input.objectId ?? null,
        payload: JSON.stringify(input.payload ?? {}),
        createdAt,
        prevHash,
      };
      prevHash = eventHash(fields);
      stored.push({ ...fields, hash: prevHash });
    }
    const rows = stored.map((e) => ({ ...rowOfEvent(e), node: this.node }));
    this.heads.set(trx, { seq, hash: prevHash });
    if (this.appended.size > 0) trx.executionPromise.then(() => this.notify(stored), () => undefined);
    // In a transaction of several works (GroupCommit), the events of all of them are written once, last.
    if (finishBeforeCommit(trx, this, (t) => this.finish(t))) {
      const waiting = this.unwritten.get(trx);
      if (waiting) waiting.push(...rows);
      else this.unwritten.set(trx, rows);
      return stored;
    }
    await this.writeRows(trx, rows);
    return stored;
  }

  /** The end of a group transaction: the events held back chained, then every row not written yet. */
  private async finish(trx: Knex.Transaction): Promise<void> {
    const held = this.unchained.get(trx);
    if (held) {
      this.unchained.delete(trx);
      await this.chain(trx, held, false);
    }
    const rows = this.unwritten.get(trx);
    this.unwritten.delete(trx);
    if (rows) await this.writeRows(trx, rows);
  }

  /** The rows, and the head they end at. */
  private async writeRows(trx: Knex.Transaction, rows: readonly EventRow[]): Promise<void> {
    await insertRows(trx, 'events', rows);
    const last = rows[rows.length - 1]!;
    await updateWhere(trx, 'event_chain', { id: 1 }, { seq: last.seq, hash: last.hash });
  }

  async get(tenant: string, id: string): Promise<StoredEvent | undefined> {
    const row = (await this.knex('events').where({ tenant, id }).first()) as EventRow | undefined;
    return row ? eventOfRow(row) : undefined;
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
    return rows.map(eventOfRow);
  }

  /** The events at these seqs (checkpoint checks), by seq. */
  async atSeqs(seqs: readonly number[]): Promise<Map<number, StoredEvent>> {
    if (seqs.length === 0) return new Map();
    const rows = (await this.knex('events').whereIn('seq', seqs)) as EventRow[];
    return new Map(rows.map((r) => [Number(r.seq), eventOfRow(r)]));
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
