// `npm run bench -- inventory [N]`: the certificate inventory at scale — seeding through the repository, HCQL searches,
// an aggregate and a CSV export over HTTP — each figure beside the same work hand-written in SQL, in the same run.
//
// On SQLite (a temp file) and on MariaDB (127.0.0.1:3306, root, a fresh database certwright_bench_<hex>_…, dropped at
// the end), each migrated with the core migrations:
//   certificates  N real certificates (default 200,000 on SQLite, 1,000,000 on MariaDB; INVENTORY_N or the CLI
//                 argument overrides both; INVENTORY_DB=sqlite|mariadb runs one engine; on MariaDB INVENTORY_KEEP=1
//                 keeps database A and INVENTORY_REUSE=<its name> runs searches, aggregate and CSV on it without
//                 seeding, since a 1M seed takes most of an hour on 2 vCPUs; INVENTORY_PARTS=searches,aggregate,csv
//                 runs only those measurements), signed with
//                 CertificateIssuer.issueForKey by a P-256 CA (85%) or an Ed25519 CA (15%) for a few pre-made leaf keys
//                 (P-256, P-384, RSA-2048/3072, Ed25519), from a fixed synthetic distribution (bench/lib/
//                 inventory-generate.ts): CN/SANs host<i>.<dept>.example<0..19>.com plus www/api names, IPs and emails;
//                 notAfter uniform over now ±2 years; ~5% revoked; 20 profiles and 50 teams (skewed), 500 owners;
//                 labels env (85%) and app (70%); metadata on 20%. Worker threads sign and decode (parseCertificate)
//                 each chunk of CHUNK certificates; they are idle while anything is timed.
//   seeding       per chunk, TIMED: prepare(info, input) for every certificate + CertificateRepository.insertMany
//                 (its batches of INSERT_BATCH per transaction) into database A; and, TIMED the same way, the same
//                 prepared row objects written with hand-written multi-row INSERTs (knex.raw, same transaction size)
//                 into database B, a second fresh migrated database. The two alternate which goes first per chunk.
//                 Goal: repository rate ≥ SEED_GOAL × raw rate. Database B is then dropped.
//   searches      a kernel (`node bin/certwright.js serve`, a child process) on database A answers POST
//                 /api/v1/certificates/search (API key, pageSize 50, full certificate objects) for 12 representative
//                 queries; beside each, the same question hand-written in SQL on the same database from this process
//                 (the page of full rows LIMIT 51, then the page's SANs, labels and metadata; a COUNT(*) for
//                 withCount). Where the page is ordered by id and many rows match, there are two hand-written forms:
//                 the natural one (the planner picks the index) and an "id walk" (index hints: walk (tenant, id) in
//                 order, test each row, probe side tables by certificate id); both are timed in the WARMUP_ROUNDS and
//                 the faster is the peer, as a DBA would keep the better plan. Then SEARCH_ROUNDS interleaved rounds;
//                 p50/p95 of the HTTP round trip vs of the SQL. Goals (set for 1M certificates): indexed searches p95 ≤
//                 max(10 × SQL p95, 20 ms); `dn contains` (no index can serve it) p95 ≤ 1.5 × the p95 of one raw full
//                 scan (SELECT COUNT(*) … WHERE LOWER(dn) LIKE …). Each answer is checked against the SQL's (same ids).
//   aggregate     POST /api/v1/certificates/aggregate {groupBy: [profile, status]} beside the hand-written GROUP BY
//                 (a full scan either way: AGGREGATE_MIN_ROUNDS…AGGREGATE_ROUNDS rounds within AGGREGATE_BUDGET_MS).
//   CSV           POST /api/v1/certificates/csv {} (every certificate) streamed to a counting sink: rows/s, and the
//                 server's peak RSS (VmHWM of /proc/<pid>/status, reset just before; VmRSS sampled every 50 ms too).
//                 Beside it, the same export hand-written (keyset batches of 1000 + side rows, CSV lines) in this
//                 process. Goals: ≥ CSV_RATE_GOAL rows/s, peak RSS < CSV_RSS_GOAL_MB MB.
// Exit code 0 even when a goal FAILs (1 only when the benchmark itself cannot run). On a FAIL of a search, the
// EXPLAIN of the engine's SQL (rebuilt here with the route's own functions) is printed.
import knexFactory, { type Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../core/db/connection.js';
import { CORE_MIGRATIONS } from '../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../core/db/migrator.js';
import { CERTIFICATE_LANGUAGE } from '../core/inventory/language.js';
import { LabelStore } from '../core/inventory/labels/store.js';
import { CertificateRepository, columnsFor, INSERT_BATCH, prepare, type CertificateRow, type PreparedCertificate } from '../core/inventory/repository.js';
import { projectionOf } from '../core/inventory/search/projection.js';
import { applySort, idOrdered, sortKeysOf } from '../core/inventory/search/sort.js';
import { denseSideWalk, parseQuery, querySource } from '../core/query/index.js';
import { CertificateFactory, hostOf, makeKeyMaterial, PROFILES, specOf } from './lib/inventory-generate.js';
import { PAGE_SIZE, rawAggregate, rawCsvExport, rawInsertMany, rowsOf, runRaw, searchCases, type RawPage, type RawQuery, type SearchCase, type SearchParams } from './lib/inventory-raw.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { cleanEnv, freePort, LOOPBACK, ServerProcess, waitUntilAnswering } from './lib/servers.js';

const DEFAULT_N = { sqlite: 200_000, mariadb: 1_000_000 } as const;
const CHUNK = 10_000;
const WARMUP_ROUNDS = 2;
const SEARCH_ROUNDS = 20;
/** Aggregate rounds: at most AGGREGATE_ROUNDS, fewer (not under AGGREGATE_MIN_ROUNDS) once AGGREGATE_BUDGET_MS is spent. */
const AGGREGATE_ROUNDS = 10;
const AGGREGATE_MIN_ROUNDS = 3;
const AGGREGATE_BUDGET_MS = 90_000;
const SEED_GOAL = 0.5;
const INDEXED_RATIO_GOAL = 10;
const INDEXED_FLOOR_MS = 20;
const SCAN_RATIO_GOAL = 1.5;
const CSV_RATE_GOAL = 50_000;
const CSV_RSS_GOAL_MB = 300;
const RSS_SAMPLE_MS = 50;
const TENANT = 'default';
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const POOL = { min: 0, max: 4 };

type Engine = 'sqlite' | 'mariadb';

// ---------------------------------------------------------------- small helpers

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const out = (text: string): void => void process.stdout.write(text);
const seconds = (ms: number): string => `${fmt(ms / 1000, 1)} s`;

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

function table(header: string[], rows: string[][]): void {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  out(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

/** Undo steps, run last-in first-out; one failing does not stop the others. */
class Cleanup {
  private readonly steps: { label: string; fn: () => Promise<void> }[] = [];
  add(label: string, fn: () => Promise<void>): () => Promise<void> {
    const step = { label, fn };
    this.steps.push(step);
    return async () => {
      const i = this.steps.indexOf(step);
      if (i === -1) return;
      this.steps.splice(i, 1);
      await run1(step);
    };
  }
  async runAll(): Promise<void> {
    while (this.steps.length > 0) await run1(this.steps.pop()!);
  }
}
async function run1(step: { label: string; fn: () => Promise<void> }): Promise<void> {
  try {
    await step.fn();
  } catch (err) {
    process.stderr.write(`cleanup: ${step.label} failed: ${message(err)}\n`);
  }
}

// ---------------------------------------------------------------- HTTP

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** One POST with a JSON body as the administrator; `onAnswer` consumes the response and settles. */
function postWith<T>(base: string, path: string, body: unknown, onAnswer: (res: IncomingMessage, started: number, resolve: (v: T) => void, reject: (e: Error) => void) => void): Promise<T> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      `${base}${path}`,
      {
        method: 'POST',
        agent,
        headers: { host: 'localhost', 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET },
      },
      (res) => {
        res.on('error', reject);
        onAnswer(res, started, resolve, reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** One POST with a JSON body; the time runs to the last byte of the answer. */
function post(base: string, path: string, body: unknown): Promise<Answer> {
  return postWith<Answer>(base, path, body, (res, started, resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
  });
}

/** A POST whose answer is streamed to a sink that only counts lines and bytes. */
function postStreamed(base: string, path: string, body: unknown): Promise<{ status: number; lines: number; bytes: number; ms: number; head: string }> {
  return postWith(base, path, body, (res, started, resolve) => {
    let lines = 0;
    let bytes = 0;
    let head = '';
    res.on('data', (c: Buffer) => {
      bytes += c.length;
      if (head.length < 400) head += c.toString('utf8', 0, Math.min(c.length, 400));
      for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
    });
    res.on('end', () => resolve({ status: res.statusCode ?? 0, lines, bytes, ms: performance.now() - started, head }));
  });
}

/** VmHWM / VmRSS of a process, in MB (NaN when unreadable). */
function memoryOf(pid: number): { hwm: number; rss: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return { hwm: NaN, rss: NaN };
  }
}

/** Resets VmHWM of a process (Linux: `5` to /proc/<pid>/clear_refs); false when not possible. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- stores

interface Store {
  knex: Knex;
  /** DATABASE_URL for the kernel child (null: SQLite <dataDir>/certwright.db). */
  url: string | null;
  dataDir: string;
  detail: string;
}

async function mariadbAdmin(): Promise<Knex> {
  const admin = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('SELECT 1');
    return admin;
  } catch (err) {
    await admin.destroy().catch(() => undefined);
    throw err;
  }
}

/**
 * A fresh migrated store; what must be undone is registered with `cleanup`. `reuse` (MariaDB): an existing
 * database kept by an earlier run (INVENTORY_KEEP=1), left in place. `keep`: this database is not dropped.
 */
async function openStore(engine: Engine, role: string, cleanup: Cleanup, admin: Knex | null, options: { reuse?: string; keep?: boolean } = {}): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), `certwright-bench-inventory-${role}-`));
  cleanup.add(`remove ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
  let url: string | null = null;
  let name = '';
  if (engine === 'mariadb') {
    name = options.reuse ?? `certwright_bench_${randomBytes(4).toString('hex')}_${role}`;
    if (!options.reuse) await admin!.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
    if (!options.reuse && !options.keep) cleanup.add(`drop MariaDB database ${name}`, async () => void (await admin!.raw('DROP DATABASE IF EXISTS ??', [name])));
    url = `mysql://${MARIADB.user}@${MARIADB.host}:${MARIADB.port}/${name}`;
  }
  const db = openDatabase({ url, dataDir, pool: POOL });
  cleanup.add(`close the ${engine} ${role} knex`, () => db.knex.destroy());
  await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  return { knex: db.knex, url, dataDir, detail: engine === 'mariadb' ? `database ${name}` : db.displayUrl };
}

