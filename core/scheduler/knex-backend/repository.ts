import {
  computeJobState,
  type JobId,
  type JobParameters,
  type JobRepository,
  type JobRepositoryOptions,
  type JobsOverview,
  type JobsQueryOptions,
  type JobsResult,
  type JobsSort,
  type JobWithState,
  type RemoveJobsOptions,
  type SortDirection,
} from 'agenda';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { detectEngine, missingTableError, probeServer, retryOnConflict, type Engine, type LockStrategy, type ServerInfo } from './engine.js';
import { claimInOneStatement, claimSkippingLocked, findAndLock, type ClaimRequest, type LockRequest } from './find-and-lock.js';
import { dataContains, type SqlCondition } from './json-filter.js';
import { JOBS_TABLE, newRow, rowToJob, savedColumns, STATE_COLUMNS, stateOf, toMillis, type JobRow, type StateRow, type StoredJob } from './rows.js';
import { ScanFloors, type FloorScan } from './scan-floor.js';
import { affected, exactColumn, orderNullsLast, sortDir, whereContainsText, whereTextEquals, whereTextIn, whereTextNotIn, type SortDir } from './sql.js';
import { saveUnique } from './unique.js';

export interface KnexJobRepositoryOptions {
  /** Detected from knex's client when omitted. */
  engine?: Engine;
  /** Which due job is taken first (default: earliest nextRunAt, then highest priority), as in the PostgreSQL backend. */
  sort?: { nextRunAt?: SortDirection; priority?: SortDirection };
  /** 'auto' (default): SKIP LOCKED when the server has it, else conditional updates. */
  lockStrategy?: 'auto' | LockStrategy;
}

type Filter = (qb: Knex.QueryBuilder) => void;

const UNLOCK_CHUNK = 500;

/**
 * Agenda 6's JobRepository on knex, over the scheduler_jobs table of migration 0003 (dates as epoch ms,
 * data as JSON text). Method by method it keeps the semantics of @agendajs/postgres-backend's repository.
 */
export class KnexJobRepository implements JobRepository {
  readonly engine: Engine;
  private readonly sort: { nextRunAt: SortDir; priority: SortDir };
  /** When getNextJobToRun last looked for expired locks, per job name, and whether it found one. */
  private readonly expiredLooks = new Map<string, { at: number; found: boolean }>();
  private server: Promise<ServerInfo> | undefined;
  /** Where MariaDB's due claims start their scan, per job name. */
  private readonly floors = new ScanFloors();
  /** Set by close(): getNextJobToRun answers "none" without a query. */
  private closed = false;
  /** getNextJobToRun calls under way (close waits for them). */
  private readonly scans = new Set<Promise<unknown>>();

  constructor(
    private readonly knex: Knex,
    private readonly options: KnexJobRepositoryOptions = {},
  ) {
    this.engine = options.engine ?? detectEngine(knex);
    this.sort = { nextRunAt: sortDir(options.sort?.nextRunAt, 'asc'), priority: sortDir(options.sort?.priority, 'desc') };
  }

  /** Probes the server (version, hence the lock strategy) and checks that the migration has run. */
  async connect(): Promise<void> {
    await this.lockStrategy();
    if (!(await this.knex.schema.hasTable(JOBS_TABLE))) throw missingTableError(JOBS_TABLE);
  }

  /** The server's version and capabilities, asked once (again after a failed probe). */
  serverInfo(): Promise<ServerInfo> {
    this.server ??= probeServer(this.knex, this.engine).catch((err: unknown) => {
      this.server = undefined;
      throw err;
    });
    return this.server;
  }

  /** The find-and-lock strategy in use (see LockStrategy). */
  async lockStrategy(): Promise<LockStrategy> {
    const wanted = this.options.lockStrategy ?? 'auto';
    const { skipLocked, version } = await this.serverInfo();
    if (wanted === 'skip-locked' && !skipLocked) throw new Error(`knex scheduler backend: ${this.engine} ${version} has no SELECT … FOR UPDATE SKIP LOCKED`);
    if (wanted !== 'auto') return wanted;
    return skipLocked ? 'skip-locked' : 'conditional-update';
  }

