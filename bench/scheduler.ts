// `npm run bench -- scheduler`: Agenda throughput and due→started latency on Certwright's KnexBackend, compared
// with Agenda's own PostgreSQL backend (@agendajs/postgres-backend).
//
// Backends, all in the same run, each on a fresh store created for it and removed afterwards: KnexBackend on
// SQLite (a temp file), on MariaDB and on PostgreSQL (fresh databases), and PostgresBackend on PostgreSQL as it
// ships (LISTEN/NOTIFY on) and, for reference, with notifications disabled (polling only). Every backend gets the
// same Agenda settings, its own Agenda instance, and the same trivial job (an empty async handler):
//   warm-up     WARMUP_JOBS due jobs are run and discarded (JIT, connection pool);
//   throughput  ROUNDS interleaved rounds (every backend once per round, the order rotating): THROUGHPUT_JOBS jobs
//               due now are inserted while Agenda is stopped (not timed), Agenda is started and timed until the
//               last one has completed ('complete' event: its final state is saved); jobs/s = jobs / (last
//               completion − start()). Between rounds the finished jobs are deleted (not timed). A row shows the
//               median round, and the range;
//   latency     with Agenda running and idle, LATENCY_JOBS jobs are scheduled at distinct due times spread over
//               LATENCY_SPREAD_MS, the first LATENCY_LEAD_MS after scheduling begins; each handler records its
//               start − its due time; p50, p95 and max in ms.
// Our MariaDB row's median jobs/s is compared with the PostgreSQL backend's (as shipped) against GOAL_RATIO. It is
// a measurement: the exit code is 0 even when the goal FAILs (1 only when the benchmark itself could not run, i.e.
// our SQLite or MariaDB row is missing). An unreachable PostgreSQL is reported as a missing peer row.
import { Agenda, type AgendaBackend, type Job, type JobWithId } from 'agenda';
import { PostgresBackend } from '@agendajs/postgres-backend';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../core/db/connection.js';
import { CORE_MIGRATIONS } from '../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../core/db/migrator.js';
import { KnexBackend } from '../core/scheduler/knex-backend/index.js';
import { cpuBusy, fmt } from './lib/measure.js';

// ---- Agenda settings, identical for every backend

/** defaultConcurrency and maxConcurrency. */
const CONCURRENCY = 20;
/**
 * Agenda's global lockLimit: 25 × concurrency. Agenda fills its local queue on each poll tick, locking one job
 * after another until nothing is lockable or the limit is reached, and starts running the queue only when that
 * fill returns (later, each finished job starts the next). Both extremes starve the workers:
 * - lockLimit = concurrency: a slot freed between ticks stays empty until the next tick, capping every backend
 *   at lockLimit per processEvery (200 jobs/s here);
 * - 0 (no limit, Agenda's default and the kernel's): the first fill locks the whole backlog before any job runs
 *   (all 2,000 locks first), and if that takes longer than the lock lifetime the first locks expire and are taken
 *   again by the next fill, which then never ends (seen on MariaDB on a loaded machine with a 10 s lifetime:
 *   0 jobs in 60 s).
 * 500 sustains 5,000 jobs/s even if every fill stops at the limit, far above every backend here (200 still held
 * SQLite back by ~15 %), and the first job runs after at most 500 locks.
 */
const LOCK_LIMIT = 500;
const PROCESS_EVERY_MS = 100;
/**
 * Agenda's defaultLockLifetime. Agenda starts, beside every run, a liveness timer of lockLifetime / 2 that it
 * never clears: with the default (10 min, also the kernel's) the process would linger 5 min after the last job.
 * 20 s keeps that tail ≤ 10 s and is far above the time a job here stays locked before it runs (at most
 * LOCK_LIMIT jobs wait; a job locked longer could be locked again by another fill: a duplicate run or a timeout).
 */
const LOCK_LIFETIME_MS = 20_000;
/** Connection pool (MariaDB, PostgreSQL; the kernel's default max). SQLite has one connection (openDatabase). */
const POOL_MAX = 10;

// ---- workload

const WARMUP_JOBS = 200;
const THROUGHPUT_JOBS = 2000;
const ROUNDS = 3;
const LATENCY_JOBS = 200;
const LATENCY_LEAD_MS = 1_000;
const LATENCY_SPREAD_MS = 3_000;
/** Jobs saved at once while inserting (not timed). */
const INSERT_PARALLELISM = 10;