// ---------------------------------------------------------------- seeding

interface SeedResult {
  n: number;
  repoMs: number;
  prepareMs: number;
  rawMs: number;
  generateMs: number;
  sideRows: number;
}

const LABELS = [
  { name: 'env', regex: 'prod|staging|dev|test' },
  { name: 'app', regex: 'app-[0-9]+' },
];

async function seed(engine: Engine, n: number, a: Store, b: Store, factory: CertificateFactory, now: number): Promise<SeedResult> {
  const repository = new CertificateRepository(a.knex, () => Date.now());
  for (const l of LABELS) await repository.labels.create(TENANT, l);
  const rawLabels = new LabelStore(b.knex, () => Date.now());
  for (const l of LABELS) await rawLabels.create(TENANT, l);

  const r: SeedResult = { n, repoMs: 0, prepareMs: 0, rawMs: 0, generateMs: 0, sideRows: 0 };
  const started = performance.now();
  const progress = (done: number): void => {
    const elapsed = performance.now() - started;
    const eta = done > 0 ? (elapsed / done) * (n - done) : 0;
    process.stderr.write(
      `\r  ${engine} seeding ${fmt(done)}/${fmt(n)} (${fmt((done * 100) / n)}%)  repository ${fmt(done / (r.repoMs / 1000 || 1))}/s  raw ${fmt(done / (r.rawMs / 1000 || 1))}/s  ` +
        `elapsed ${fmt(elapsed / 1000)} s, eta ${fmt(eta / 1000)} s   `,
    );
  };
  progress(0);
  for (let at = 0, chunk = 0; at < n; at += CHUNK, chunk++) {
    const end = Math.min(n, at + CHUNK);
    const t = performance.now();
    const infos = await factory.chunk(at, end);
    const inputs = infos.map((info, k) => ({ certificate: info.pem, ...specOf(at + k, now).input }));
    r.generateMs += performance.now() - t;

    // prepare is part of the repository path (timed, charged to it); its records are then written twice, by
    // insertMany into A and by the raw INSERTs into B, the order alternating per chunk.
    const t0 = performance.now();
    const records: PreparedCertificate[] = infos.map((info, k) => prepare(info, inputs[k]!));
    const prepared = performance.now() - t0;
    r.prepareMs += prepared;
    r.repoMs += prepared;
    const viaRepository = async (): Promise<void> => {
      const t1 = performance.now();
      await repository.insertMany(TENANT, records);
      r.repoMs += performance.now() - t1;
    };
    const viaRaw = async (): Promise<void> => {
      const t1 = performance.now();
      for (let i = 0; i < records.length; i += INSERT_BATCH) await rawInsertMany(b.knex, TENANT, records.slice(i, i + INSERT_BATCH));
      r.rawMs += performance.now() - t1;
    };
    if (chunk % 2 === 0) {
      await viaRepository();
      await viaRaw();
    } else {
      await viaRaw();
      await viaRepository();
    }
    for (const rec of records) r.sideRows += rec.sans.length + rec.labels.length + rec.metadata.length + rec.facets.length;
    progress(end);
  }
  process.stderr.write('\n');
  return r;
}