  // ---- reads ----

  async getJobById(id: string): Promise<JobParameters | null> {
    const row = (await this.knex(JOBS_TABLE).where('id', id).first()) as JobRow | undefined;
    return row ? rowToJob(row) : null;
  }

  /**
   * Filters in SQL; the state is computed per job (computeJobState) and, when filtered on, the total and the
   * page are taken after that filter, as Agenda defines them. Without a computed-state filter the page and
   * the total come from SQL directly (same result, without reading the whole table).
   */
  async queryJobs(options: JobsQueryOptions = {}): Promise<JobsResult> {
    const { name, names, state, id, ids, search, data, includeDisabled = true, sort, skip = 0, limit = 0 } = options;
    const now = new Date();
    const filter: Filter = (qb) => {
      if (name) whereTextEquals(qb, this.engine, 'name', name);
      else if (names && names.length > 0) whereTextIn(qb, this.engine, 'name', names);
      if (id) qb.where('id', id);
      else if (ids && ids.length > 0) qb.whereIn('id', ids);
      if (search) whereContainsText(qb, 'name', search);
      if (data !== undefined) whereCondition(qb, dataContains(this.engine, data));
      if (!includeDisabled) qb.where('disabled', false);
      // 'paused' is the disabled flag, not a computed state: it filters in SQL.
      if (state === 'paused') qb.where('disabled', true);
    };
    const withState = (row: JobRow): JobWithState => {
      const job = rowToJob(row);
      return { ...job, _id: job._id, state: computeJobState(job, now) };
    };
    const query = () => this.knex(JOBS_TABLE).where(filter);

    if (!state || state === 'paused') {
      const page = query().select('*').modify(orderForQuery(sort));
      if (limit > 0) page.limit(limit).offset(skip);
      else if (skip > 0) page.offset(skip);
      const [rows, counted] = await Promise.all([page as Promise<JobRow[]>, query().count({ n: '*' }) as Promise<{ n: number | string }[]>]);
      return { jobs: rows.map(withState), total: Number(counted[0]?.n ?? 0) };
    }
    const rows = (await query().select('*').modify(orderForQuery(sort))) as JobRow[];
    const matching = rows.map(withState).filter((job) => job.state === state);
    const jobs = limit > 0 ? matching.slice(skip, skip + limit) : matching.slice(skip);
    return { jobs, total: matching.length };
  }

  /** Per job name: how many jobs are in each computed state, plus how many are paused (disabled). */
  async getJobsOverview(): Promise<JobsOverview[]> {
    const now = new Date();
    const names = await this.getDistinctJobNames();
    const overviews = new Map<string, JobsOverview>(
      names.map((name) => [name, { name, total: 0, running: 0, scheduled: 0, queued: 0, completed: 0, failed: 0, repeating: 0, paused: 0 }]),
    );
    const rows = (await this.knex(JOBS_TABLE).select(...STATE_COLUMNS)) as StateRow[];
    for (const row of rows) {
      const overview = overviews.get(row.name);
      if (!overview) continue; // inserted after the names were read
      overview.total++;
      overview[stateOf(row, now)]++;
      if (row.disabled) overview.paused++;
    }
    return [...overviews.values()];
  }

  async getDistinctJobNames(): Promise<string[]> {
    const rows = (await this.knex(JOBS_TABLE)
      .select(this.knex.raw('DISTINCT ? AS ??', [exactColumn(this.knex, this.engine, 'name'), 'name']))
      .orderBy('name')) as { name: string }[];
    return rows.map((row) => row.name);
  }