/** Our MariaDB backend must complete at least this share of the PostgreSQL backend's jobs/s. */
const GOAL_RATIO = 1.0;

// ---- bounds

const SETUP_TIMEOUT_MS = 30_000;
const READY_TIMEOUT_MS = 15_000;
const WARMUP_TIMEOUT_MS = 15_000;
const INSERT_TIMEOUT_MS = 30_000;
const THROUGHPUT_TIMEOUT_MS = 20_000;
const LATENCY_GRACE_MS = 4_000;
const STEP_TIMEOUT_MS = 10_000;
/** No further throughput measurement starts past this point of the run (the latency phase still runs). */
const ROUNDS_DEADLINE_MS = 85_000;
/** Hard cap on the whole run (typically 70–110 s), leaving time to drop the databases within 3 minutes. */
const WATCHDOG_MS = 160_000;
const EMERGENCY_CLEANUP_MS = 15_000;

const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const POSTGRES = { host: '127.0.0.1', port: 5432, user: 'postgres' };
const JOB_NAME = 'bench-noop';
const AGENDA_NAME = 'certwright-bench';

type Phase = 'warmup' | 'throughput' | 'latency';

interface JobData {
  phase: Phase;
  /** Throughput round (0 otherwise): completions left over from an earlier, timed-out round are not counted. */
  round: number;
  /** Epoch ms the job is due. */
  dueAt: number;
}

interface Opened {
  backend: AgendaBackend;
  /** Shown under the table (server version, lock strategy, …). */
  detail: string;
}

interface Subject {
  key: 'sqlite' | 'mariadb' | 'pg-agenda' | 'pg-agenda-poll' | 'pg-knex';
  label: string;
  /** Which server it needs (probed first). */
  server: 'none' | 'mariadb' | 'postgres';
  /** Creates the store and the backend; registers what must be undone with `cleanup`. */
  open(cleanup: Cleanup): Promise<Opened>;
}

interface Round {
  jobsPerSec: number;
  done: number;
  timedOut: boolean;
}

interface Latency {
  values: number[];
  timedOut: boolean;
  lateInserts: number;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- cleanup

interface Step {
  label: string;
  fn: () => Promise<void>;
  timeoutMs: number;
}

/** Undo steps, run last-in first-out, each bounded so that a hung pool cannot keep the run alive. */
class Cleanup {
  private readonly steps: Step[] = [];

  /** Registers a step; the returned function runs it now (once) instead of at the end. */
  add(label: string, fn: () => Promise<void>, timeoutMs = STEP_TIMEOUT_MS): () => Promise<void> {
    const step: Step = { label, fn, timeoutMs };
    this.steps.push(step);
    return async () => {
      const i = this.steps.indexOf(step);
      if (i === -1) return;
      this.steps.splice(i, 1);
      await runStep(step);
    };
  }

  async runAll(): Promise<void> {
    while (this.steps.length > 0) await runStep(this.steps.pop()!);
  }
}

async function runStep({ label, fn, timeoutMs }: Step): Promise<void> {
  try {
    await withTimeout(fn(), timeoutMs, `cleanup: ${label}`);
  } catch (err) {
    process.stderr.write(`cleanup: ${label} failed: ${message(err)}\n`);
  }
}

// ---------------------------------------------------------------- stores

const benchDbName = (suffix: string): string => `certwright_bench_${randomBytes(4).toString('hex')}_${suffix}`;

async function mariadbAdmin(): Promise<Knex> {
  const admin = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  try {
    await withTimeout(admin.raw('SELECT 1'), 5_000, 'MariaDB');
    return admin;
  } catch (err) {
    await admin.destroy().catch(() => undefined);
    throw err;
  }
}

/** A pg client on the maintenance database, for CREATE/DROP DATABASE. */
async function postgresAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ ...POSTGRES, database: 'postgres', connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined); // a broken admin connection is reported by the query that fails
  await withTimeout(client.connect(), 5_000, 'PostgreSQL');
  return client;
}

/** Creates `name` on PostgreSQL and registers its drop (FORCE: a connection left open does not keep it alive). */
async function freshPostgresDatabase(cleanup: Cleanup, name: string): Promise<void> {
  const admin = await postgresAdmin();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end().catch(() => undefined);
  }
  cleanup.add(`drop PostgreSQL database ${name}`, async () => {
    const dropper = await postgresAdmin();
    try {
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await dropper.end().catch(() => undefined);
    }
  });
}