// ---------------------------------------------------------------- searches

interface SearchResult {
  c: SearchCase;
  http: number[];
  raw: number[];
  /** Which hand-written form is the peer: the natural SQL, or the id walk (see SearchCase.walk). */
  form: 'natural' | 'walk';
  warm: { natural: number[]; walk: number[]; enginePage: number[]; objectsOf: number[] };
  /** Ids of the page (the first warm-up), for the EXPLAIN of the side reads. */
  pageIds: string[];
  matches: number;
  same: string;
  error?: string;
}

/** Values of the searches, chosen from the synthetic distribution so that each matches what its row says. */
function paramsOf(n: number, now: number): SearchParams {
  // A host certificate (not S/MIME) near the end of the range, for `san equals` and `dn contains`.
  let i = Math.floor(n * 0.77);
  while (specOf(i, now).input.profile === 'smime') i++;
  const { host } = hostOf(i);
  return {
    tenant: TENANT,
    now,
    san: host,
    sanSuffix: '.example7.com',
    labelValue: 'staging',
    profile: 'vpn',
    team: 'team-03',
    owner: 'user-123',
    dnNeedle: `${host},`,
    countProfile: PROFILES[0],
  };
}

/**
 * The engine's page query for a body, rebuilt with the route's own functions (narrowed by the query; the
 * administrator has no visibility filter): run from this process in the warm-up to split the HTTP time, and
 * EXPLAINed when a search misses its goal.
 */
/** Wrapped: an async function returning a knex builder (a thenable) would run it. */
async function enginePage(knex: Knex, body: Record<string, unknown>, now: number): Promise<{ page: Knex.QueryBuilder }> {
  const L = CERTIFICATE_LANGUAGE;
  const T = L.table;
  const keys = sortKeysOf(L, (body.sortedBy as { element: string; order?: string }[] | undefined) ?? null);
  const ast = parseQuery((body.query as string | undefined) ?? null, L);
  // As the route narrows it: the density probe (timed with the page) decides the SAN walk.
  const base = { knex, now, table: T, tenant: TENANT };
  const source = querySource(ast, L, { ...base, walk: await denseSideWalk(ast, L, base, idOrdered(L, keys)) }, idOrdered(L, keys));
  const page = source.qb.clone().select(columnsFor(projectionOf((body.fields as string[] | undefined) ?? null)).map((c) => `${T}.${c}`));
  applySort(page, T, keys, { column: L.idColumn, ref: source.idRef });
  return { page: page.limit(PAGE_SIZE + 1).offset(0) };
}

