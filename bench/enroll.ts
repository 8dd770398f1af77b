// `npm run bench -- enroll`: WebRA decentralized enrollment per second at concurrency CONCURRENCY, beside the
// in-process issuance rate of the PKI toolkit measured in the same run.
//
//   toolkit   CertificateIssuer.issue (core/pki/issue) in this process, one thread: CSR (DER) → signed certificate
//             with a P-256 CA key and a template like the local CA's (validity, KU, EKU, CRL and OCSP URLs), over
//             the same CSRs the enrollment uses: ROUNDS rounds of ROUND_MS after a warm-up, the median; measured
//             before and after the engines, the higher of the two. This is the peer: what issuing alone costs,
//             without HTTP, authentication, database or events.
//   enroll    a kernel in a child process (`node bin/certwright.js serve`, LOG_LEVEL=warn, the first start creates
//             connector local-ca and profile default), over real HTTP on loopback (keep-alive, CONCURRENCY sockets,
//             the load generator in this process): POST /api/v1/requests/submit {module webra, workflow enroll,
//             profile default, template {csr, subject cn.1, sans DNSNAME}} with API-key authentication (argon2
//             verified once, then cached: security.cacheTtlMs). Each CSR is P-256, made ahead of time, with a unique
//             CN. Every answer is checked (2xx, status completed, certificate present); after the rounds the
//             database is checked too: every request row completed with its certificate id, every certificate row
//             stored, a REQUEST-COMPLETED event per request. WARMUP requests first (JIT, caches), then ENROLL_ROUNDS
//             rounds of ENROLL_N requests, the median round. HTTP, not app.inject: in-process inject measured about
//             the same rate (HTTP is not what limits it), and HTTP is what clients pay.
//   engines   SQLite (a file in a temp data dir) and MariaDB (127.0.0.1:3306, root, a fresh database dropped at the
//             end; skipped with a note when unreachable). ENROLL_DB=sqlite|mariadb runs one.
//   CPU ms    the kernel's CPU per enrollment during the median round, its main thread (the event loop, which
//             limits the rate) and all its threads (Linux /proc); for the toolkit, its time per issuance. Steadier
//             than rates on a shared machine: a comparison of two builds looks here first.
//   floor     bench/lib/enroll-floor-server.ts on each engine, after the kernel, measured the same way (load, CSRs,
//             checks): a minimal server that issues with the same toolkit call and commits the rows the checks read
//             (request, certificate, document, SAN, three chained events) into the kernel's own tables, and does
//             nothing else the kernel must (profile, permissions, PKI queue, CA record, parse, client-compat
//             answers). Not a goal: what any enrollment server written in Node reaches here at the most on one
//             event loop, so a ratio is read against it. ENROLL_FLOOR=0 leaves it out.
// Goal: enroll/s ≥ GOAL × toolkit issue/s. Exit code 0 even when the goal FAILs (1 only when the benchmark itself
// cannot run).
import knexFactory, { type Knex } from 'knex';
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../core/db/connection.js';
import { buildCsr } from '../core/pki/csr/build.js';
import { toPem } from '../core/pki/input.js';
import { CertificateIssuer } from '../core/pki/issue/issuer.js';
import { selfSignedCertificate } from '../core/pki/issue/self-signed.js';
import { forgetKeyObjects } from '../core/pki/x509/keys.js';
import { forgetVerifiedSignatures } from '../core/pki/x509/signature.js';
import { LEAF_TEMPLATE } from './lib/leaf-template.js';
import { cpuBusy, fmt, processCpuMs } from './lib/measure.js';
import { cleanEnv, freePort, get, LOOPBACK, ServerProcess, startKernel, waitUntilAnswering } from './lib/servers.js';

const GOAL = 0.4;
/** ENROLL_FLOOR=0 leaves the floor server out. */
const FLOOR = process.env.ENROLL_FLOOR !== '0';
const CONCURRENCY = 32;
const WARMUP = Number(process.env.ENROLL_WARMUP ?? 300);
const ENROLL_N = Number(process.env.ENROLL_N ?? 1000);
const ENROLL_ROUNDS = Number(process.env.ENROLL_ROUNDS ?? 3);
const ROUNDS = 5;
const ROUND_MS = 700;
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
const TENANT = 'default';
const REQUEST_TIMEOUT_MS = 30_000;
const BOOTSTRAP_TIMEOUT_MS = 30_000;

interface Csr {
  cn: string;
  der: Uint8Array;
  spkiDer: Buffer;
  body: string;
}

