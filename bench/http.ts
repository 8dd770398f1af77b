// `npm run bench -- http`: HTTP throughput of the Certwright kernel relative to a bare fastify server.
//
// Starts two child processes on free loopback ports — the kernel (`node bin/certwright.js serve`, SQLite in a
// fresh temp data dir, LOG_LEVEL=warn) and bench/fixtures/bare-fastify.ts — then drives each target with
// autocannon under identical settings: a warm-up run per target that is discarded, then interleaved measured rounds
// (each row is the median round). Kernel rows are compared with the bare rate against LIMIT. It is a measurement: the exit code is 0 even
// when a ratio FAILs (1 only when the benchmark itself could not run).
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBusy, fmt } from './lib/measure.js';
import { cleanEnv, freePort, get, LOOPBACK, medianRound, ServerProcess, waitUntilAnswering } from './lib/servers.js';

const CONNECTIONS = 50;
const PIPELINING = 1;
const WARMUP_SECONDS = 2;
/** Targets are measured in interleaved rounds (bare, kernel, kernel, bare, …) so drift on a shared
 * 2-core machine hits every target alike; each figure is the median over the rounds. */
const ROUNDS = 3;
const DURATION_SECONDS = 4;
/** The administrator's secret in the benchmarked kernel (an authenticated route is measured too). */
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';
/** A kernel route must reach this share of the bare fastify rate. */
const LIMIT = 0.7;
/** Hard cap on the whole run (3 targets × (2 s + 3 × 4 s) of load + start-up is about 45 s). */
const WATCHDOG_MS = 85_000;

interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** Compared with the bare rate? */
  kernel: boolean;
}

interface Measurement {
  target: Target;
  result: autocannon.Result;
}

function load(target: Target, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    headers: target.headers,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration,
  });
}

/** autocannon records latency in whole milliseconds: 0 means under 1 ms. */
const ms = (n: number): string => (n < 1 ? '<1' : fmt(n));

function printReport(measurements: Measurement[]): void {
  const bare = measurements.find((m) => !m.target.kernel);
  const bareRate = bare?.result.requests.average ?? 0;
  const header = ['target', 'req/s (mean)', '± stddev', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'vs bare', `limit`, 'result'];
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const { target, result } of measurements) {
    const rate = result.requests.average;
    const row = [
      target.label,
      fmt(rate, 1),
      fmt(result.requests.stddev),
      ms(result.latency.p50),
      ms(result.latency.p99),
      fmt(result.non2xx),
      fmt(result.errors),
    ];
    if (!target.kernel) {
      row.push('100.0%', '', result.non2xx || result.errors || !rate ? 'BASE?' : 'base');
    } else {
      const ratio = bareRate > 0 ? rate / bareRate : 0;
      // A route answering with errors is fast for the wrong reason: it cannot pass.
      const clean = result.non2xx === 0 && result.errors === 0 && bareRate > 0;
      const pass = clean && ratio >= LIMIT;
      row.push(`${fmt(ratio * 100, 1)}%`, `≥${fmt(LIMIT * 100)}%`, pass ? 'PASS' : 'FAIL');
      if (!pass) {
        const why = !clean
          ? `${fmt(result.non2xx)} non-2xx responses, ${fmt(result.errors)} errors`
          : `${fmt(ratio * 100, 1)}% of the bare fastify rate, limit ${fmt(LIMIT * 100)}%`;
        verdicts.push(`FAIL  ${target.label}: ${why}`);
      }
    }
    rows.push(row);
  }
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  process.stdout.write('\n');
  if (bare && (bare.result.non2xx || bare.result.errors)) {
    process.stdout.write('WARNING: the bare fastify baseline itself had non-2xx responses or errors; ratios are unreliable\n');
  }
  if (verdicts.length) for (const v of verdicts) process.stdout.write(`${v}\n`);
  else process.stdout.write(`PASS  every kernel route reaches ≥${fmt(LIMIT * 100)}% of the bare fastify rate\n`);
}