/** The side-row read of CertificateRepository.objectsOf for a page, as it issues it (for EXPLAIN): by id alone. */
function sideRead(knex: Knex, table: string, ids: string[]): Knex.Sql {
  return knex(table).whereIn('certificate_id', ids).select('certificate_id', 'tenant', 'value').toSQL();
}

async function explain(knex: Knex, engine: Engine, sql: string, bindings: readonly unknown[]): Promise<string[]> {
  try {
    const rows = rowsOf<Record<string, unknown>>(knex, await knex.raw(`${engine === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${sql}`, bindings as Knex.RawBinding[]));
    return rows.map((r) =>
      engine === 'sqlite'
        ? String(r.detail)
        : `${String(r.select_type)} ${String(r.table)} type=${String(r.type)} key=${String(r.key)} rows=${String(r.rows)} ${String(r.Extra ?? '')}`,
    );
  } catch (err) {
    return [`(EXPLAIN failed: ${message(err)})`];
  }
}

/** SQL with its select list (the ~40 columns of a certificate) left out, for printing. */
const short = (sql: string): string => sql.replace(/^select (.+?) from /i, (_m, cols: string) => `select <${cols.split(',').length} columns> from `);

/** Whether the HTTP answer is the SQL's: same ids in the same order, same count. */
function sameAnswer(c: SearchCase, answer: Answer, raw: RawPage): string {
  if (answer.status !== 200) return `HTTP ${answer.status}`;
  const json = JSON.parse(answer.body) as { results: { _id: string }[]; count?: number };
  const ids = json.results.map((r) => r._id);
  if (c.raw.scanOnly) {
    const expected = Math.min(PAGE_SIZE, Number(Object.values(raw.rows[0] ?? { n: 0 })[0]));
    return ids.length === expected ? 'yes' : `NO (${ids.length} vs ${expected})`;
  }
  const want = raw.rows.map((r) => r.id);
  if (ids.join() !== want.join()) return `NO (${ids.length} vs ${want.length} ids)`;
  if (raw.count !== undefined && json.count !== raw.count) return `NO (count ${String(json.count)} vs ${raw.count})`;
  return 'yes';
}

async function countOf(knex: Knex, c: SearchCase): Promise<number> {
  if (c.raw.scanOnly) return Number(Object.values(rowsOf(knex, await knex.raw(c.raw.sql, c.raw.bindings as Knex.RawBinding[]))[0] ?? { n: 0 })[0]);
  // The page SQL without its ORDER BY / LIMIT, counted.
  const inner = c.raw.sql.replace(/ ORDER BY [^)]*$/, '');
  const counted = `SELECT COUNT(*) AS n FROM (${inner}) q`;
  return Number(Object.values(rowsOf(knex, await knex.raw(counted, c.raw.bindings as Knex.RawBinding[]))[0] ?? { n: 0 })[0]);
}

async function searches(engine: Engine, knex: Knex, repository: CertificateRepository, base: string, n: number): Promise<SearchResult[]> {
  const mysql = engine === 'mariadb';
  const casesNow = (): SearchCase[] => searchCases(paramsOf(n, Date.now()), mysql);
  const results: SearchResult[] = casesNow().map((c) => ({
    c,
    http: [],
    raw: [],
    form: 'natural',
    warm: { natural: [], walk: [], enginePage: [], objectsOf: [] },
    pageIds: [],
    matches: 0,
    same: '',
  }));
  for (const res of results) res.matches = await countOf(knex, res.c);
  const timed = async (q: RawQuery, into: number[] | null): Promise<RawPage> => {
    const t = performance.now();
    const page = await runRaw(knex, q);
    into?.push(performance.now() - t);
    return page;
  };
  // The indexed searches' rounds first, then the unindexed (full scan) ones: a scan through a small
  // buffer pool leaves the optimizer's index dives of whatever query comes next cold (20-40 ms on
  // MariaDB's stock 128 MB pool), a cost of the scan, not of the search after it.
  for (const pass of ['indexed', 'unindexed'] as const)
  for (let round = -WARMUP_ROUNDS; round < SEARCH_ROUNDS; round++) {
    const warming = round < 0;
    process.stderr.write(`\r  ${engine} searches (${pass}): ${warming ? `warm-up ${round + WARMUP_ROUNDS + 1}/${WARMUP_ROUNDS}` : `round ${round + 1}/${SEARCH_ROUNDS}`}   `);
    if (round === 0) {
      // The peer of each search: the faster hand-written form in the warm-up.
      for (const res of results) if (res.c.walk && percentile(res.warm.walk, 0.5) < percentile(res.warm.natural, 0.5)) res.form = 'walk';
    }
    const fresh = casesNow();
    for (const [k, res] of results.entries()) {
      if (res.error || res.c.indexed !== (pass === 'indexed')) continue;
      const c = fresh[k]!;
      const timeHttp = async (): Promise<Answer> => {
        const a = await post(base, '/api/v1/certificates/search', { ...c.body, pageSize: PAGE_SIZE });
        if (a.status !== 200) res.error = `HTTP ${a.status}: ${a.body.slice(0, 300)}`;
        else if (!warming) res.http.push(a.ms);
        return a;
      };
      const timeRaw = async (): Promise<RawPage> => {
        if (!warming) return timed(res.form === 'walk' ? c.walk! : c.raw, res.raw);
        const page = await timed(c.raw, res.warm.natural);
        if (c.walk) {
          const walked = await timed(c.walk, res.warm.walk);
          const a = page.rows.map((r) => r.id).join();
          if (walked.rows.map((r) => r.id).join() !== a && !res.error) res.error = 'the two hand-written forms disagree (benchmark bug)';
        }
        return page;
      };
      let answer: Answer;
      let page: RawPage;
      if ((round + k) % 2 === 0) {
        answer = await timeHttp();
        page = await timeRaw();
      } else {
        page = await timeRaw();
        answer = await timeHttp();
      }
      if (round === -WARMUP_ROUNDS || (res.same !== '' && res.same !== 'yes')) res.same = sameAnswer(c, answer, page);
      if (warming && !res.error) {
        // Where the HTTP time goes: the engine's page query and the repository's objectsOf, run from here.
        let t = performance.now();
        const rows = (await (await enginePage(knex, c.body, Date.now())).page) as CertificateRow[];
        res.warm.enginePage.push(performance.now() - t);
        t = performance.now();
        await repository.objectsOf(TENANT, rows.slice(0, PAGE_SIZE), projectionOf((c.body.fields as string[] | undefined) ?? null));
        res.warm.objectsOf.push(performance.now() - t);
        res.pageIds = rows.slice(0, PAGE_SIZE).map((r) => r.id);
      }
    }
  }
  process.stderr.write('\n');
  return results;
}