  /** Jobs whose nextRunAt has passed (locked, disabled or not), like the PostgreSQL backend's count. */
  async getQueueSize(): Promise<number> {
    const [row] = (await this.knex(JOBS_TABLE).where('next_run_at', '<', Date.now()).count({ n: '*' })) as { n: number | string }[];
    return Number(row?.n ?? 0);
  }

  // ---- bulk changes ----

  async removeJobs(options: RemoveJobsOptions): Promise<number> {
    const filter = this.filterFrom(options);
    if (!filter) return 0;
    return affected(await retryOnConflict(() => this.knex(JOBS_TABLE).where(filter).del()));
  }

  async disableJobs(options: RemoveJobsOptions): Promise<number> {
    return this.setDisabled(options, true);
  }

  async enableJobs(options: RemoveJobsOptions): Promise<number> {
    const enabled = await this.setDisabled(options, false);
    if (enabled > 0) this.floors.reset();
    return enabled;
  }

  async purgeAllJobs(): Promise<number> {
    return affected(await this.knex(JOBS_TABLE).del());
  }

  private async setDisabled(options: RemoveJobsOptions, disabled: boolean): Promise<number> {
    const filter = this.filterFrom(options);
    if (!filter) return 0;
    return affected(await retryOnConflict(() => this.knex(JOBS_TABLE).where(filter).update({ disabled, updated_at: Date.now() })));
  }

  /** The filter of remove/disable/enable; null when no criterion is given (then nothing is touched). */
  private filterFrom(options: RemoveJobsOptions): Filter | null {
    const { id, ids, name, names, notNames, data } = options;
    const steps: Filter[] = [];
    if (id) steps.push((qb) => qb.where('id', String(id)));
    else if (ids && ids.length > 0) steps.push((qb) => qb.whereIn('id', ids.map(String)));
    if (name) steps.push((qb) => whereTextEquals(qb, this.engine, 'name', name));
    else if (names && names.length > 0) steps.push((qb) => whereTextIn(qb, this.engine, 'name', names));
    else if (notNames && notNames.length > 0) steps.push((qb) => whereTextNotIn(qb, this.engine, 'name', notNames));
    if (data !== undefined) steps.push((qb) => whereCondition(qb, dataContains(this.engine, data)));
    if (steps.length === 0) return null;
    return (qb) => steps.forEach((step) => step(qb));
  }

  // ---- saving ----

  /**
   * Saves a job: by id (update; a job that is gone is returned as given), 'single' (one per name: insert or
   * update, keeping a stored nextRunAt when the new one is not in the future), with a unique constraint
   * (insertOnly, debounce), or as a new job.
   */
  async saveJob<DATA = unknown>(job: JobParameters<DATA>, options: JobRepositoryOptions | undefined): Promise<JobParameters<DATA>> {
    const by = options?.lastModifiedBy || null;
    let saved: StoredJob | undefined;
    if (job._id) saved = await this.updateById(job, String(job._id), by);
    else if (job.type === 'single') saved = await this.upsertSingle(job, by);
    else if (job.unique) saved = await saveUnique(this.knex, this.engine, job, job.unique, job.uniqueOpts, by);
    else saved = await this.insert(job, by);
    if (saved && !saved.disabled) this.floors.lowered(saved.name, toMillis(saved.nextRunAt));
    // The stored data is the job's own data read back from JSON; DATA is the caller's claim about its shape.
    return (saved ?? job) as JobParameters<DATA>;
  }

  private insert(job: JobParameters, by: string | null): Promise<StoredJob> {
    const now = Date.now();
    const row = newRow(newId(now), savedColumns(job, by), now, null);
    return retryOnConflict(async () => {
      await this.knex(JOBS_TABLE).insert(row);
      return rowToJob(row);
    });
  }

