import type { Knex } from 'knex';
import { retryOnConflict, type Engine, type LockStrategy } from './engine.js';
import { JOBS_TABLE, type JobRow } from './rows.js';
import { affected } from './sql.js';

export interface LockRequest {
  /** The WHERE conditions that make a row lockable; applied when choosing and again when locking. */
  guard: (qb: Knex.QueryBuilder) => void;
  /** Order of candidates (first is taken). */
  order: (qb: Knex.QueryBuilder) => void;
  /** Epoch ms written to locked_at. */
  lockTime: number;
  lastModifiedBy: string | null;
}

/** Candidates read in the first round (doubling each round), and rounds, before reporting "nothing lockable". */
const FIRST_CANDIDATES = 8;
const ROUNDS = 4;

/**
 * Finds the first row matching the guard and locks it (locked_at = lockTime) so that no concurrent caller,
 * in this process or another, locks the same row while the guard holds. Returns the locked row as stored.
 */
export async function findAndLock(knex: Knex, engine: Engine, strategy: LockStrategy, request: LockRequest): Promise<JobRow | undefined> {
  if (strategy === 'conditional-update') return eachCandidate(knex, request, (id) => conditionalUpdate(knex, id, request));
  if (engine === 'postgres') return firstSkippingLocked(knex, request);
  return eachCandidate(knex, request, (id) => candidateSkippingLocked(knex, id, request));
}

const lockColumns = (request: LockRequest) => ({ locked_at: request.lockTime, last_modified_by: request.lastModifiedBy, updated_at: Date.now() });

/** READ COMMITTED: InnoDB then takes no gap locks, and releases the rows that do not match (PostgreSQL's default anyway). */
const transact = <T>(knex: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> =>
  retryOnConflict(() => knex.transaction(fn, { isolationLevel: 'read committed' }));

async function lockRow(trx: Knex.Transaction, id: string, request: LockRequest): Promise<JobRow | undefined> {
  await trx(JOBS_TABLE).where('id', id).update(lockColumns(request));
  return (await trx(JOBS_TABLE).where('id', id).first()) as JobRow | undefined;
}

/**
 * PostgreSQL: SELECT … ORDER BY … LIMIT 1 FOR UPDATE SKIP LOCKED, then UPDATE, in one transaction. PostgreSQL
 * locks rows as they leave the sort, so it locks exactly the one row returned; concurrent pollers skip it
 * and take the next one instead of waiting.
 */
function firstSkippingLocked(knex: Knex, request: LockRequest): Promise<JobRow | undefined> {
  return transact(knex, async (trx) => {
    const [candidate] = (await trx(JOBS_TABLE).select('id').where(request.guard).modify(request.order).limit(1).forUpdate().skipLocked()) as Pick<JobRow, 'id'>[];
    return candidate ? lockRow(trx, candidate.id, request) : undefined;
  });
}

/**
 * MySQL/MariaDB with SKIP LOCKED: that same query would lock every due job of the name, since InnoDB locks
 * the rows it reads before sorting them (the ORDER BY, NULLS LAST and priority DESC, cannot follow an index)
 * and so every concurrent poller would find nothing. So candidates are read without locks, and each is
 * locked by primary key with FOR UPDATE SKIP LOCKED and the guard re-checked: exactly one row is locked, and
 * a row another poller is taking is skipped, not waited for.
 */
function candidateSkippingLocked(knex: Knex, id: string, request: LockRequest): Promise<JobRow | undefined> {
  return transact(knex, async (trx) => {
    const [row] = (await trx(JOBS_TABLE).select('id').where('id', id).where(request.guard).forUpdate().skipLocked()) as Pick<JobRow, 'id'>[];
    return row ? lockRow(trx, id, request) : undefined;
  });
}

/**
 * Without SKIP LOCKED: UPDATE … WHERE id = ? AND <guard>. The guard is evaluated again on the row as it is
 * when the UPDATE runs (SQLite writes one statement at a time; InnoDB re-reads the row under its lock), so of
 * concurrent pollers only one UPDATE matches. No multi-statement transaction: nothing is held in between.
 */
async function conditionalUpdate(knex: Knex, id: string, request: LockRequest): Promise<JobRow | undefined> {
  const updated = affected(await retryOnConflict(() => knex(JOBS_TABLE).where('id', id).where(request.guard).update(lockColumns(request))));
  return updated === 1 ? ((await knex(JOBS_TABLE).where('id', id).first()) as JobRow | undefined) : undefined;
}

/**
 * Reads candidates in order (no locks) and tries them until one is locked. Uncontended, the first candidate is
 * taken, so the order holds. When it went to another poller, pollers are racing over the same rows: the rest
 * are tried in random order, which spreads the racers instead of having them all collide on the next row
 * (while racing, which of the due jobs each poller gets is arbitrary anyway). A few rounds, each reading
 * twice as many candidates, then "nothing lockable": the next poll tries again.
 */
async function eachCandidate(knex: Knex, request: LockRequest, tryLock: (id: string) => Promise<JobRow | undefined>): Promise<JobRow | undefined> {
  for (let round = 0; round < ROUNDS; round++) {
    const limit = FIRST_CANDIDATES * 2 ** round;
    const candidates = (await knex(JOBS_TABLE).select('id').where(request.guard).modify(request.order).limit(limit)) as Pick<JobRow, 'id'>[];
    if (candidates.length === 0) return undefined;
    const [first, ...rest] = candidates.map((c) => c.id);
    for (const id of [first!, ...shuffled(rest)]) {
      const locked = await tryLock(id);
      if (locked) return locked;
    }
    if (candidates.length < limit) return undefined; // every lockable row was tried
  }
  return undefined;
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