// ---------------------------------------------------------------- aggregate, CSV

interface AggregateResult {
  http: number[];
  raw: number[];
  groups: number;
  same: string;
}

async function aggregate(engine: Engine, knex: Knex, base: string): Promise<AggregateResult> {
  const r: AggregateResult = { http: [], raw: [], groups: 0, same: '' };
  const started = performance.now();
  for (let round = -1; round < AGGREGATE_ROUNDS; round++) {
    if (round >= AGGREGATE_MIN_ROUNDS && performance.now() - started > AGGREGATE_BUDGET_MS) break;
    process.stderr.write(`\r  ${engine} aggregate: ${round < 0 ? 'warm-up' : `round ${round + 1}/${AGGREGATE_ROUNDS}`}   `);
    const q = rawAggregate(TENANT, Date.now());
    const sql = async (): Promise<{ g0: string | null; g1: string; n: number | string }[]> => {
      const t = performance.now();
      const rows = rowsOf<{ g0: string | null; g1: string; n: number | string }>(knex, await knex.raw(q.sql, q.bindings as Knex.RawBinding[]));
      rawMs = performance.now() - t;
      return rows;
    };
    let rawMs = 0;
    let rows: { g0: string | null; g1: string; n: number | string }[];
    let a: Answer;
    if (round % 2 === 0) {
      rows = await sql();
      a = await post(base, '/api/v1/certificates/aggregate', { groupBy: ['profile', 'status'] });
    } else {
      a = await post(base, '/api/v1/certificates/aggregate', { groupBy: ['profile', 'status'] });
      rows = await sql();
    }
    if (a.status !== 200) throw new Error(`aggregate answered ${a.status}: ${a.body.slice(0, 300)}`);
    if (round >= 0) {
      r.raw.push(rawMs);
      r.http.push(a.ms);
    }
    if (round === -1) {
      const items = (JSON.parse(a.body) as { items: { _id: { profile: string | null; status: string }; count: number }[] }).items;
      const key = (p: string | null, s: string, c: number | string): string => `${p ?? ''}/${s}=${Number(c)}`;
      const mine = new Set(rows.map((x) => key(x.g0, x.g1, x.n)));
      r.groups = items.length;
      r.same = items.length === rows.length && items.every((i) => mine.has(key(i._id.profile, i._id.status, i.count))) ? 'yes' : `NO (${items.length} vs ${rows.length} groups)`;
    }
  }
  process.stderr.write('\n');
  return r;
}

interface CsvResult {
  rows: number;
  bytes: number;
  ms: number;
  hwmMb: number;
  sampledMb: number;
  peakReset: boolean;
  rawRows: number;
  rawMs: number;
  status: number;
}

async function csv(engine: Engine, knex: Knex, base: string, pid: number): Promise<CsvResult> {
  process.stderr.write(`  ${engine} CSV export over HTTP …\n`);
  const peakReset = resetPeak(pid);
  let sampled = memoryOf(pid).rss;
  const sampler = setInterval(() => {
    const m = memoryOf(pid).rss;
    if (m > sampled) sampled = m;
  }, RSS_SAMPLE_MS);
  let res;
  try {
    res = await postStreamed(base, '/api/v1/certificates/csv', {});
  } finally {
    clearInterval(sampler);
  }
  const hwm = memoryOf(pid).hwm;
  process.stderr.write(`  ${engine} CSV export hand-written …\n`);
  let bytes = 0;
  const t = performance.now();
  const rawRows = await rawCsvExport(knex, TENANT, Date.now(), (chunk) => void (bytes += Buffer.byteLength(chunk)));
  const rawMs = performance.now() - t;
  if (res.status !== 200) process.stderr.write(`  CSV answered ${res.status}: ${res.head}\n`);
  return { rows: Math.max(0, res.lines - 1), bytes: res.bytes, ms: res.ms, hwmMb: hwm, sampledMb: sampled, peakReset, rawRows, rawMs, status: res.status };
}