  /**
   * As the PostgreSQL backend: the user-editable fields and the failure fields; lock and run fields are the
   * processor's. The UPDATE and the read back are two statements, not one transaction: see saveUnique.
   */
  private async updateById(job: JobParameters, id: string, by: string | null): Promise<StoredJob | undefined> {
    const updated = affected(
      await retryOnConflict(() =>
        this.knex(JOBS_TABLE)
          .where('id', id)
          .where((qb) => whereTextEquals(qb, this.engine, 'name', job.name))
          .update({
            ...savedColumns(job, by),
            fail_reason: job.failReason ?? null,
            fail_count: job.failCount ?? null,
            failed_at: toMillis(job.failedAt || null),
            updated_at: Date.now(),
          }),
      ),
    );
    if (updated === 0) return undefined;
    const row = (await this.knex(JOBS_TABLE).where('id', id).first()) as JobRow | undefined;
    return row ? rowToJob(row) : undefined;
  }

  /**
   * One 'single' job per name (the unique single_key): insert, or update the existing one. A nextRunAt that is
   * now or past does not replace a stored one (COALESCE), so re-declaring `every()` at each start does not run
   * the job at once when its next run is already planned. The upsert and the read back are two statements, not
   * one transaction: see saveUnique.
   */
  private async upsertSingle(job: JobParameters, by: string | null): Promise<StoredJob> {
    const now = Date.now();
    const protectNextRunAt = job.nextRunAt ? (toMillis(job.nextRunAt) ?? now) <= now : false;
    const insertRow = newRow(newId(now), savedColumns(job, by), now, null);
    const incoming = (column: string) => (this.engine === 'mysql' ? this.knex.raw('VALUES(??)', [column]) : this.knex.raw('??', [`excluded.${column}`]));
    const merge: Record<string, Knex.Raw> = {};
    for (const column of ['priority', 'repeat_timezone', 'repeat_interval', 'data', 'repeat_at', 'disabled', 'fork', 'last_modified_by', 'start_date', 'end_date', 'skip_days', 'updated_at']) {
      merge[column] = incoming(column);
    }
    merge.next_run_at = protectNextRunAt ? this.knex.raw('COALESCE(??, ?)', [`${JOBS_TABLE}.next_run_at`, incoming('next_run_at')]) : incoming('next_run_at');
    await retryOnConflict(() => this.knex(JOBS_TABLE).insert(insertRow).onConflict('single_key').merge(merge));
    const row = (await this.knex(JOBS_TABLE).where('single_key', job.name).first()) as JobRow | undefined;
    if (!row) throw new Error(`single job "${job.name}" was removed while it was saved`);
    // A case-insensitive collation on single_key (MySQL's default) would have merged into another name's job.
    if (row.name !== job.name) {
      throw new Error(`single job "${job.name}" collides with "${row.name}": scheduler_jobs.single_key needs a binary (case-sensitive) collation`);
    }
    return rowToJob(row);
  }

