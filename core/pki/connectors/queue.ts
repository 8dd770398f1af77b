import type { Knex } from 'knex';
import { isMysql } from '../../db/dialect.js';
import { newId } from '../../db/ids.js';
import { GroupCommit } from '../../db/group-commit.js';
import { deleteWhere, insertRows } from '../../db/statements.js';
import { isUniqueViolation } from '../../db/unique.js';
import { itemOfRow, type QueueItem, type QueueItemRow, type QueueOperation } from './model.js';

const ITEMS = 'pki_queue_items';
const QUEUES = 'pki_queues';

/** Thrown inside an item's transaction when its queue already holds `size` items (gateway: PKI-QUEUE-006). */
export class QueueFull extends Error {
  constructor(
    readonly queue: string,
    readonly size: number,
  ) {
    super(`the PKI queue "${queue}" holds ${size} item(s), its size`);
    this.name = 'QueueFull';
  }
}

/** A tenant's queue, to leave out of a read (paused, or at its throttle). */
export interface QueueRef {
  tenant: string;
  queue: string;
}

/** Leaves the items of `queues` out of a query of pki_queue_items. */
const without = (query: Knex.QueryBuilder, queues: readonly QueueRef[]): Knex.QueryBuilder => {
  for (const q of queues) query.whereNot((w) => w.where({ tenant: q.tenant, queue: q.queue }));
  return query;
};

export interface NewItem {
  tenant: string;
  requestId: string;
  connector: string;
  queue: string;
  operation: QueueOperation;
  payload: Record<string, unknown>;
}

/**
 * The queue items (migration 0014). Rows are the truth: an attempt owns an item through `lease_owner` (a
 * fresh token per claim) until `lease_until`; claims are conditional UPDATEs, so of two nodes racing for
 * an item one wins. Every write of an attempt's outcome names its token: an attempt whose lease another
 * node took over writes nothing.
 */