async function knexDetail(backend: KnexBackend): Promise<string> {
  const [info, strategy] = await Promise.all([backend.repository.serverInfo(), backend.repository.lockStrategy()]);
  const claims = info.compoundStatements ? ', due claims in one compound statement' : '';
  return `${backend.name} ${info.version}, lock strategy ${strategy}${claims}`;
}

async function openPostgresBackend(cleanup: Cleanup, disableNotifications: boolean): Promise<Opened> {
  const name = benchDbName('agenda');
  await freshPostgresDatabase(cleanup, name);
  // Our own pool (the same size as the knex pools), so that it is closed whatever state Agenda is left in; the
  // backend then does not own it, and Agenda's stop() leaves it open, as with KnexBackend.
  const pool = new pg.Pool({ ...POSTGRES, database: name, max: POOL_MAX });
  pool.on('error', () => undefined); // idle clients ended by DROP DATABASE … WITH (FORCE)
  cleanup.add('close the PostgresBackend pool', () => pool.end());
  const { rows } = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  const backend = new PostgresBackend({ pool, disableNotifications });
  const channel = disableNotifications
    ? 'notifications disabled (polling only)'
    : 'LISTEN/NOTIFY on, as shipped (one pool connection listens; saves and every job start/success/complete NOTIFY)';
  return { backend, detail: `@agendajs/postgres-backend on PostgreSQL ${rows[0]?.v ?? '?'}, ${channel}, database ${name}, pool ≤ ${POOL_MAX}` };
}