/** P-256 CSRs with unique CNs (a random run prefix: engines get fresh databases, but names stay unique anyway). */
function makeCsrs(n: number): Csr[] {
  const run = randomBytes(3).toString('hex');
  return Array.from({ length: n }, (_, i) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cn = `enroll-${run}-${i}.bench.example.com`;
    const der = buildCsr(privateKey, { subject: `CN=${cn}`, sans: [{ sanType: 'DNSNAME', value: cn }] });
    const body = JSON.stringify({
      module: 'webra',
      workflow: 'enroll',
      profile: 'default',
      template: { csr: toPem(der, 'CERTIFICATE REQUEST'), subject: [{ element: 'cn.1', value: cn }], sans: [{ type: 'DNSNAME', value: [cn] }] },
    });
    return { cn, der, spkiDer: publicKey.export({ type: 'spki', format: 'der' }), body };
  });
}

function table(header: string[], rows: string[][]): void {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

/** The toolkit peer: issue/s on one thread, the median of ROUNDS rounds after a warm-up. */
function toolkitRate(csrs: Csr[]): number {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caDer = selfSignedCertificate(ca.privateKey, { subject: 'CN=Bench Enroll Issuing CA,O=Certwright', basicConstraints: { ca: true } });
  const issuer = new CertificateIssuer({ caCertificateDer: caDer, caKey: ca.privateKey });
  const check = new X509Certificate(issuer.issue(csrs[0]!.der, LEAF_TEMPLATE));
  if (!check.subject.includes(csrs[0]!.cn)) throw new Error('toolkit self-check failed');
  const round = (ms: number): number => {
    let n = 0;
    let i = 0;
    const started = performance.now();
    let now = started;
    while (now - started < ms) {
      // Each issuance checks its CSR's signature with a key built from its bytes, as for a CSR never seen, which
      // is what each enrollment is: the rounds cycle over the CSRs, which the toolkit would otherwise remember as
      // verified (core/pki/x509/signature.ts) and whose KeyObjects it would keep (1,024 of them, keys.ts). With
      // fewer CSRs than that, the peer measured twice its rate here when it kept them.
      for (let b = 0; b < 16; b++) {
        forgetVerifiedSignatures();
        forgetKeyObjects();
        issuer.issue(csrs[i++ % csrs.length]!.der, LEAF_TEMPLATE);
      }
      n += 16;
      now = performance.now();
    }
    return (n * 1000) / (now - started);
  };
  round(ROUND_MS / 2);
  return median(Array.from({ length: ROUNDS }, () => round(ROUND_MS)));
}

interface Posted {
  status: number;
  body: string;
  ms: number;
}

function post(agent: Agent, port: number, path: string, body: string): Promise<Posted> {
  return new Promise((resolvePost, reject) => {
    const t0 = performance.now();
    const req = request(
      {
        agent,
        host: LOOPBACK,
        port,
        path,
        method: 'POST',
        timeout: REQUEST_TIMEOUT_MS,
        headers: { host: 'localhost', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolvePost({ status: res.statusCode ?? 0, body: text, ms: performance.now() - t0 }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

interface Enrolled {
  requestId: string;
  certificateId: string;
  certificatePem: string;
}

interface Round {
  rate: number;
  /** The kernel's CPU per enrollment during the round (ms): main thread, all threads; undefined off Linux. */
  cpu?: { main: number; all: number };
  p50: number;
  p99: number;
  enrolled: Enrolled[];
  failures: string[];
}

/** `csrs` enrolled by CONCURRENCY workers over keep-alive sockets; each answer checked. */
async function enrollRound(port: number, csrs: Csr[], kernelPid?: number): Promise<Round> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  const enrolled: Enrolled[] = [];
  const failures: string[] = [];
  let next = 0;
  const cpuBefore = kernelPid === undefined ? undefined : processCpuMs(kernelPid);
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < csrs.length; i = next++) {
      try {
        const res = await post(agent, port, '/api/v1/requests/submit', csrs[i]!.body);
        latencies.push(res.ms);
        const ok = res.status === 200 || res.status === 201;
        const json = ok ? (JSON.parse(res.body) as { _id?: string; status?: string; certificateId?: string; certificate?: { _id?: string; certificate?: string } | null }) : undefined;
        const certificateId = json?.certificateId ?? json?.certificate?._id;
        if (!json || json.status !== 'completed' || !json._id || !certificateId || !json.certificate?.certificate) {
          failures.push(`${res.status} ${res.body.slice(0, 300)}`);
        } else {
          enrolled.push({ requestId: json._id, certificateId, certificatePem: json.certificate.certificate });
        }
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = performance.now() - started;
  const cpuAfter = kernelPid === undefined ? undefined : processCpuMs(kernelPid);
  agent.destroy();
  const cpu = cpuBefore && cpuAfter ? { main: (cpuAfter.main - cpuBefore.main) / csrs.length, all: (cpuAfter.all - cpuBefore.all) / csrs.length } : undefined;
  return { rate: (csrs.length * 1000) / elapsed, ...(cpu ? { cpu } : {}), p50: percentile(latencies, 50), p99: percentile(latencies, 99), enrolled, failures };
}

const chunks = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/** The database agrees with the answers: request rows completed with their certificate, certificate rows, events. */
async function checkStored(knex: Knex, enrolled: Enrolled[]): Promise<string[]> {
  const problems: string[] = [];
  let requests = 0;
  let certificates = 0;
  const withEvents = new Set<string>();
  for (const part of chunks(enrolled, 400)) {
    const rows = (await knex('requests').where({ tenant: TENANT, status: 'completed' }).whereIn('id', part.map((e) => e.requestId)).select('id', 'certificate_id')) as { id: string; certificate_id: string | null }[];
    const byId = new Map(part.map((e) => [e.requestId, e.certificateId]));
    requests += rows.filter((r) => r.certificate_id !== null && byId.get(r.id) === r.certificate_id).length;
    const certs = (await knex('inv_certificates').where({ tenant: TENANT }).whereIn('id', part.map((e) => e.certificateId)).count({ n: '*' })) as { n: number | string }[];
    certificates += Number(certs[0]?.n ?? 0);
    const events = (await knex('events').where({ tenant: TENANT, code: 'REQUEST-COMPLETED' }).whereIn('object_id', part.map((e) => e.requestId)).distinct('object_id')) as { object_id: string }[];
    for (const e of events) withEvents.add(e.object_id);
  }
  if (requests !== enrolled.length) problems.push(`${enrolled.length - requests} request rows not completed with their certificate id`);
  if (certificates !== enrolled.length) problems.push(`${enrolled.length - certificates} certificates missing from the inventory`);
  if (withEvents.size !== enrolled.length) problems.push(`${enrolled.length - withEvents.size} requests without their REQUEST-COMPLETED event`);
  return problems;
}

interface EngineResult {
  engine: string;
  /** The floor server's figures (bench/lib/enroll-floor-server.ts), not the kernel's. */
  floor?: boolean;
  rate: number;
  cpu?: { main: number; all: number };
  p50: number;
  p99: number;
  checked: number;
  problems: string[];
}

/** A server under measurement: the kernel, or the floor (bench/lib/enroll-floor-server.ts). */
interface Started {
  server: ServerProcess;
  port: number;
  dataDir: string;
  /** Waits until the server can enroll (beyond /healthz). */
  ready?: (base: string) => Promise<void>;
}

const auth = { host: 'localhost', 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET };

/** A kernel on `databaseUrl` (null: SQLite in a temp data dir); the first start creates local-ca and profile default. */
async function startKernelOn(databaseUrl: string | null): Promise<Started> {
  let server: ServerProcess;
  let port: number;
  let dataDir: string;
  if (databaseUrl === null) {
    ({ kernel: server, port, dataDir } = await startKernel(ADMIN_SECRET));
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-'));
    port = await freePort();
    server = new ServerProcess('certwright kernel', ['bin/certwright.js', 'serve'], {
      ...cleanEnv(),
      PORT: String(port),
      HOST: LOOPBACK,
      DATABASE_URL: databaseUrl,
      CERTWRIGHT_DATA_DIR: dataDir,
      CERTWRIGHT_ADMIN_SECRET: ADMIN_SECRET,
      LOG_LEVEL: 'warn',
    });
  }
  const ready = async (base: string): Promise<void> => {
    // The first start creates local-ca and the default profile once plugins are started.
    const deadline = Date.now() + BOOTSTRAP_TIMEOUT_MS;
    for (;;) {
      const profile = await get(`${base}/api/v1/certificate/profiles/default`, auth);
      if (profile.status === 200) return;
      if (Date.now() > deadline || !server.running) throw new Error(`profile default not there (GET answered ${profile.status} ${profile.body.slice(0, 200)}):\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { server, port, dataDir, ready };
}

/** The floor server on `databaseUrl` (null: SQLite in a temp data dir). */
async function startFloorOn(databaseUrl: string | null): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-floor-'));
  const port = await freePort();
  const server = new ServerProcess('enroll floor server', ['--import', 'tsx', 'bench/lib/enroll-floor-server.ts'], {
    ...cleanEnv(),
    PORT: String(port),
    FLOOR_API_KEY: ADMIN_SECRET,
    ...(databaseUrl === null ? { FLOOR_DATA_DIR: dataDir } : { FLOOR_DATABASE_URL: databaseUrl }),
  });
  return { server, port, dataDir };
}

/** A started server: warm-up, rounds, checks (answers, certificates for their CSRs' keys, the database). */
async function measureEngine(engine: string, started: Started, csrs: Csr[], knexOf: (dataDir: string) => Knex): Promise<EngineResult> {
  const { server, port, dataDir } = started;
  const knex = knexOf(dataDir);
  try {
    const base = `http://${LOOPBACK}:${port}`;
    await waitUntilAnswering(server, `${base}/healthz`, { host: 'localhost' });
    await started.ready?.(base);
    const warm = await enrollRound(port, csrs.slice(0, WARMUP));
    if (warm.failures.length) throw new Error(`warm-up: ${warm.failures.length} of ${WARMUP} enrollments failed, e.g. ${warm.failures[0]}`);
    const rounds: Round[] = [];
    for (let r = 0; r < ENROLL_ROUNDS; r++) rounds.push(await enrollRound(port, csrs.slice(WARMUP + r * ENROLL_N, WARMUP + (r + 1) * ENROLL_N), server.proc.pid));
    if (!server.running) throw new Error(`the kernel died during the benchmark:\n${server.output()}`);
    const all = rounds.flatMap((r) => r.enrolled);
    const failures = rounds.flatMap((r) => r.failures);
    const problems = failures.length ? [`${failures.length} enrollments not completed, e.g. ${failures[0]}`] : [];
    // The certificates answered are for the CSRs' keys (a sample: parsing is the load generator's cost, not timed).
    const keys = new Map(csrs.map((c) => [c.cn, c.spkiDer]));
    for (const e of all.filter((_, i) => i % 97 === 0)) {
      const cert = new X509Certificate(e.certificatePem);
      const cn = /CN=([^\n,]+)/.exec(cert.subject)?.[1] ?? '';
      const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
      if (!keys.get(cn)?.equals(spki)) problems.push(`certificate ${e.certificateId} (${cn}) is not for its CSR's key`);
    }
    problems.push(...(await checkStored(knex, all)));
    const byRate = [...rounds].sort((a, b) => a.rate - b.rate);
    const mid = byRate[Math.floor(byRate.length / 2)]!;
    return { engine, rate: mid.rate, ...(mid.cpu ? { cpu: mid.cpu } : {}), p50: mid.p50, p99: mid.p99, checked: all.length, problems };
  } finally {
    await knex.destroy();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const sqliteKnex = (dataDir: string): Knex => openDatabase({ url: null, dataDir, pool: { min: 0, max: 1 } }).knex;

/** The kernel on SQLite, then the floor (unless ENROLL_FLOOR=0). */
async function onSqlite(csrs: Csr[]): Promise<EngineResult[]> {
  const out = [{ ...(await measureEngine('SQLite', await startKernelOn(null), csrs, sqliteKnex)), floor: false }];
  if (FLOOR) out.push({ ...(await measureEngine('SQLite', await startFloorOn(null), csrs, sqliteKnex)), floor: true });
  return out;
}

/** The kernel on MariaDB, then the floor (unless ENROLL_FLOOR=0), each on a fresh database dropped at the end. */
async function onMariadb(csrs: Csr[]): Promise<EngineResult[] | string> {
  const admin = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  try {
    try {
      await admin.raw('SELECT 1');
    } catch (err) {
      return `MariaDB unreachable at ${MARIADB.host}:${MARIADB.port} (${(err as Error).message}): skipped`;
    }
    const out: EngineResult[] = [];
    for (const floor of FLOOR ? [false, true] : [false]) {
      const name = `certwright_bench_enroll_${randomBytes(4).toString('hex')}`;
      await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
      const url = `mysql://${MARIADB.user}@${MARIADB.host}:${MARIADB.port}/${name}`;
      try {
        const started = floor ? await startFloorOn(url) : await startKernelOn(url);
        out.push({ ...(await measureEngine('MariaDB', started, csrs, () => openDatabase({ url, dataDir: tmpdir(), pool: { min: 0, max: 2 } }).knex)), floor });
      } finally {
        await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
      }
    }
    return out;
  } finally {
    await admin.destroy();
  }
}

export async function run(): Promise<void> {
  const only = process.env.ENROLL_DB;
  if (only && only !== 'sqlite' && only !== 'mariadb') throw new Error('ENROLL_DB is sqlite or mariadb');
  const cpu = cpus()[0];
  const total = WARMUP + ENROLL_ROUNDS * ENROLL_N;
  process.stdout.write(
    [
      'Certwright enrollment benchmark',
      `node ${process.version}, ${availableParallelism()} CPU(s)${cpu ? ` (${cpu.model.trim()})` : ''}`,
      `enroll: POST /api/v1/requests/submit (WebRA decentralized, P-256 CSR, API key) over HTTP to a kernel child process, ${CONCURRENCY} concurrent keep-alive connections; ` +
        `${WARMUP} warm-up requests, then ${ENROLL_ROUNDS} rounds of ${ENROLL_N}, the median round`,
      `toolkit: CertificateIssuer.issue in this process, one thread, P-256 CA, the same CSRs; ${ROUNDS} rounds of ${ROUND_MS} ms, the median; before and after the engines, the higher`,
      '',
    ].join('\n'),
  );
  const busy = await cpuBusy(1_000);
  process.stdout.write(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle, figures will be noisy' : ''}\n`);
  const t0 = performance.now();
  const csrs = makeCsrs(total);
  process.stdout.write(`fixtures: ${fmt(total)} P-256 CSRs with unique CNs in ${fmt((performance.now() - t0) / 1000, 1)} s\n`);
  const toolkitBefore = toolkitRate(csrs);
  process.stdout.write(`toolkit (before the engines): ${fmt(toolkitBefore)} certificates/s\n`);

  const results: EngineResult[] = [];
  const notes: string[] = [];
  let failed = false;
  for (const [key, label, part] of [
    ['sqlite', 'SQLite', () => onSqlite(csrs)],
    ['mariadb', 'MariaDB', () => onMariadb(csrs)],
  ] as const) {
    if (only && only !== key) continue;
    try {
      const r = await part();
      if (typeof r === 'string') notes.push(`${label}: ${r}`);
      else results.push(...r);
    } catch (err) {
      failed = true;
      notes.push(`${label}: could not run: ${(err as Error).message}`);
    }
  }

  // Again once the kernels are gone: the peer is the higher of the two (a machine busier at one moment does not
  // make the goal easier).
  const toolkitAfter = toolkitRate(csrs);
  process.stdout.write(`toolkit (after the engines): ${fmt(toolkitAfter)} certificates/s\n`);
  const toolkit = Math.max(toolkitBefore, toolkitAfter);
  const verdict = (r: EngineResult): string => (r.problems.length ? 'INVALID' : r.floor ? 'floor' : r.rate / toolkit >= GOAL ? 'PASS' : 'FAIL');
  const name = (r: EngineResult): string => (r.floor ? `floor: minimal server, ${r.engine}` : r.engine);
  table(
    ['', 'per second', 'p50 ms', 'p99 ms', 'CPU ms (main/all)', 'of toolkit', 'goal', 'result'],
    [
      ...results.map((r) => [
        `${r.floor ? 'floor (minimal server)' : 'enroll'}, ${r.engine} (${fmt(r.checked)} checked)`,
        fmt(r.rate, 1),
        fmt(r.p50, 1),
        fmt(r.p99, 1),
        r.cpu ? `${fmt(r.cpu.main, 2)} / ${fmt(r.cpu.all, 2)}` : 'n/a',
        `${fmt((r.rate / toolkit) * 100, 1)}%`,
        r.floor ? '' : `≥${fmt(GOAL * 100)}%`,
        verdict(r),
      ]),
      ['toolkit CertificateIssuer.issue, 1 thread (peer)', fmt(toolkit, 1), '', '', fmt(1000 / toolkit, 2), '100%', '', 'peer'],
    ],
  );
  for (const r of results) for (const p of r.problems) process.stdout.write(`  ${name(r)}: ${p}\n`);
  for (const n of notes) process.stdout.write(`\n${n}\n`);
  process.stdout.write('\n');
  for (const r of results) {
    const share = `${fmt(r.rate, 1)} enrollments/s = ${fmt((r.rate / toolkit) * 100, 1)}% of the toolkit's ${fmt(toolkit)} issuances/s`;
    if (r.floor) process.stdout.write(`floor  ${r.engine}: the minimal server (bench/lib/enroll-floor-server.ts) reached ${share}\n`);
    else process.stdout.write(`${verdict(r)}  ${r.engine}: ${share} (goal ≥${fmt(GOAL * 100)}%)\n`);
  }
  if (failed) process.exitCode = 1;
}
