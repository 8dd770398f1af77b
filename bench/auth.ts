// `npm run bench -- auth`: what authentication costs per request, and what one argon2id verification costs.
//
// Starts the kernel (`node bin/certwright.js serve`, SQLite in a fresh temp data dir, the production argon2id
// parameters of config/default.yaml) and drives, with autocannon under identical settings and in interleaved
// rounds: GET /healthz (no authentication: the peer), GET /api/v1/security/principals/self with an API key
// (X-API-ID / X-API-KEY: served by the verified-key cache after the first call) and the same with the
// PLAY_SESSION cookie of a login. Goal: the API-key rate ≥ 50% of the /healthz rate, while one argon2id
// verification (measured in this process with the same parameters) costs ≥ 20 ms — the cache, not cheap
// hashing, is what keeps API-key calls fast. Exit code 0 even when a goal FAILs (1 only when it cannot run).
import autocannon from 'autocannon';
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { loadConfig } from '../core/config/index.js';
import { PasswordHasher } from '../core/security/passwords/hasher.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { get, LOOPBACK, medianRound, waitUntilAnswering, startKernel } from './lib/servers.js';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const ROUNDS = 3;
const DURATION_SECONDS = 4;
const KEY_GOAL = 0.5;
const ARGON2_MIN_MS = 20;
const ARGON2_SAMPLES = 10;
const ADMIN_SECRET = 'Bench-Admin-Secret-1!';

interface Target {
  label: string;
  path: string;
  headers: Record<string, string>;
}

/** Mean time of one verification with the production parameters, measured here (one at a time). */
async function argon2Cost(): Promise<{ ms: number; params: string }> {
  const { argon2 } = loadConfig({ env: {} }).security;
  const hasher = new PasswordHasher(argon2);
  const hash = await hasher.hash(ADMIN_SECRET);
  await hasher.verify(hash, ADMIN_SECRET);
  const started = performance.now();
  for (let i = 0; i < ARGON2_SAMPLES; i++) await hasher.verify(hash, ADMIN_SECRET);
  return {
    ms: (performance.now() - started) / ARGON2_SAMPLES,
    params: `argon2id m=${argon2.memoryKiB} KiB, t=${argon2.iterations}, p=${argon2.parallelism}`,
  };
}

async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/security/principals/authenticate`, {
    headers: { host: 'localhost', 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET },
  });
  if (res.status !== 200) throw new Error(`login answered ${res.status}: ${await res.text()}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

export async function run(): Promise<void> {
  // Sampled before the server starts: its own boot must not count as other work.
  const busy = await cpuBusy(1_000);
  const { kernel, port, dataDir } = await startKernel(ADMIN_SECRET);
  try {
    process.stdout.write(
      [
        'Certwright authentication benchmark',
        `node ${process.version}, ${availableParallelism()} CPU(s); autocannon ${CONNECTIONS} connections, a ${WARMUP_SECONDS} s warm-up per target, ` +
          `then ${ROUNDS} interleaved rounds of ${DURATION_SECONDS} s (each row is the median round)`,
        'NOTE: autocannon runs on the same CPUs as the server: compare the ratios, not the absolute rates.',
        '',
      ].join('\n'),
    );
    process.stdout.write(`CPU busy before the run (1 s sample): ${fmt(busy * 100)}%${busy > 0.25 ? ' — WARNING: the machine is not idle' : ''}\n`);

    const base = `http://${LOOPBACK}:${port}`;
    await waitUntilAnswering(kernel, `${base}/healthz`, { host: 'localhost' });
    const cookie = await login(base);
    const targets: Target[] = [
      { label: 'GET /healthz (no auth, peer)', path: '/healthz', headers: {} },
      { label: 'GET …/principals/self, API key', path: '/api/v1/security/principals/self', headers: { 'x-api-id': 'administrator', 'x-api-key': ADMIN_SECRET } },
      { label: 'GET …/principals/self, session cookie', path: '/api/v1/security/principals/self', headers: { cookie } },
    ];
    for (const t of targets) {
      const { status, body } = await get(`${base}${t.path}`, { host: 'localhost', ...t.headers });
      if (status !== 200) throw new Error(`${t.label} answered ${status}: ${body.slice(0, 300)}`);
    }
    const load = (t: Target, duration: number) =>
      autocannon({ url: `${base}${t.path}`, headers: { host: 'localhost', ...t.headers }, connections: CONNECTIONS, duration });
    for (const t of targets) await load(t, WARMUP_SECONDS);
    const rounds: autocannon.Result[][] = targets.map(() => []);
    for (let round = 1; round <= ROUNDS; round++) {
      process.stdout.write(`round ${round}/${ROUNDS} …\n`);
      for (const [i, t] of targets.entries()) rounds[i]!.push(await load(t, DURATION_SECONDS));
    }
    if (!kernel.running) throw new Error(`the kernel died during the benchmark:\n${kernel.output()}`);
    const results = rounds.map(medianRound);
    const peer = results[0]!.requests.average;

    const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'vs /healthz', 'goal', 'result'];
    const rows = targets.map((t, i) => {
      const r = results[i]!;
      const ratio = peer > 0 ? r.requests.average / peer : 0;
      const goal = i === 1 ? KEY_GOAL : null;
      const clean = r.non2xx === 0 && r.errors === 0;
      const verdict = i === 0 ? 'peer' : goal === null ? (clean ? 'info' : 'ERRORS') : clean && ratio >= goal ? 'PASS' : 'FAIL';
      return [t.label, fmt(r.requests.average, 1), fmt(r.latency.p50), fmt(r.latency.p99), fmt(r.non2xx), `${fmt(ratio * 100, 1)}%`, goal === null ? '' : `≥${fmt(goal * 100)}%`, verdict];
    });
    const cost = await argon2Cost();
    const costRow = [`one argon2id verification (${cost.params})`, '', '', '', '', `${fmt(cost.ms, 1)} ms`, `≥${ARGON2_MIN_MS} ms`, cost.ms >= ARGON2_MIN_MS ? 'PASS' : 'FAIL'];
    const table = [header, ...rows, costRow];
    const widths = header.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
    process.stdout.write(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
    for (const r of table.slice(1)) process.stdout.write(`${line(r)}\n`);
    process.stdout.write(
      `\nAPI-key calls cost one argon2id verification (${fmt(cost.ms, 1)} ms) only on a cache miss; ` +
        `uncached they would be bounded near ${fmt((1000 / cost.ms) * availableParallelism(), 0)} req/s on this machine.\n`,
    );
  } finally {
    await kernel.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