export async function run(): Promise<void> {
  const servers: ServerProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-'));
  let cleaned = false;
  const cleanup = async (): Promise<void> => {
    if (cleaned) return;
    cleaned = true;
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Last resorts: a signal, the watchdog, or an exit without cleanup must not leave servers behind.
  const killNow = (): void => {
    for (const s of servers) if (s.running) s.proc.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`\n${signal}: stopping the servers\n`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', killNow);
  const watchdog = setTimeout(() => {
    process.stderr.write(`\nbench http: still running after ${WATCHDOG_MS / 1000} s, giving up\n`);
    killNow();
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();

  try {
    const [barePort, kernelPort] = [await freePort(), await freePort()];
    // The kernel reads its configuration from the environment: drop anything that would point it elsewhere.
    const baseEnv = cleanEnv();
    const cpuList = cpus();
    process.stdout.write(
      [
        'Certwright HTTP benchmark',
        `node ${process.version} on ${process.platform}/${process.arch}, ${availableParallelism()} CPU(s)` +
          (cpuList[0] ? ` (${cpuList.length} × ${cpuList[0].model.trim()})` : ''),
        `autocannon: ${CONNECTIONS} connections, pipelining ${PIPELINING}, per target a ${WARMUP_SECONDS} s warm-up ` +
          `(discarded), then ${ROUNDS} interleaved rounds of ${DURATION_SECONDS} s; each row is the median round`,
        'latency percentiles have autocannon\'s 1 ms resolution ("<1" = under a millisecond)',
        `NOTE: the load generator (autocannon, in this process) runs on the same ${availableParallelism()} CPU(s) as ` +
          'the server under test, so absolute rates are understated; compare the ratios.',
        '',
      ].join('\n'),
    );

    const busy = await cpuBusy(1_000);
    process.stdout.write(`CPU busy before the run (1 s sample, all cores): ${fmt(busy * 100)}%\n`);
    if (busy > 0.25) {
      process.stdout.write(
        'WARNING: the machine is not idle: other work competes for the CPUs, so rates and ratios will be noisy\n',
      );
    }
    const bare = new ServerProcess('bare fastify', ['--import', 'tsx', 'bench/fixtures/bare-fastify.ts'], {
      ...baseEnv,
      PORT: String(barePort),
      HOST: LOOPBACK,
    });
    servers.push(bare);
    const kernel = new ServerProcess('certwright kernel', ['bin/certwright.js', 'serve'], {
      ...baseEnv,
      PORT: String(kernelPort),
      HOST: LOOPBACK,
      CERTWRIGHT_DATA_DIR: dataDir,
      CERTWRIGHT_ADMIN_SECRET: ADMIN_SECRET,
      LOG_LEVEL: 'warn',
    });
    servers.push(kernel);

    const kernelHeaders = { host: 'localhost' };
    const targets: Target[] = [
      { label: 'bare fastify GET /', url: `http://${LOOPBACK}:${barePort}/`, headers: {}, kernel: false },
      { label: 'kernel GET /healthz', url: `http://${LOOPBACK}:${kernelPort}/healthz`, headers: kernelHeaders, kernel: true },
      {
        label: 'kernel GET /api/v1/endpoints/ (API key)',
        url: `http://${LOOPBACK}:${kernelPort}/api/v1/endpoints/`,
        headers: { ...kernelHeaders, 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET },
        kernel: true,
      },
    ];

    const started = Date.now();
    await Promise.all([
      waitUntilAnswering(bare, targets[0]!.url, {}),
      waitUntilAnswering(kernel, targets[1]!.url, kernelHeaders),
    ]);
    process.stdout.write(`servers up in ${((Date.now() - started) / 1000).toFixed(1)} s (bare :${barePort}, kernel :${kernelPort})\n`);

    // Each target must answer 200 before it is measured, otherwise the rate would be that of an error page.
    for (const t of targets) {
      const { status, body } = await get(t.url, t.headers);
      if (status !== 200) throw new Error(`${t.label} answered ${status}: ${body.slice(0, 300)}`);
    }

    for (const target of targets) await load(target, WARMUP_SECONDS);
    const rounds: autocannon.Result[][] = targets.map(() => []);
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`round ${round}/${ROUNDS} …\n`);
      for (const [i, target] of targets.entries()) rounds[i]!.push(await load(target, DURATION_SECONDS));
    }
    const measurements: Measurement[] = targets.map((target, i) => ({ target, result: medianRound(rounds[i]!) }));
    for (const s of servers) {
      if (!s.running) throw new Error(`${s.name} died during the benchmark:\n${s.output()}`);
    }
    printReport(measurements);
  } finally {
    clearTimeout(watchdog);
    await cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('exit', killNow);
  }
}