function subjects(): Subject[] {
  return [
    {
      key: 'sqlite',
      label: 'KnexBackend SQLite',
      server: 'none',
      async open(cleanup) {
        const dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-scheduler-'));
        cleanup.add(`remove ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
        const { knex, displayUrl } = openDatabase({ url: null, dataDir, pool: { min: 0, max: POOL_MAX } });
        cleanup.add('close the SQLite knex', () => knex.destroy());
        await migrateLatest(knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
        const backend = new KnexBackend(knex);
        return { backend, detail: `${await knexDetail(backend)}, ${displayUrl} (WAL, one connection)` };
      },
    },
    {
      key: 'mariadb',
      label: 'KnexBackend MariaDB',
      server: 'mariadb',
      async open(cleanup) {
        const name = benchDbName('knex');
        const admin = await mariadbAdmin();
        cleanup.add('close the MariaDB admin connection', () => admin.destroy());
        await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
        cleanup.add(`drop MariaDB database ${name}`, async () => void (await admin.raw('DROP DATABASE IF EXISTS ??', [name])));
        const url = `mysql://${MARIADB.user}@${MARIADB.host}:${MARIADB.port}/${name}`;
        const { knex, displayUrl } = openDatabase({ url, dataDir: tmpdir(), pool: { min: 0, max: POOL_MAX } });
        cleanup.add('close the MariaDB knex', () => knex.destroy());
        await migrateLatest(knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
        const backend = new KnexBackend(knex);
        return { backend, detail: `${await knexDetail(backend)}, ${displayUrl}, pool ≤ ${POOL_MAX}` };
      },
    },
    { key: 'pg-agenda', label: 'PostgresBackend (LISTEN/NOTIFY)', server: 'postgres', open: (c) => openPostgresBackend(c, false) },
    { key: 'pg-agenda-poll', label: 'PostgresBackend (polling only)', server: 'postgres', open: (c) => openPostgresBackend(c, true) },
    {
      key: 'pg-knex',
      label: 'KnexBackend PostgreSQL',
      server: 'postgres',
      async open(cleanup) {
        const name = benchDbName('knex');
        await freshPostgresDatabase(cleanup, name);
        const knex = knexFactory({ client: 'pg', connection: { ...POSTGRES, database: name }, pool: { min: 0, max: POOL_MAX } });
        cleanup.add('close the PostgreSQL knex', () => knex.destroy());
        await migrateLatest(knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
        const backend = new KnexBackend(knex);
        return { backend, detail: `${await knexDetail(backend)}, database ${name}, pool ≤ ${POOL_MAX}` };
      },
    },
  ];
}

// ---------------------------------------------------------------- one backend under Agenda

/** Runs `count` saves, INSERT_PARALLELISM at a time; resolves with each save's completion time (epoch ms). */
async function saveAll(count: number, save: (i: number) => Promise<unknown>): Promise<number[]> {
  const doneAt = new Array<number>(count).fill(0);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await save(i);
      doneAt[i] = Date.now();
    }
  };
  await Promise.all(Array.from({ length: Math.min(INSERT_PARALLELISM, count) }, worker));
  return doneAt;
}

/** One backend, its Agenda instance, and what its runs recorded. */
class Harness {
  readonly agenda: Agenda;
  readonly rounds: Round[] = [];
  latency: Latency | undefined;
  readonly errors: string[] = [];
  /** Job runs per job id: more than one is a locking fault. */
  private readonly runs = new Map<string, number>();
  private readonly latencies: number[] = [];
  /** Completions per `${phase}:${round}`. */
  private readonly completed = new Map<string, number>();
  private lastCompletion = 0;
  private started = false;
  /** getNextJobToRun calls under way (see the constructor). */
  private locking = 0;
  /** Rejects when something of this backend failed outside any await (an unhandled rejection). */
  private rejectFailed: (err: unknown) => void = () => undefined;
  readonly failed: Promise<never>;
  insertSecs = 0;

  constructor(
    readonly subject: Subject,
    readonly opened: Opened,
    readonly cleanup: Cleanup,
  ) {
    this.failed = new Promise<never>((_, reject) => (this.rejectFailed = reject));
    this.failed.catch(() => undefined);
    this.agenda = new Agenda({
      backend: opened.backend,
      name: AGENDA_NAME,
      processEvery: PROCESS_EVERY_MS,
      defaultConcurrency: CONCURRENCY,
      maxConcurrency: CONCURRENCY,
      lockLimit: LOCK_LIMIT,
      defaultLockLimit: 0,
      defaultLockLifetime: LOCK_LIFETIME_MS,
    });
    // Agenda's stop() does not wait for a queue fill under way: that fill goes on locking jobs (one after another
    // until none is lockable) for a processor that will never run them, and would take jobs of the next round,
    // which would then wait out their lock lifetime. So the calls are counted (a counter around the backend's own
    // method, the same for every backend) and each phase begins once the previous processor's fills have ended.
    const repository = opened.backend.repository;
    const getNextJobToRun = repository.getNextJobToRun.bind(repository);
    repository.getNextJobToRun = async (...args) => {
      this.locking++;
      try {
        return await getNextJobToRun(...args);
      } finally {
        this.locking--;
      }
    };
    cleanup.add(`stop Agenda (${subject.label})`, async () => {
      if (this.started) await this.agenda.stop();
    });
    // Agenda reports processing errors as events; an unhandled 'error' event would end the process.
    this.agenda.on('error', (err: Error) => this.error(message(err)));
    this.agenda.on('fail', (err: Error, job: JobWithId) => this.error(`job ${String(job.attrs._id)} failed: ${message(err)}`));
    this.agenda.define<JobData>(JOB_NAME, async (job: Job<JobData>) => {
      const startedAt = Date.now();
      const id = String(job.attrs._id);
      this.runs.set(id, (this.runs.get(id) ?? 0) + 1);
      if (job.attrs.data.phase === 'latency') this.latencies.push(startedAt - job.attrs.data.dueAt);
    });
    this.agenda.on('complete', (job: JobWithId) => {
      const data = job.attrs.data as JobData | undefined;
      if (!data) return;
      const key = `${data.phase}:${data.round}`;
      this.completed.set(key, (this.completed.get(key) ?? 0) + 1);
      this.lastCompletion = performance.now();
    });
  }

  fail(err: unknown): void {
    this.rejectFailed(err);
  }

  get duplicates(): number {
    return [...this.runs.values()].filter((n) => n > 1).length;
  }

  private error(text: string): void {
    if (this.errors.length < 20) this.errors.push(text);
  }

  private guard<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    return Promise.race([withTimeout(promise, ms, what), this.failed]);
  }

  private count(phase: Phase, round: number): number {
    return this.completed.get(`${phase}:${round}`) ?? 0;
  }

  /** Resolves true when `count` jobs of that phase and round have completed, false after `ms`. */
  private completions(phase: Phase, round: number, count: number, ms: number): Promise<boolean> {
    const wait = new Promise<boolean>((resolve) => {
      if (this.count(phase, round) >= count) return resolve(true);
      const check = (): void => {
        if (this.count(phase, round) < count) return;
        clearTimeout(timer);
        this.agenda.off('complete', check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.agenda.off('complete', check);
        resolve(false);
      }, ms);
      this.agenda.on('complete', check);
    });
    return Promise.race([wait, this.failed]);
  }

  private async start(): Promise<void> {
    this.started = true;
    await this.guard(this.agenda.start(), READY_TIMEOUT_MS, 'Agenda.start()');
  }

  /**
   * Stops Agenda, waits for its fills under way to end, and deletes every job (finished or not), so that the next
   * phase starts on an empty table with nothing of the stopped processor still at work.
   */
  private async stopAndClear(): Promise<void> {
    await withTimeout(this.agenda.stop(), STEP_TIMEOUT_MS, 'Agenda.stop()');
    this.started = false;
    // A fill calls getNextJobToRun again as soon as a call returns a job: it has ended once none is under way
    // over a few polls.
    const deadline = performance.now() + STEP_TIMEOUT_MS;
    for (let quiet = 0; quiet < 3; ) {
      if (performance.now() > deadline) throw new Error(`Agenda still locking jobs ${STEP_TIMEOUT_MS / 1000} s after stop()`);
      await Promise.race([sleep(10), this.failed]);
      quiet = this.locking === 0 ? quiet + 1 : 0;
    }
    await this.guard(this.agenda.cancel({ name: JOB_NAME }), STEP_TIMEOUT_MS, 'deleting the jobs');
  }

  private async insertDue(phase: Phase, round: number, count: number): Promise<number> {
    const t0 = performance.now();
    await this.guard(
      saveAll(count, () => this.agenda.now<JobData>(JOB_NAME, { phase, round, dueAt: Date.now() })),
      INSERT_TIMEOUT_MS,
      `inserting ${count} jobs`,
    );
    return (performance.now() - t0) / 1000;
  }

  async warmUp(): Promise<void> {
    await this.guard(this.agenda.ready, READY_TIMEOUT_MS, 'the backend connect()');
    await this.insertDue('warmup', 0, WARMUP_JOBS);
    await this.start();
    if (!(await this.completions('warmup', 0, WARMUP_JOBS, WARMUP_TIMEOUT_MS))) {
      throw new Error(`warm-up: only ${this.count('warmup', 0)}/${WARMUP_JOBS} jobs completed within ${WARMUP_TIMEOUT_MS / 1000} s`);
    }
    await this.stopAndClear();
  }

  /** THROUGHPUT_JOBS due jobs inserted while stopped; timed from start() to the last completion. */
  async throughputRound(round: number): Promise<Round> {
    this.insertSecs = Math.max(this.insertSecs, await this.insertDue('throughput', round, THROUGHPUT_JOBS));
    const t0 = performance.now();
    await this.start();
    const all = await this.completions('throughput', round, THROUGHPUT_JOBS, THROUGHPUT_TIMEOUT_MS);
    const done = this.count('throughput', round);
    const elapsed = (all ? this.lastCompletion : performance.now()) - t0;
    await this.stopAndClear();
    const result = { jobsPerSec: elapsed > 0 ? (done * 1000) / elapsed : 0, done, timedOut: !all };
    this.rounds.push(result);
    return result;
  }

  /** Agenda running and idle; LATENCY_JOBS jobs at distinct future due times. */
  async measureLatency(): Promise<Latency> {
    await this.start();
    await sleep(2 * PROCESS_EVERY_MS);
    const base = Date.now() + LATENCY_LEAD_MS;
    const dueAt = (i: number): number => base + Math.round((i * LATENCY_SPREAD_MS) / Math.max(1, LATENCY_JOBS - 1));
    const savedAt = await this.guard(
      saveAll(LATENCY_JOBS, (i) => this.agenda.schedule<JobData>(new Date(dueAt(i)), JOB_NAME, { phase: 'latency', round: 0, dueAt: dueAt(i) })),
      INSERT_TIMEOUT_MS,
      `scheduling ${LATENCY_JOBS} jobs`,
    );
    const lateInserts = savedAt.filter((t, i) => t > dueAt(i)).length;
    const all = await this.completions('latency', 0, LATENCY_JOBS, Math.max(0, dueAt(LATENCY_JOBS - 1) - Date.now()) + LATENCY_GRACE_MS);
    await this.stopAndClear();
    this.latency = { values: [...this.latencies], timedOut: !all, lateInserts };
    return this.latency;
  }
}