// ---------------------------------------------------------------- one engine

async function startKernel(store: Store, cleanup: Cleanup): Promise<{ kernel: ServerProcess; base: string }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...cleanEnv(), PORT: String(port), HOST: LOOPBACK, CERTWRIGHT_DATA_DIR: store.dataDir, CERTWRIGHT_ADMIN_SECRET: ADMIN_SECRET, LOG_LEVEL: 'warn' };
  if (store.url) env.DATABASE_URL = store.url;
  const kernel = new ServerProcess('certwright kernel', ['bin/certwright.js', 'serve'], env);
  cleanup.add('stop the kernel', () => kernel.stop());
  const base = `http://${LOOPBACK}:${port}`;
  await waitUntilAnswering(kernel, `${base}/healthz`, { host: 'localhost' });
  return { kernel, base };
}

async function benchEngine(engine: Engine, size: number, factory: CertificateFactory, now: number): Promise<void> {
  let n = size;
  const cleanup = new Cleanup();
  const engineStarted = performance.now();
  const phase = (what: string, since: number): void => out(`  ${engine}: ${what} in ${seconds(performance.now() - since)}\n`);
  try {
    let admin: Knex | null = null;
    if (engine === 'mariadb') {
      admin = await mariadbAdmin();
      cleanup.add('close the MariaDB admin connection', () => admin!.destroy());
    }
    const reuse = engine === 'mariadb' ? process.env.INVENTORY_REUSE : undefined;
    const keep = process.env.INVENTORY_KEEP === '1' && engine === 'mariadb';
    const a = await openStore(engine, 'repo', cleanup, admin, { reuse, keep });
    if (reuse) n = Number(Object.values(rowsOf(a.knex, await a.knex.raw('SELECT COUNT(*) AS n FROM inv_certificates'))[0] ?? {})[0]);
    // The raw peer's store is dropped as soon as seeding is over; on a failure before that, with the rest.
    const bCleanup = new Cleanup();
    cleanup.add('remove the raw peer store', () => bCleanup.runAll());
    const b = reuse ? null : await openStore(engine, 'raw', bCleanup, admin);
    let version = '';
    if (engine === 'mariadb') version = String(Object.values(rowsOf(a.knex, await a.knex.raw('SELECT VERSION() AS v'))[0] ?? {})[0]);
    else version = `SQLite ${String(Object.values(rowsOf(a.knex, await a.knex.raw('SELECT sqlite_version() AS v'))[0] ?? {})[0])}`;
    out(`\n== ${engine === 'sqlite' ? 'SQLite' : 'MariaDB'} (${version}): ${fmt(n)} certificates; A = ${a.detail}${b ? `, B (raw peer) = ${b.detail}` : ' (reused: INVENTORY_REUSE, not seeded by this run)'}\n`);
    if (keep) out(`  database A is kept (INVENTORY_KEEP=1): rerun the searches, aggregate and CSV on it with INVENTORY_REUSE=${a.detail.replace(/^database /, '')}\n`);

    let t = performance.now();
    const s = b ? await seed(engine, n, a, b, factory, now) : null;
    if (s) phase(`seeded ${fmt(n)} certificates (+${fmt(s.sideRows)} side rows) twice — signing+decoding ${seconds(s.generateMs)} (untimed), repository ${seconds(s.repoMs)}, raw ${seconds(s.rawMs)} —`, t);
    await bCleanup.runAll();

    t = performance.now();
    const { kernel, base } = await startKernel(a, cleanup);
    phase('kernel started on database A', t);
    const pid = kernel.proc.pid!;

    const parts = partsToRun();
    t = performance.now();
    const found = parts.has('searches') ? await searches(engine, a.knex, new CertificateRepository(a.knex, () => Date.now()), base, n) : null;
    if (found) phase(`${found.length} searches × ${WARMUP_ROUNDS + SEARCH_ROUNDS} rounds`, t);
    t = performance.now();
    const agg = parts.has('aggregate') ? await aggregate(engine, a.knex, base) : null;
    if (agg) phase(`aggregate × ${agg.http.length} (+1 warm-up)`, t);
    t = performance.now();
    const exported = parts.has('csv') ? await csv(engine, a.knex, base, pid) : null;
    if (exported) phase('CSV exports', t);
    if (parts.size < PARTS.length) out(`  only ${[...parts].join(', ')} (INVENTORY_PARTS); the rest is not measured in this run\n`);
    if (!kernel.running) throw new Error(`the kernel died during the benchmark:\n${kernel.output()}`);

    // ---- report
    const verdicts: string[] = [];
    const failed: SearchResult[] = [];
    if (s) {
    const repoRate = (n * 1000) / s.repoMs;
    const rawRate = (n * 1000) / s.rawMs;
    const seedRatio = repoRate / rawRate;
    const rows: string[][] = [
      [`seeding: prepare + insertMany (database A)`, `${fmt(repoRate)} certs/s`, `${fmt(seedRatio * 100, 1)}%`, `≥${fmt(SEED_GOAL * 100)}%`, seedRatio >= SEED_GOAL ? 'PASS' : 'FAIL'],
      [`  peer: raw batched INSERTs, same rows (B)`, `${fmt(rawRate)} certs/s`, '100%', '', 'peer'],
      [`  prepare alone (part of the repository time)`, `${fmt((n * 1000) / s.prepareMs)} certs/s`, `${fmt((s.prepareMs * 100) / s.repoMs, 1)}% of it`, '', 'info'],
    ];
    verdicts.push(`${seedRatio >= SEED_GOAL ? 'PASS' : 'FAIL'}  seeding through the repository at ${fmt(seedRatio * 100, 1)}% of raw INSERTs (goal ≥${fmt(SEED_GOAL * 100)}%)`);
    table(['seeding (' + fmt(n) + ' certificates, ' + fmt(s.sideRows) + ' side rows)', 'rate', 'vs peer', 'goal', 'result'], rows);
    }

    if (found) {
    const searchRows: string[][] = [];
    const failures: SearchResult[] = [];
    for (const res of found) {
      const hp50 = percentile(res.http, 0.5);
      const hp95 = percentile(res.http, 0.95);
      const rp50 = percentile(res.raw, 0.5);
      const rp95 = percentile(res.raw, 0.95);
      const limit = res.c.indexed ? Math.max(INDEXED_RATIO_GOAL * rp95, INDEXED_FLOOR_MS) : SCAN_RATIO_GOAL * rp95;
      const ok = !res.error && res.same === 'yes' && hp95 <= limit;
      if (!ok) failures.push(res);
      searchRows.push([
        res.c.label,
        fmt(res.matches),
        res.form === 'walk' ? 'id walk' : 'natural',
        res.error ? 'ERROR' : fmt(hp50, 1),
        res.error ? '' : fmt(hp95, 1),
        fmt(rp50, 1),
        fmt(rp95, 1),
        res.error ? '' : `${fmt(hp95 / rp95, 1)}×`,
        fmt(percentile(res.warm.enginePage, 0.5), 1),
        fmt(percentile(res.warm.objectsOf, 0.5), 1),
        `≤${fmt(limit, 1)}`,
        res.same || '-',
        ok ? 'PASS' : 'FAIL',
      ]);
    }
    table(['search (POST …/search, pageSize 50)', 'matches', 'SQL form', 'p50 ms', 'p95 ms', 'SQL p50', 'SQL p95', 'p95 ratio', 'engine SQL', 'objectsOf', 'goal ms', 'same', 'result'], searchRows);
    out(`  (engine SQL, objectsOf: ms, median of the ${WARMUP_ROUNDS} warm-up rounds — the route's page query and the repository's objectsOf for its rows, run from this process: where the HTTP time goes)\n`);
    const passed = found.length - failures.length;
    verdicts.push(`${failures.length === 0 ? 'PASS' : 'FAIL'}  searches: ${passed}/${found.length} within goal (indexed p95 ≤ max(${INDEXED_RATIO_GOAL}× SQL p95, ${INDEXED_FLOOR_MS} ms); unindexed ≤ ${SCAN_RATIO_GOAL}× one full scan)`);
    failed.push(...failures);
    }

    if (agg) {
    const ap95 = percentile(agg.http, 0.95);
    const rp95 = percentile(agg.raw, 0.95);
    table(
      ['aggregate', 'groups', 'p50 ms', 'p95 ms', 'SQL p50', 'SQL p95', 'p95 ratio', 'same', 'result'],
      [[`POST …/aggregate {groupBy: [profile, status]}`, fmt(agg.groups), fmt(percentile(agg.http, 0.5), 1), fmt(ap95, 1), fmt(percentile(agg.raw, 0.5), 1), fmt(rp95, 1), `${fmt(ap95 / rp95, 1)}×`, agg.same, 'info']],
    );

    }

    if (exported) {
    const csvRate = (exported.rows * 1000) / exported.ms;
    const rawCsvRate = (exported.rawRows * 1000) / exported.rawMs;
    const peak = exported.peakReset ? exported.hwmMb : exported.sampledMb;
    const csvOk = exported.status === 200 && exported.rows === n && csvRate >= CSV_RATE_GOAL;
    const rssOk = peak < CSV_RSS_GOAL_MB;
    table(
      ['CSV export (everything)', 'rows', 'seconds', 'rows/s', 'vs peer', 'goal', 'result'],
      [
        [`POST …/csv {} streamed (${fmt(exported.bytes / 1e6)} MB)`, fmt(exported.rows), fmt(exported.ms / 1000, 1), fmt(csvRate), `${fmt((csvRate / rawCsvRate) * 100, 1)}%`, `≥${fmt(CSV_RATE_GOAL)}/s`, csvOk ? 'PASS' : 'FAIL'],
        ['  peer: hand-written keyset export, this process', fmt(exported.rawRows), fmt(exported.rawMs / 1000, 1), fmt(rawCsvRate), '100%', '', 'peer'],
        [
          `  server peak RSS during the export (${exported.peakReset ? 'VmHWM, reset before' : 'sampled VmRSS'}; sampled max ${fmt(exported.sampledMb)} MB)`,
          '',
          '',
          `${fmt(peak)} MB`,
          '',
          `<${CSV_RSS_GOAL_MB} MB`,
          rssOk ? 'PASS' : 'FAIL',
        ],
      ],
    );
    verdicts.push(`${csvOk ? 'PASS' : 'FAIL'}  CSV export ${fmt(csvRate)} rows/s (goal ≥${fmt(CSV_RATE_GOAL)}), ${fmt(exported.rows)}/${fmt(n)} rows`);
    verdicts.push(`${rssOk ? 'PASS' : 'FAIL'}  server peak RSS during the CSV export ${fmt(peak)} MB (goal <${CSV_RSS_GOAL_MB} MB)`);
    }

    const failures = failed;
    if (failures.length > 0) {
      out(`\nEXPLAIN of the engine's SQL for the searches that did not meet their goal (rebuilt with the route's functions):\n`);
      for (const res of failures) {
        if (res.error) {
          out(`- ${res.c.label}: ${res.error}\n`);
          continue;
        }
        const sql = (await enginePage(a.knex, res.c.body, Date.now())).page.toSQL();
        out(`- ${res.c.label}\n  engine:       ${short(sql.sql)}\n`);
        for (const l of await explain(a.knex, engine, sql.sql, sql.bindings)) out(`    ${l}\n`);
        const ids = res.pageIds.length ? res.pageIds : ['000000000000000000000000'];
        for (const table of ['inv_certificate_sans', 'inv_certificate_labels', 'inv_certificate_metadata']) {
          const side = sideRead(a.knex, table, ids);
          out(`  objectsOf side read: ${side.sql.replace(/\(\?(, \?)+\)/, `(<${ids.length} ids>)`)}\n`);
          for (const l of await explain(a.knex, engine, side.sql, side.bindings)) out(`    ${l}\n`);
        }
        const peer = res.form === 'walk' ? res.c.walk! : res.c.raw;
        out(`  hand-written (${res.form === 'walk' ? 'id walk' : 'natural'}): ${short(peer.sql)}\n`);
        for (const l of await explain(a.knex, engine, peer.sql, peer.bindings)) out(`    ${l}\n`);
      }
    }
    out(`\n${verdicts.join('\n')}\n`);
    out(`${engine}: ${seconds(performance.now() - engineStarted)} in all\n`);
  } catch (err) {
    // Driver errors quote the whole statement (megabytes for a batch insert): keep the head.
    const text = message(err);
    throw new Error(`${engine}: ${text.length > 2000 ? `${text.slice(0, 1000)} … ${text.slice(-600)}` : text}`);
  } finally {
    await cleanup.runAll();
  }
}

