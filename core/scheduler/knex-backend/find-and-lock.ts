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
const transact = <T>(knex: Knex, fn: (trx: Knex.Transaction) => Promise<T>, sessionReadCommitted = false): Promise<T> =>
  retryOnConflict(() => knex.transaction(fn, sessionReadCommitted ? {} : { isolationLevel: 'read committed' }));

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

export interface ClaimRequest {
  name: string;
  /** Unlocked jobs due by then (epoch ms) may be claimed… */
  scanUntil: number;
  /** …and jobs locked before then, whose worker presumably died. */
  deadline: number;
  lockTime: number;
  lastModifiedBy: string | null;
  nextRunDir: 'asc' | 'desc';
  priorityDir: 'asc' | 'desc';
  /** Look for expired locks too (the caller throttles this rare check). */
  expired: boolean;
  sessionReadCommitted: boolean;
}

/** Migration 0003's index (name, disabled, locked_at, next_run_at, priority DESC): the due jobs of a name in the order they are taken. */
const DUE_INDEX = 'scheduler_jobs_due';

/**
 * Agenda's hot path (getNextJobToRun) on engines with SKIP LOCKED: one short transaction that reads the next
 * job with `… ORDER BY next_run_at, priority LIMIT 1 FOR UPDATE SKIP LOCKED`, locks it, and builds the locked
 * row in memory (BEGIN, SELECT, UPDATE, COMMIT: four round trips). So on MySQL only, which has no compound
 * statements; MariaDB's claims go through claimInOneStatement and PostgreSQL's through claimReturning, one
 * round trip each, because row locks held across round trips wait on the client: see claimInOneStatement.
 * The due branch (`locked_at IS NULL AND next_run_at <= ?`, no NULL ordering needed) follows the index
 * scheduler_jobs_due (name, disabled, locked_at, next_run_at, priority DESC) in order, so the locking read stops
 * at the first free row and concurrent pollers skip past it. Expired locks, rare, are looked at first (when the
 * caller asks) so a dead worker's job is not starved by a backlog.
 */
export function claimSkippingLocked(knex: Knex, engine: Engine, request: ClaimRequest): Promise<{ row: JobRow; wasExpired: boolean } | undefined> {
  if (engine === 'postgres') return claimReturning(knex, request);
  return transact(knex, async (trx) => {
    const next = (nullsLast: boolean) => {
      // MySQL/MariaDB: see DUE_SCAN.
      const table = engine === 'mysql' ? trx.raw(`?? ${DUE_SCAN}`, [JOBS_TABLE]) : JOBS_TABLE;
      const qb = trx.select('*').from(table).where('name', request.name).where('disabled', false);
      // A running one-off job has no next run: among expired locks it comes last.
      if (nullsLast) qb.orderByRaw('(next_run_at IS NULL)');
      return qb.orderBy('next_run_at', request.nextRunDir).orderBy('priority', request.priorityDir).limit(1).forUpdate().skipLocked();
    };
    let [row] = request.expired ? ((await next(true).where('locked_at', '<=', request.deadline)) as JobRow[]) : [];
    const wasExpired = row !== undefined;
    if (!row) [row] = (await next(false).whereNull('locked_at').where('next_run_at', '<=', request.scanUntil)) as JobRow[];
    if (!row) return undefined;
    const lock = { locked_at: request.lockTime, last_modified_by: request.lastModifiedBy, updated_at: Date.now() };
    await trx(JOBS_TABLE).where('id', row.id).update(lock);
    return { row: { ...row, ...lock }, wasExpired };
  }, request.sessionReadCommitted);
}

/**
 * PostgreSQL: each branch of claimSkippingLocked as one statement, `UPDATE … WHERE id = (SELECT id … LIMIT 1
 * FOR UPDATE SKIP LOCKED) RETURNING *` (what @agendajs/postgres-backend does): one round trip per claim instead
 * of four, and no transaction left open between them. The subquery locks the row it returns, so concurrent
 * pollers skip it exactly as in the transaction.
 */