  /** The processor's fields after a run or a touch; throws when the job is gone (Agenda relies on it). */
  async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) throw new Error('Cannot save job state without job ID');
    const id = String(job._id);
    const updated = affected(
      await retryOnConflict(() =>
        this.knex(JOBS_TABLE)
          .where('id', id)
          .where((qb) => whereTextEquals(qb, this.engine, 'name', job.name))
          .update({
            locked_at: toMillis(job.lockedAt || null),
            next_run_at: toMillis(job.nextRunAt || null),
            last_run_at: toMillis(job.lastRunAt || null),
            progress: job.progress ?? null,
            fail_reason: job.failReason ?? null,
            fail_count: job.failCount ?? null,
            failed_at: toMillis(job.failedAt || null),
            last_finished_at: toMillis(job.lastFinishedAt || null),
            last_modified_by: options?.lastModifiedBy || null,
            updated_at: Date.now(),
          }),
      ),
    );
    if (updated !== 1) throw new Error(`job ${id} (name: ${job.name}) cannot be updated in the database, maybe it does not exist anymore?`);
    // A run finished (or a lock was given up): the job is lockable again at its next run, if it has one.
    if (!job.lockedAt) this.floors.lowered(job.name, toMillis(job.nextRunAt || null));
  }

  // ---- locking ----

  /** Locks this very job, if it is unlocked, enabled and still due at the nextRunAt the caller saw. */
  async lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    if (!job._id) return undefined;
    const nextRunAt = toMillis(job.nextRunAt);
    // `next_run_at = NULL` never holds in the PostgreSQL backend either.
    if (nextRunAt === null) return undefined;
    const id = String(job._id);
    return this.lock(
      (qb) => {
        qb.where('id', id);
        whereTextEquals(qb, this.engine, 'name', job.name);
        qb.whereNull('locked_at').where('next_run_at', nextRunAt).where('disabled', false);
      },
      Date.now(),
      options,
    );
  }

  /**
   * Finds and locks the next job of that name: enabled, and either unlocked and due by nextScanAt, or locked
   * before lockDeadline (its worker presumably died). Earliest nextRunAt (NULLs last), then highest priority.
   */
  async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    if (this.closed) return undefined;
    const scan = this.nextJobToRun(jobName, nextScanAt, lockDeadline, now, options);
    this.scans.add(scan);
    try {
      return await scan;
    } finally {
      this.scans.delete(scan);
    }
  }

  /**
   * No scan starts from now on, and this answers once the scans under way have ended. Agenda's stop() does
   * not wait for the queue filling it is in the middle of, which goes on through the job names one query
   * at a time: a query of it that reached the pool while its owner destroyed it waited there for the whole
   * acquire timeout (60 s), keeping the process alive.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.scans]);
  }

  /** Scans again after close() (a scheduler started anew). */
  reopen(): void {
    this.closed = false;
  }

  private async nextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const scanUntil = toMillis(nextScanAt);
    const deadline = toMillis(lockDeadline);
    if ((await this.lockStrategy()) === 'skip-locked' && scanUntil !== null && deadline !== null) {
      const lockTime = (now ?? new Date()).getTime();
      // Expired locks are rare: look for them at most once a second per name, unless the last look found
      // one (then keep draining them first).
      const lastLook = this.expiredLooks.get(jobName);
      const expired = lastLook === undefined || lastLook.found || Date.now() - lastLook.at >= EXPIRED_LOOK_MS;
      const info = await this.serverInfo();
      const request: ClaimRequest = {
        name: jobName,
        scanUntil,
        deadline,
        lockTime,
        lastModifiedBy: options?.lastModifiedBy || null,
        nextRunDir: this.sort.nextRunAt,
        priorityDir: this.sort.priority,
        expired,
        sessionReadCommitted: info.readCommitted,
      };
      if (!expired && info.compoundStatements) {
        const row = await this.claimDue(request);
        return row ? rowToJob(row) : undefined;
      }
      // MariaDB: one statement (see claimInOneStatement: no lock may wait on this process between statements).
      const claimed = info.compoundStatements ? await claimInOneStatement(this.knex, request) : await claimSkippingLocked(this.knex, this.engine, request);
      if (expired) this.expiredLooks.set(jobName, { at: Date.now(), found: claimed?.wasExpired === true });
      return claimed ? rowToJob(claimed.row) : undefined;
    }
    return this.lock(
      (qb) => {
        whereTextEquals(qb, this.engine, 'name', jobName);
        qb.where('disabled', false).where((either) => {
          either.where((unlocked) => unlocked.whereNull('locked_at').where('next_run_at', '<=', scanUntil)).orWhere('locked_at', '<=', deadline);
        });
      },
      (now ?? new Date()).getTime(),
      options,
    );
  }

  /**
   * MariaDB's due claim (claimInOneStatement), its scan started at the name's floor when one is known (see
   * ScanFloors); when nothing is lockable from there, the whole due range is scanned before answering "none".
   */
  private async claimDue(request: ClaimRequest): Promise<JobRow | undefined> {
    const claim = (from?: number) => claimInOneStatement(this.knex, request, from).then((claimed) => claimed?.row);
    // The floor needs the default order (earliest first): the entries it skips are then at the start of the range.
    if (request.nextRunDir !== 'asc') return claim();
    const first = this.floors.begin(request.name);
    if (first.from !== undefined) {
      const row = await this.scanned(first, claim(first.from));
      if (row) return row;
    }
    const full = first.from === undefined ? first : this.floors.begin(request.name, true);
    return this.scanned(full, claim());
  }

  private async scanned(scan: FloorScan, claim: Promise<JobRow | undefined>): Promise<JobRow | undefined> {
    let row: JobRow | undefined;
    try {
      row = await claim;
      return row;
    } finally {
      this.floors.end(scan, row ? Number(row.next_run_at) : undefined);
    }
  }

  /** Releases a lock, unless the job is being processed (nextRunAt is null while a one-off job runs). */
  async unlockJob(job: JobParameters): Promise<void> {
    if (!job._id) return;
    await retryOnConflict(() =>
      this.knex(JOBS_TABLE).where('id', String(job._id)).whereNotNull('next_run_at').update({ locked_at: null, updated_at: Date.now() }),
    );
    // The caller's nextRunAt is the one it locked the job at; without it, where the job now sits is unknown.
    const nextRunAt = toMillis(job.nextRunAt || null);
    if (nextRunAt === null) this.floors.reset();
    else this.floors.lowered(job.name, nextRunAt);
  }

  async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    const ids = jobIds.map(String);
    for (let i = 0; i < ids.length; i += UNLOCK_CHUNK) {
      const chunk = ids.slice(i, i + UNLOCK_CHUNK);
      await retryOnConflict(() => this.knex(JOBS_TABLE).whereIn('id', chunk).update({ locked_at: null, updated_at: Date.now() }));
    }
    if (ids.length > 0) this.floors.reset();
  }

  private async lock(guard: LockRequest['guard'], lockTime: number, options: JobRepositoryOptions | undefined): Promise<StoredJob | undefined> {
    const order = (qb: Knex.QueryBuilder) => {
      orderNullsLast(qb, 'next_run_at', this.sort.nextRunAt);
      qb.orderBy('priority', this.sort.priority);
    };
    const row = await findAndLock(this.knex, this.engine, await this.lockStrategy(), { guard, order, lockTime, lastModifiedBy: options?.lastModifiedBy || null });
    return row ? rowToJob(row) : undefined;
  }
}