// ---------------------------------------------------------------- report


/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Row {
  subject: Subject;
  harness?: Harness;
  /** Why there is no measurement (or why it is incomplete). */
  missing?: string;
}

const rateOf = (h: Harness | undefined): number | undefined =>
  h && h.rounds.length > 0 ? median(h.rounds.map((r) => r.jobsPerSec)) : undefined;

function printReport(rows: Row[]): void {
  const peerRow = rows.find((r) => r.subject.key === 'pg-agenda');
  const peerRate = rateOf(peerRow?.harness);
  const header = ['backend', 'jobs/s', 'rounds (min–max)', 'p50 ms', 'p95 ms', 'max ms', 'errors', 'vs PostgresBackend', 'goal', 'result'];
  const table: string[][] = [];
  const verdicts: string[] = [];
  const notes: string[] = [];
  for (const row of rows) {
    const h = row.harness;
    const label = row.subject.label;
    const rate = rateOf(h);
    const cells = [label];
    if (rate === undefined || !h) {
      cells.push('-', '-');
    } else {
      const rates = h.rounds.map((r) => r.jobsPerSec);
      const timedOut = h.rounds.some((r) => r.timedOut);
      cells.push(`${fmt(rate)}${timedOut ? '*' : ''}`, `${h.rounds.length}: ${fmt(Math.min(...rates))}–${fmt(Math.max(...rates))}`);
      for (const [i, r] of h.rounds.entries()) {
        if (r.timedOut) notes.push(`* ${label}, round ${i + 1}: only ${fmt(r.done)}/${fmt(THROUGHPUT_JOBS)} jobs completed within ${THROUGHPUT_TIMEOUT_MS / 1000} s; its rate is over that time`);
      }
    }
    const lat = h?.latency?.values ?? [];
    cells.push(...(lat.length ? [percentile(lat, 50), percentile(lat, 95), Math.max(...lat)].map((v) => fmt(v)) : ['-', '-', '-']));
    cells.push(h ? fmt(h.errors.length + h.duplicates) : '-');
    const ratio = rate !== undefined && peerRate && row !== peerRow ? rate / peerRate : undefined;
    cells.push(row === peerRow ? (peerRate ? 'peer' : 'missing') : ratio === undefined ? 'n/a' : `${fmt(ratio, 2)}×`);
    if (row.subject.key === 'mariadb') {
      cells.push(`≥${fmt(GOAL_RATIO, 1)}×`);
      const clean = !!h && h.errors.length === 0 && h.duplicates === 0 && !h.rounds.some((r) => r.timedOut);
      if (rate === undefined) {
        cells.push('FAIL');
        verdicts.push(`FAIL  ${label}: no measurement (${row.missing ?? 'no throughput round completed'})`);
      } else if (ratio === undefined) {
        cells.push('SKIP');
        verdicts.push(`SKIP  ${label} ≥ ${fmt(GOAL_RATIO, 1)}× the PostgreSQL backend: the peer row is missing (${peerRow?.missing ?? 'no rate'})`);
      } else {
        const pass = clean && ratio >= GOAL_RATIO;
        cells.push(pass ? 'PASS' : 'FAIL');
        verdicts.push(
          `${pass ? 'PASS' : 'FAIL'}  ${label}: ${fmt(rate)} jobs/s = ${fmt(ratio, 2)}× the PostgreSQL backend's ${fmt(peerRate!)} jobs/s ` +
            `(goal ≥ ${fmt(GOAL_RATIO, 1)}×)` +
            (clean ? '' : '; the run was not clean (errors, duplicate runs or timeouts), so it cannot pass'),
        );
      }
    } else {
      cells.push('', '');
    }
    table.push(cells);
    if (row.missing) notes.push(`${label}: ${h ? 'incomplete' : 'row missing'}: ${row.missing}`);
    if (h?.latency?.timedOut) notes.push(`${label}: only ${lat.length}/${LATENCY_JOBS} latency jobs started in time; the percentiles are over those`);
    if (h?.latency?.lateInserts) notes.push(`${label}: ${h.latency.lateInserts} latency job(s) were saved only after their due time`);
    if (h?.duplicates) notes.push(`${label}: ${h.duplicates} job(s) ran more than once (a locking fault)`);
    for (const e of h?.errors.slice(0, 5) ?? []) notes.push(`${label}: error: ${e}`);
  }
  const all = [header, ...table];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const r of table) process.stdout.write(`${line(r)}\n`);
  process.stdout.write('\n');
  for (const row of rows) {
    if (!row.harness) continue;
    process.stdout.write(`${row.subject.label}: ${row.harness.opened.detail}; ${fmt(THROUGHPUT_JOBS)} jobs inserted in ≤ ${fmt(row.harness.insertSecs, 1)} s (not timed)\n`);
  }
  if (notes.length) process.stdout.write(`\n${notes.join('\n')}\n`);
  process.stdout.write(`\n${verdicts.join('\n')}\n`);
}


