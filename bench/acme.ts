// `npm run bench -- acme`: complete ACME issuances per second — account reused; new-order → authorization →
// challenge → finalize → certificate download — driven by one in-process client (bench/lib/acme-load.ts) at
// concurrency CONCURRENCY over keep-alive HTTPS, against:
//   certwright  a kernel child process (`node bin/certwright.js serve`, HTTPS listener on a free port, profile
//               `default` with ACME on) with NODE_ENV=benchmark and CERTWRIGHT_ACME_SKIP_VALIDATION=1 (the switch that
//               exists only for tests and benchmarks: challenges validate at once), on SQLite (a temp data dir) and on
//               MariaDB (127.0.0.1:3306, a fresh database dropped at the end; skipped with a note when unreachable).
//               Every step is persisted: nonces, account, order, authorization, the request workflow's request,
//               certificate and events.
//   pebble      Debian's pebble (the peer; PEBBLE_VA_NOSLEEP=1, PEBBLE_VA_ALWAYS_VALID=1, PEBBLE_WFE_NONCEREJECT=0, a
//               TLS certificate made for it), started by the benchmark and measured in the same run. It keeps
//               everything in memory.
// Each: ACME_WARMUP issuances, then ACME_N, the rate of the measured part. Goal: certwright ≥ pebble on each engine.
// ACME_DB=sqlite|mariadb runs one engine. Exit code 0 even when the goal is missed.
import knexFactory from 'knex';
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCsr } from '../core/pki/csr/build.js';
import { tlsFixture } from '../test/connectors/acme-upstream/pebble.js';
import { AcmeLoad, issuanceRate } from './lib/acme-load.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { LOOPBACK, freePort, startKernel, waitUntilAnswering } from './lib/servers.js';

const CONCURRENCY = 32;
const WARMUP = Number(process.env.ACME_WARMUP ?? 64);
const N = Number(process.env.ACME_N ?? 400);
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

interface Job {
  name: string;
  csr: string;
}

function makeJobs(n: number): Job[] {
  const run = randomBytes(3).toString('hex');
  return Array.from({ length: n }, (_, i) => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const name = `acme-${run}-${i}.bench.example.com`;
    return { name, csr: Buffer.from(buildCsr(privateKey, { subject: `CN=${name}`, sans: [{ sanType: 'DNSNAME', value: name }] })).toString('base64url') };
  });
}

async function measure(directoryUrl: string, jobs: Job[]): Promise<number> {
  const load = new AcmeLoad(directoryUrl, CONCURRENCY);
  try {
    await load.setUp();
    await issuanceRate(load, jobs.slice(0, WARMUP), CONCURRENCY);
    return await issuanceRate(load, jobs.slice(WARMUP), CONCURRENCY);
  } finally {
    load.close();
  }
}

async function onCertwright(jobs: Job[], databaseUrl: string | null): Promise<number> {
  const { kernel, port, tlsPort, dataDir } = await startKernel(null, {
    NODE_ENV: 'benchmark',
    CERTWRIGHT_ACME_SKIP_VALIDATION: '1',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  try {
    await waitUntilAnswering(kernel, `http://${LOOPBACK}:${port}/acme/default/directory`, { host: 'localhost' });
    // HTTPS opens after HTTP (its certificate is issued first): wait for it too.
    const directoryUrl = `https://localhost:${tlsPort}/acme/default/directory`;
    await waitFor(directoryUrl, () => kernel.running);
    return await measure(directoryUrl, jobs);
  } finally {
    await kernel.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function onPebble(jobs: Job[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'certwright-bench-pebble-'));
  const tls = tlsFixture(dir);
  const [acmePort, mgmtPort] = [await freePort(), await freePort()];
  const config = join(dir, 'pebble.json');
  writeFileSync(config, JSON.stringify({ pebble: { listenAddress: `${LOOPBACK}:${acmePort}`, managementListenAddress: `${LOOPBACK}:${mgmtPort}`, certificate: tls.certFile, privateKey: tls.keyFile, httpPort: 5002, tlsPort: 5001, ocspResponderURL: '', externalAccountBindingRequired: false } }));
  const proc = spawn('/usr/bin/pebble', ['-config', config, '-strict=false'], { cwd: dir, env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_VA_ALWAYS_VALID: '1', PEBBLE_WFE_NONCEREJECT: '0' }, stdio: 'ignore' });
  try {
    const directoryUrl = `https://${LOOPBACK}:${acmePort}/dir`;
    await waitFor(directoryUrl, () => proc.exitCode === null);
    return await measure(directoryUrl, jobs);
  } finally {
    proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Until an ACME account can be made at `url` (15 s at most, while `alive`). */
async function waitFor(url: string, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await fetchable(url))) {
    if (Date.now() > deadline || !alive()) throw new Error(`no ACME directory at ${url}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function fetchable(url: string): Promise<boolean> {
  const load = new AcmeLoad(url, 1);
  try {
    await load.setUp();
    return true;
  } catch {
    return false;
  } finally {
    load.close();
  }
}

async function onMariadb(jobs: Job[]): Promise<number | string> {
  const admin = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  try {
    try {
      await admin.raw('SELECT 1');
    } catch (err) {
      return `MariaDB unreachable (${(err as Error).message}): skipped`;
    }
    const name = `certwright_bench_acme_${randomBytes(4).toString('hex')}`;
    await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
    try {
      return await onCertwright(jobs, `mysql://${MARIADB.user}@${MARIADB.host}:${MARIADB.port}/${name}`);
    } finally {
      await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
    }
  } finally {
    await admin.destroy();
  }
}

export async function run(): Promise<void> {
  const only = process.env.ACME_DB;
  const cpu = cpus()[0];
  process.stdout.write(
    [
      'Certwright ACME benchmark',
      `node ${process.version}, ${availableParallelism()} CPU(s)${cpu ? ` (${cpu.model.trim()})` : ''}`,
      `complete issuances (new-order → authorization → challenge → finalize → download), one account, ${CONCURRENCY} concurrent over HTTPS; ${WARMUP} warm-up, then ${N} measured`,
      '',
    ].join('\n'),
  );
  const busy = await cpuBusy(1_000);
  process.stdout.write(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle, figures will be noisy' : ''}\n`);
  const jobs = () => makeJobs(WARMUP + N);
  const pebble = await onPebble(jobs());
  process.stdout.write(`pebble (in memory):              ${fmt(pebble, 1)} issuances/s\n`);
  const rows: [string, number | string][] = [];
  if (!only || only === 'sqlite') rows.push(['SQLite', await onCertwright(jobs(), null)]);
  if (!only || only === 'mariadb') rows.push(['MariaDB', await onMariadb(jobs())]);
  for (const [label, rate] of rows) {
    if (typeof rate === 'string') {
      process.stdout.write(`certwright on ${label}: ${rate}\n`);
      continue;
    }
    const ratio = rate / pebble;
    process.stdout.write(`certwright on ${label.padEnd(8)}          ${fmt(rate, 1)} issuances/s — ${fmt(ratio * 100)}% of pebble, goal ≥ 100%: ${ratio >= 1 ? 'MET' : 'MISSED'}\n`);
  }
}
