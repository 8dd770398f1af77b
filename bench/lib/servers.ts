// Child server processes and request helpers shared by the HTTP-level benchmarks (http, auth).
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LOOPBACK = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The environment of a benchmarked kernel: nothing inherited that would point it elsewhere. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'TEST_DATABASE_URL', 'CERTWRIGHT_CONFIG', 'ALLOWED_HOSTS', 'CERTWRIGHT_MASTER_KEY', 'CERTWRIGHT_ADMIN_SECRET']) delete env[k];
  return env;
}

/** A server child process, with the tail of its output kept for error messages. */
export class ServerProcess {
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
  private readonly tail: string[] = [];

  constructor(
    readonly name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ) {
    // BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") goes to the server's node: profiling a kernel under load.
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    this.proc = spawn(process.execPath, [...nodeArgs, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      this.tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (this.tail.length > 40) this.tail.splice(0, this.tail.length - 40);
    };
    this.proc.stdout?.on('data', keep);
    this.proc.stderr?.on('data', keep);
    this.exited = new Promise((resolveExit) => this.proc.once('exit', () => resolveExit()));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  output(): string {
    return this.tail.length ? this.tail.map((l) => `    | ${l}`).join('\n') : '    | (no output)';
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.proc.kill('SIGTERM');
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_TIMEOUT_MS).unref());
    if ((await Promise.race([this.exited.then(() => 'exited' as const), timer])) === 'timeout' && this.running) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => (port ? resolvePort(port) : reject(new Error('no free port'))));
    });
  });
}


/** One GET; resolves with status and body (rejects on connection errors). */
export function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request(url, { headers, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

export async function waitUntilAnswering(server: ServerProcess, url: string, headers: Record<string, string>): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (!server.running) throw new Error(`${server.name} exited before answering ${url}:\n${server.output()}`);
    try {
      const { status } = await get(url, headers);
      if (status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${server.name} did not answer 200 on ${url} within ${START_TIMEOUT_MS / 1000} s:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The round with the median request rate, whole (its latencies and error counts come with it). */
export function medianRound(results: autocannon.Result[]): autocannon.Result {
  const sorted = [...results].sort((a, b) => a.requests.average - b.requests.average);
  return sorted[Math.floor(sorted.length / 2)]!;
}


/**
 * A kernel on free loopback ports (HTTP and HTTPS), SQLite in a fresh temp data dir unless `env` names a
 * database, the given administrator secret (null: the kernel generates one), and any further environment.
 */
export async function startKernel(
  adminSecret: string | null,
  env: NodeJS.ProcessEnv = {},
): Promise<{ kernel: ServerProcess; port: number; tlsPort: number; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'certwright-bench-'));
  const [port, tlsPort] = [await freePort(), await freePort()];
  const kernel = new ServerProcess('certwright kernel', ['bin/certwright.js', 'serve'], {
    ...cleanEnv(),
    PORT: String(port),
    TLS_PORT: String(tlsPort),
    HOST: LOOPBACK,
    CERTWRIGHT_DATA_DIR: dataDir,
    ...(adminSecret === null ? {} : { CERTWRIGHT_ADMIN_SECRET: adminSecret }),
    LOG_LEVEL: 'warn',
    ...env,
  });
  return { kernel, port, tlsPort, dataDir };
}