/** How often, per job name, the hot path also looks for jobs whose worker died (their lock expired). */
const EXPIRED_LOOK_MS = 1000;

function whereCondition(qb: Knex.QueryBuilder, condition: SqlCondition): void {
  qb.whereRaw(condition.sql, condition.bindings);
}

/** queryJobs' ORDER BY: the PostgreSQL backend's columns and defaults (dates NULLS LAST), then id for stable pages. */
function orderForQuery(sort: JobsSort | undefined) {
  return (qb: Knex.QueryBuilder): void => {
    const dates: [keyof JobsSort, string][] = [
      ['nextRunAt', 'next_run_at'],
      ['lastRunAt', 'last_run_at'],
      ['lastFinishedAt', 'last_finished_at'],
    ];
    let ordered = false;
    for (const [key, column] of dates) {
      if (sort?.[key] === undefined) continue;
      orderNullsLast(qb, column, sortDir(sort[key], 'desc'));
      ordered = true;
    }
    if (sort?.priority !== undefined) {
      qb.orderBy('priority', sortDir(sort.priority, 'desc'));
      ordered = true;
    }
    if (sort?.name !== undefined) {
      qb.orderBy('name', sortDir(sort.name, 'desc'));
      ordered = true;
    }
    if (!ordered) {
      orderNullsLast(qb, 'next_run_at', 'desc');
      orderNullsLast(qb, 'last_run_at', 'desc');
    }
    qb.orderBy('id', 'asc');
  };
}