async function claimReturning(knex: Knex, request: ClaimRequest): Promise<{ row: JobRow; wasExpired: boolean } | undefined> {
  const take = (db: Knex | Knex.Transaction, expired: boolean) => {
    const candidate = db(JOBS_TABLE).select('id').where('name', request.name).where('disabled', false);
    if (expired) candidate.where('locked_at', '<=', request.deadline).orderByRaw('(next_run_at IS NULL)');
    else candidate.whereNull('locked_at').where('next_run_at', '<=', request.scanUntil);
    candidate.orderBy('next_run_at', request.nextRunDir).orderBy('priority', request.priorityDir).limit(1).forUpdate().skipLocked();
    const lock = { locked_at: request.lockTime, last_modified_by: request.lastModifiedBy, updated_at: Date.now() };
    return db(JOBS_TABLE).where('id', candidate).update(lock).returning('*') as Promise<JobRow[]>;
  };
  // A session that is not READ COMMITTED (PostgreSQL's default) gets a transaction that is.
  const claim = (expired: boolean) =>
    request.sessionReadCommitted ? retryOnConflict(() => take(knex, expired)) : transact(knex, (trx) => take(trx, expired));
  const [expiredRow] = request.expired ? await claim(true) : [];
  if (expiredRow) return { row: expiredRow, wasExpired: true };
  const [row] = await claim(false);
  return row ? { row, wasExpired: false } : undefined;
}

/**
 * MySQL/MariaDB: both branches of a claim read scheduler_jobs_due, the entries of the one job name.
 *
 * The due branch: as a range over the index's four leading columns, which starts at the first non-NULL
 * next_run_at. Left to itself, MariaDB (10.11) usually reads that index by `ref` on (name, disabled, locked_at
 * IS NULL) instead: from the start of those three columns, i.e. first through every finished one-off job of the
 * name (next_run_at NULL, sorting first), each locked and released again by the locking read before the first
 * due job is reached. Every claim then cost O(finished jobs kept in the table): measured in bench/scheduler
 * (2,000 jobs), ~150 index entries and ~550 row-lock requests per claim, a third of the server's CPU.
 *
 * The expired branch (`locked_at <= deadline`): left to itself, MariaDB reads scheduler_jobs_locked_at, the
 * locks of every job name, and like any locking range read it locks the entry that ends the range too, even
 * under READ COMMITTED: the oldest lock younger than the deadline, i.e. a job of any name running on some node
 * now, whose end-of-run UPDATE then waited for the claim to end.
 */
const DUE_SCAN = `FORCE INDEX (${DUE_INDEX})`;

const claimSql = new Map<string, string>();

/**
 * A claim of claimSkippingLocked as one MariaDB anonymous compound statement (`BEGIN NOT ATOMIC … END`,
 * MariaDB ≥ 10.1; a single statement, so no multi-statement connection flag): the same transaction (locking
 * reads with SKIP LOCKED, expired locks first when asked, UPDATE, the locked row read back) in one round trip.
 *
 * Why one statement, and not only for speed: InnoDB keeps the row locks of a transaction until it ends, and a
 * locking range read locks more than the row it returns: every entry it reads, including the one just past the
 * range, which READ COMMITTED does not release either (for the due branch that is typically the name's next
 * job not yet due, e.g. a repeating job's own row, even when nothing was due). A transaction sent statement by
 * statement holds those locks while the client is between two of its statements, for as long as the client
 * does not come back: a node whose event loop stalls (a synchronous job, a long GC pause, a test process in
 * spawnSync) held them for the whole stall, and other nodes' statements on those rows waited for it. So a
 * kernel booting beside a running one waited in `every()` (the UPDATE of a repeating job scans the name's
 * entries of this index and waits on any of them locked) up to innodb_lock_wait_timeout, 50 s in CI; a node
 * ending a run waited on an expired-lock look ending at its job (see DUE_SCAN). Run server-side as one
 * statement, the transaction ends without waiting on the client: its locks last microseconds.
 *
 * Agenda fills its queue one claim after another, so a claim's round trips are also what a poller waits on
 * between two jobs. Any error rolls the transaction back before it is raised again (a connection never goes
 * back to the pool inside it); a deadlock keeps its code, so retryOnConflict runs the claim again. `from`
 * (epoch ms) starts the due scan at that next_run_at instead of the start of the due range (see ScanFloors);
 * it is not used with `request.expired`.
 */