export class QueueItems {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
    private readonly groupCommit: GroupCommit = new GroupCommit(knex),
  ) {}

  async get(tenant: string, requestId: string, db: Knex | Knex.Transaction = this.knex): Promise<QueueItem | null> {
    const row = (await db(ITEMS).where({ tenant, request_id: requestId }).first()) as QueueItemRow | undefined;
    return row ? itemOfRow(row) : null;
  }

  async byId(id: string, db: Knex | Knex.Transaction = this.knex): Promise<QueueItem | null> {
    const row = (await db(ITEMS).where({ id }).first()) as QueueItemRow | undefined;
    return row ? itemOfRow(row) : null;
  }

  /**
   * Writes (commits) a new item: running under a lease for the caller's attempt (attempt 1), or waiting and
   * due at `dueAt` (default now: `running: false`, a paused or throttled queue). A failed item of the same
   * request is replaced; an item still in flight is answered as it is (`existing`). With `size`, the queue's
   * bound: QueueFull when it holds that many items already (checked in the insert's transaction).
   */
  async insert(
    item: NewItem,
    options: { running: boolean; leaseMs: number; dueAt?: number; size?: number | null; with?: (trx: Knex.Transaction) => Promise<void> },
  ): Promise<{ item: QueueItem; existing: boolean }> {
    const size = options.size ?? null;
    for (let tries = 0; ; tries++) {
      const now = this.clock();
      const owner = newId(now);
      const row: QueueItemRow = {
        id: newId(now),
        tenant: item.tenant,
        request_id: item.requestId,
        connector: item.connector,
        queue: item.queue,
        operation: item.operation,
        payload: JSON.stringify(item.payload),
        state: options.running ? 'running' : 'waiting',
        attempts: options.running ? 1 : 0,
        next_attempt_at: options.running ? null : (options.dueAt ?? now),
        lease_until: options.running ? now + options.leaseMs : null,
        lease_owner: options.running ? owner : null,
        poll_token: null,
        last_error: null,
        created_at: now,
        updated_at: now,
      };
      const write = options.with;
      if (write) {
        // The caller's writes (a new request) and the item commit together; nothing else can hold the item
        // of a request that did not exist, so a failure is the caller's. Shared commits: concurrent
        // submissions are written by one transaction (GroupCommit: run again alone if one of them fails).
        await this.groupCommit.run(async (trx) => {
          if (size !== null) await this.requireRoom(trx, item, size);
          await insertRows(trx, ITEMS, row);
          await write(trx);
        });
        return { item: itemOfRow(row), existing: false };
      }
      try {
        if (size === null) await this.knex(ITEMS).insert(row);
        else {
          await this.knex.transaction(async (trx) => {
            await this.requireRoom(trx, item, size);
            await trx(ITEMS).insert(row);
          });
        }
        return { item: itemOfRow(row), existing: false };
      } catch (err) {
        if (!isUniqueViolation(err) || tries > 2) throw err;
        const current = await this.get(item.tenant, item.requestId);
        if (!current) continue;
        if (current.state !== 'failed') return { item: current, existing: true };
        await this.knex(ITEMS).where({ id: current.id, state: 'failed' }).delete();
      }
    }
  }

  /**
   * A queue's `size` bounds the items it holds, waiting or running (failed ones are done, only kept to be
   * seen), on every node together: the items are rows all nodes share. The count and the insert after it are
   * one transaction and, on MariaDB, the queue's row is locked first, so inserters of one queue on every
   * node count one after another (a bounded queue's inserts are serialized; unbounded queues never come
   * here). SQLite's one connection already runs the transaction alone. A request whose item is still live
   * is not refused: the insert then answers that item.
   */
  private async requireRoom(trx: Knex.Transaction, item: NewItem, size: number): Promise<void> {
    if (isMysql(trx)) await trx(QUEUES).where({ tenant: item.tenant, name: item.queue }).forUpdate().first('id');
    if (await trx(ITEMS).where({ tenant: item.tenant, request_id: item.requestId }).whereNot({ state: 'failed' }).first('id')) return;
    const row = (await trx(ITEMS).where({ tenant: item.tenant, queue: item.queue }).whereIn('state', ['waiting', 'running']).count({ n: '*' }).first()) as { n: number | string } | undefined;
    if (Number(row?.n ?? 0) >= size) throw new QueueFull(item.queue, size);
  }

  /**
   * Items that are due (waiting and due, or running past their lease: the attempt's node died), oldest change
   * first, leaving out the items of `skip` (paused queues, queues at their throttle); the job claims them.
   */
  async dueCandidates(limit: number, skip: readonly QueueRef[] = []): Promise<{ id: string; tenant: string; queue: string }[]> {
    const now = this.clock();
    const query = this.knex(ITEMS)
      .where((w) => w.where((q) => q.where({ state: 'waiting' }).andWhere('next_attempt_at', '<=', now)).orWhere((q) => q.where({ state: 'running' }).andWhere('lease_until', '<', now)))
      .orderBy('updated_at')
      .limit(limit)
      .select('id', 'tenant', 'queue');
    return (await without(query, skip)) as { id: string; tenant: string; queue: string }[];
  }

  /** Claims one item if it is due (waiting and due, or an expired lease); null when another node has it. */
  async claim(id: string, leaseMs: number): Promise<QueueItem | null> {
    const now = this.clock();
    const owner = newId(now);
    const won = await this.knex(ITEMS)
      .where({ id })
      .andWhere((q) =>
        q.where((w) => w.where({ state: 'waiting' }).andWhere('next_attempt_at', '<=', now)).orWhere((w) => w.where({ state: 'running' }).andWhere('lease_until', '<', now)),
      )
      .update({ state: 'running', lease_until: now + leaseMs, lease_owner: owner, attempts: this.knex.raw('attempts + 1'), updated_at: now });
    if (won !== 1) return null;
    const item = await this.byId(id);
    return item && item.leaseOwner === owner ? item : null;
  }

  /** The attempt's outcome is not final: the item waits until `nextAttemptAt`. Only while the claim holds. */
  async wait(item: QueueItem, update: { nextAttemptAt: number; pollToken?: string | null; lastError: string | null }): Promise<boolean> {
    const changed = await this.knex(ITEMS)
      .where({ id: item.id, state: 'running', lease_owner: item.leaseOwner })
      .update({
        state: 'waiting',
        next_attempt_at: update.nextAttemptAt,
        lease_until: null,
        lease_owner: null,
        ...(update.pollToken !== undefined ? { poll_token: update.pollToken } : {}),
        last_error: update.lastError,
        updated_at: this.clock(),
      });
    return changed === 1;
  }

  /**
   * Inside the completion transaction: locks the item if it is still there (MySQL: FOR UPDATE; SQLite's
   * transaction holds the write lock), so two completions of one request cannot both apply.
   */
  async lockForCompletion(trx: Knex.Transaction, item: QueueItem): Promise<QueueItem | null> {
    // SQLite: take the write lock first, so the read below and the writes after it are one atomic step.
    if (!isMysql(trx)) await trx(ITEMS).where({ id: item.id }).update({ updated_at: this.clock() });
    const read = trx(ITEMS).where({ id: item.id }).first();
    const row = (await (isMysql(trx) ? read.forUpdate() : read)) as QueueItemRow | undefined;
    return row ? itemOfRow(row) : null;
  }

  /**
   * Inside the completion transaction of a final answer: removes the item if it is still there and not
   * failed, and answers whether it did. The removal is the claim: its row lock (MySQL; SQLite's transaction
   * holds the write lock) makes a second completion of the request wait, then find nothing to remove, so
   * only one applies; a rollback puts the item back.
   */
  async removeLive(trx: Knex.Transaction, item: QueueItem): Promise<boolean> {
    return (await deleteWhere(trx, ITEMS, { id: item.id }, { state: 'failed' })) === 1;
  }

  async markFailed(trx: Knex.Transaction, id: string, lastError: string): Promise<void> {
    await trx(ITEMS).where({ id }).update({ state: 'failed', lease_until: null, lease_owner: null, next_attempt_at: null, last_error: lastError, updated_at: this.clock() });
  }

  /**
   * The earliest due date of a waiting item, or of a running item's lease end, if any (to wake the job),
   * leaving out the items of `skip` (queues that cannot run them now: paused, or at their throttle).
   */
  async nextDue(skip: readonly QueueRef[] = []): Promise<number | null> {
    const w = (await without(this.knex(ITEMS).where({ state: 'waiting' }), skip).min({ at: 'next_attempt_at' }).first()) as { at: number | string | null } | undefined;
    const r = (await without(this.knex(ITEMS).where({ state: 'running' }), skip).min({ at: 'lease_until' }).first()) as { at: number | string | null } | undefined;
    const dates = [w?.at, r?.at].filter((v): v is number | string => v !== null && v !== undefined).map(Number);
    return dates.length === 0 ? null : Math.min(...dates);
  }
}