// ---------------------------------------------------------------- entry point

const PARTS = ['searches', 'aggregate', 'csv'] as const;

/** INVENTORY_PARTS=searches,aggregate,csv (default: all): which measurements to run after seeding. */
function partsToRun(): Set<(typeof PARTS)[number]> {
  const text = process.env.INVENTORY_PARTS;
  if (!text) return new Set(PARTS);
  const names = text.split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = names.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0 || names.length === 0) throw new Error(`INVENTORY_PARTS lists ${PARTS.join(', ')}, not ${JSON.stringify(text)}`);
  return new Set(names as (typeof PARTS)[number][]);
}

function sizeArg(): number | null {
  const text = process.env.INVENTORY_N ?? process.argv[3];
  if (!text) return null;
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim().replace(/_/g, ''));
  if (!m) throw new Error(`INVENTORY_N / the argument must be a number of certificates (e.g. 20000, 20k, 1m), not ${JSON.stringify(text)}`);
  const n = Math.round(Number(m[1]) * (m[2]?.toLowerCase() === 'k' ? 1e3 : m[2]?.toLowerCase() === 'm' ? 1e6 : 1));
  if (n < 100) throw new Error('at least 100 certificates');
  return n;
}

export async function run(): Promise<void> {
  const override = sizeArg();
  const only = process.env.INVENTORY_DB;
  if (only && only !== 'sqlite' && only !== 'mariadb') throw new Error('INVENTORY_DB is sqlite or mariadb');
  const engines: Engine[] = only ? [only as Engine] : ['sqlite', 'mariadb'];
  const cpu = cpus()[0];
  out(
    [
      'Certwright inventory benchmark',
      `node ${process.version}, ${availableParallelism()} CPU(s)${cpu ? ` (${cpu.model.trim()})` : ''}`,
      `certificates: ${engines.map((e) => `${fmt(override ?? DEFAULT_N[e])} on ${e}`).join(', ')}; searches: ${WARMUP_ROUNDS} warm-up + ${SEARCH_ROUNDS} interleaved rounds, pageSize ${PAGE_SIZE}`,
      '',
    ].join('\n'),
  );
  const busy = await cpuBusy(1_000);
  out(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle, figures will be noisy' : ''}\n`);
  const started = performance.now();
  const now = Date.now();
  const factory = new CertificateFactory(makeKeyMaterial(now), now);
  let interrupted = false;
  const onSignal = (): void => {
    interrupted = true;
    process.stderr.write('\ninterrupted: cleaning up (databases, temp files, kernel) …\n');
  };
  process.once('SIGINT', onSignal);
  try {
    for (const engine of engines) {
      if (interrupted) break;
      await benchEngine(engine, override ?? DEFAULT_N[engine], factory, now);
    }
  } finally {
    process.off('SIGINT', onSignal);
    await factory.close();
    agent.destroy();
  }
  out(`\ntotal: ${seconds(performance.now() - started)}\n`);
}