async function probe(what: string, connect: () => Promise<() => Promise<void>>): Promise<string | undefined> {
  try {
    const close = await connect();
    await close();
    return undefined;
  } catch (err) {
    return `${what} not reachable: ${message(err)}`;
  }
}

function header(): string {
  const cpuList = cpus();
  return [
    'Certwright scheduler benchmark (Agenda 6)',
    `node ${process.version} on ${process.platform}/${process.arch}, ${availableParallelism()} CPU(s)` +
      (cpuList[0] ? ` (${cpuList.length} × ${cpuList[0].model.trim()})` : ''),
    `Agenda, the same for every backend (one instance each): processEvery ${PROCESS_EVERY_MS} ms, defaultConcurrency = ` +
      `maxConcurrency = ${CONCURRENCY}, lockLimit ${LOCK_LIMIT} (binds only near ${fmt((LOCK_LIMIT * 1000) / PROCESS_EVERY_MS)} jobs/s), ` +
      `defaultLockLimit 0, defaultLockLifetime ${LOCK_LIFETIME_MS / 1000} s; pool ≤ ${POOL_MAX} connections (SQLite: 1)`,
    `job: an empty async handler. Throughput: ${fmt(THROUGHPUT_JOBS)} jobs due now, inserted before start() (not timed); ` +
      `jobs/s = ${fmt(THROUGHPUT_JOBS)} / (last 'complete' − start()); after a discarded warm-up of ${WARMUP_JOBS} jobs, ` +
      `${ROUNDS} interleaved rounds, each row the median round.`,
    `Latency: Agenda running and idle, ${LATENCY_JOBS} jobs due at distinct times over ${LATENCY_SPREAD_MS / 1000} s ` +
      `(the first ${LATENCY_LEAD_MS / 1000} s after scheduling starts); handler start − due time, ms (1 ms resolution).`,
    `NOTE: polling interval ${PROCESS_EVERY_MS} ms for every backend. Agenda locks the jobs due within the next ` +
      'processEvery and starts each on a timer at its due time: a job locked in time starts a few ms late (one state ' +
      `save before the handler); one locked late waits for the next poll (up to ${PROCESS_EVERY_MS} ms more).`,
    'NOTE: PostgresBackend ships with LISTEN/NOTIFY on: a save of a job due now wakes the poller (future jobs still wait ' +
      'for a poll). It is measured as shipped, the goal\'s peer, and, for reference, polling only.',
    'NOTE: the database servers run on the same CPUs as this process (Agenda and the drivers).',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------- run

export async function run(): Promise<void> {
  const runStarted = performance.now();
  const cleanup = new Cleanup();
  // Agenda calls backend.connect() from its constructor without catching it, and some of its calls are fire and
  // forget: such a rejection fails the backend being worked on (its store is still dropped), not the process.
  let current: Harness | undefined;
  const onUnhandled = (reason: unknown): void => {
    if (current) current.fail(reason);
    else process.stderr.write(`bench scheduler: unhandled rejection: ${message(reason)}\n`);
  };
  const emergency = (code: number): void => {
    void withTimeout(cleanup.runAll(), EMERGENCY_CLEANUP_MS, 'cleanup')
      .catch((err: unknown) => process.stderr.write(`${message(err)}\n`))
      .finally(() => process.exit(code));
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\n${signal}: stopping Agenda, closing the pools, dropping the databases\n`);
    emergency(130);
  };
  process.on('unhandledRejection', onUnhandled);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const watchdog = setTimeout(() => {
    process.stderr.write(`\nbench scheduler: still running after ${WATCHDOG_MS / 1000} s, giving up (cleaning up first)\n`);
    emergency(1);
  }, WATCHDOG_MS);
  watchdog.unref();

  /** Runs one step of one backend; on failure the backend is dropped from the run, its store removed at once. */
  const step = async <T>(row: Row, undo: (() => Promise<void>) | undefined, what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    current = row.harness;
    try {
      return await fn();
    } catch (err) {
      row.missing = `${what} failed: ${message(err)}`;
      process.stderr.write(`${row.subject.label}: ${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      row.harness = row.harness?.rounds.length ? row.harness : undefined;
      await undo?.();
      return undefined;
    } finally {
      current = undefined;
    }
  };

  try {
    process.stdout.write(header());
    const busy = await cpuBusy(1_000);
    process.stdout.write(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%\n`);
    if (busy > 0.25) process.stdout.write('WARNING: the machine is not idle: other work competes for the CPUs, so the figures will be noisy\n');

    const down: Record<Subject['server'], string | undefined> = {
      none: undefined,
      mariadb: await probe(`MariaDB at ${MARIADB.host}:${MARIADB.port} (user ${MARIADB.user})`, async () => {
        const admin = await mariadbAdmin();
        return () => admin.destroy();
      }),
      postgres: await probe(`PostgreSQL at ${POSTGRES.host}:${POSTGRES.port} (user ${POSTGRES.user})`, async () => {
        const admin = await postgresAdmin();
        return () => admin.end();
      }),
    };

    // Set up every backend and warm it up.
    const rows: Row[] = subjects().map((subject) => ({ subject, missing: down[subject.server] }));
    const undos = new Map<Row, () => Promise<void>>();
    process.stdout.write('\n');
    for (const row of rows) {
      if (row.missing) continue;
      const own = new Cleanup();
      const undo = cleanup.add(`clean up ${row.subject.label}`, () => own.runAll(), EMERGENCY_CLEANUP_MS);
      undos.set(row, undo);
      process.stdout.write(`set-up and warm-up: ${row.subject.label} …\n`);
      const opened = await step(row, undo, 'set-up', () => withTimeout(row.subject.open(own), SETUP_TIMEOUT_MS, 'set-up'));
      if (!opened) continue;
      row.harness = new Harness(row.subject, opened, own);
      await step(row, undo, 'warm-up', () => row.harness!.warmUp());
    }

    // Throughput: interleaved rounds, the order rotating, so that drift on a shared machine hits every backend.
    const live = (): Row[] => rows.filter((r) => r.harness && !r.missing);
    rounds: for (let round = 1; round <= ROUNDS; round++) {
      const order = live();
      const shift = (round - 1) % Math.max(1, order.length);
      const rotated = [...order.slice(shift), ...order.slice(0, shift)];
      process.stdout.write(`throughput round ${round}/${ROUNDS}: ${rotated.map((r) => r.subject.label).join(', ')} …\n`);
      for (const row of rotated) {
        if (round > 1 && performance.now() - runStarted > ROUNDS_DEADLINE_MS) {
          process.stdout.write(`throughput stopped in round ${round}: the run is past ${ROUNDS_DEADLINE_MS / 1000} s (see the rounds column)\n`);
          break rounds;
        }
        await step(row, undos.get(row), `throughput round ${round}`, () => row.harness!.throughputRound(round));
      }
    }

    // Latency, then each backend is stopped and its store dropped.
    process.stdout.write(`latency: ${live().map((r) => r.subject.label).join(', ')} …\n`);
    for (const row of live()) {
      await step(row, undos.get(row), 'latency', () => row.harness!.measureLatency());
      await undos.get(row)?.();
    }

    printReport(rows);
    process.stdout.write(
      `\nrun time ${fmt((performance.now() - runStarted) / 1000, 1)} s; every database and temp file created is removed ` +
        `(Agenda's liveness timers may keep the process up to ${LOCK_LIFETIME_MS / 2000} s longer)\n`,
    );
    const ours = rows.filter((r) => r.subject.key === 'sqlite' || r.subject.key === 'mariadb');
    if (ours.some((r) => rateOf(r.harness) === undefined)) {
      process.stderr.write('bench scheduler: one of our backends (SQLite, MariaDB) could not be measured\n');
      process.exitCode = 1;
    }
  } finally {
    clearTimeout(watchdog);
    await cleanup.runAll();
    process.removeListener('unhandledRejection', onUnhandled);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