export async function claimInOneStatement(knex: Knex, request: ClaimRequest, from?: number): Promise<{ row: JobRow; wasExpired: boolean } | undefined> {
  const bounded = from !== undefined;
  if (bounded && request.expired) throw new Error('a claim that looks for expired locks scans the whole due range');
  const key = `${request.nextRunDir} ${request.priorityDir} ${request.sessionReadCommitted} ${bounded} ${request.expired}`;
  let sql = claimSql.get(key);
  if (sql === undefined) {
    const dir = (d: 'asc' | 'desc') => (d === 'asc' ? 'ASC' : 'DESC');
    const order = `next_run_at ${dir(request.nextRunDir)}, priority ${dir(request.priorityDir)}`;
    const due = [
      `SELECT id INTO claimed FROM ${JOBS_TABLE} ${DUE_SCAN} WHERE name = ? AND disabled = 0 AND locked_at IS NULL`,
      `AND next_run_at <= ?${bounded ? ' AND next_run_at >= ?' : ''} ORDER BY ${order} LIMIT 1 FOR UPDATE SKIP LOCKED;`,
    ];
    sql = [
      'BEGIN NOT ATOMIC',
      `DECLARE claimed TYPE OF ${JOBS_TABLE}.id DEFAULT NULL;`,
      'DECLARE was_expired TINYINT DEFAULT 0;',
      'DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;',
      // READ COMMITTED: see transact (Certwright's own connections already run it).
      ...(request.sessionReadCommitted ? [] : ['SET TRANSACTION ISOLATION LEVEL READ COMMITTED;']),
      'START TRANSACTION;',
      ...(request.expired
        ? [
            // A running one-off job has no next run: among expired locks it comes last.
            `SELECT id INTO claimed FROM ${JOBS_TABLE} ${DUE_SCAN} WHERE name = ? AND disabled = 0 AND locked_at <= ?`,
            `ORDER BY (next_run_at IS NULL), ${order} LIMIT 1 FOR UPDATE SKIP LOCKED;`,
            'IF claimed IS NOT NULL THEN SET was_expired = 1; ELSE',
            ...due,
            'END IF;',
          ]
        : due),
      'IF claimed IS NOT NULL THEN',
      `UPDATE ${JOBS_TABLE} SET locked_at = ?, last_modified_by = ?, updated_at = ? WHERE id = claimed;`,
      `SELECT ${JOBS_TABLE}.*, was_expired AS claim_was_expired FROM ${JOBS_TABLE} WHERE id = claimed;`,
      'END IF;',
      'COMMIT;',
      'END',
    ].join('\n');
    claimSql.set(key, sql);
  }
  const bindings = [
    ...(request.expired ? [request.name, request.deadline] : []),
    request.name,
    request.scanUntil,
    ...(bounded ? [from] : []),
    request.lockTime,
    request.lastModifiedBy,
    Date.now(),
  ];
  // mysql2 answers a statement that returned rows with [rows, status] (one entry per result), else a status alone.
  const [results] = (await retryOnConflict(() => knex.raw(sql, bindings))) as [unknown];
  const rows = Array.isArray(results) && Array.isArray(results[0]) ? (results[0] as (JobRow & { claim_was_expired?: unknown })[]) : [];
  const first = rows[0];
  if (!first) return undefined;
  const { claim_was_expired: wasExpired, ...row } = first;
  return { row, wasExpired: Number(wasExpired) === 1 };
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
