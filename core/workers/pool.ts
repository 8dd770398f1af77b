/**
 * CPU-heavy decodes on a bounded pool of worker threads (piscina), so that no request stalls the others:
 * opening one PKCS#12 file may take up to ~1.3 s of key derivation (the WorkBudget's cap), which on the
 * event loop held every other request for as long (4 hostile 3 KB files made /healthz take 2.7 s).
 *
 * Admission happens here, before the pool: a principal may have `perPrincipal` decodes in flight (running
 * or waiting), more answer 429 SRV-004; at most `size` run and `queue` wait across everyone, more answer
 * 503 SRV-003. Both carry Retry-After, estimated from the recent decode times. A decode that is admitted
 * always runs: each is bounded by the decoders' own budgets, so the queue drains in bounded time.
 *
 * Threads start on first use (a kernel that never opens a PKCS#12 file starts none; a kernel that opens
 * its port keeps one ready, see warm()) and exit after `idleTimeoutMs` without work. They run at `nice`
 * below the event loop. stop() terminates them; the kernel calls it after the HTTP server closed.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { ProblemError, type ErrorCode } from '../errors/index.js';
import { decodeNow, isHeavy, precheck, type DecodeTask, type TaskOutcome } from './decode-tasks.js';

export interface WorkerLimits {
  /** Threads; null: one per core less the event loop's, at least one. */
  size: number | null;
  /** Decodes one principal may have running or waiting at once. */
  perPrincipal: number;
  /** Decodes that may wait for a thread, all principals together. */
  queue: number;
  /** A thread idle this long exits (a later decode starts one again). */
  idleTimeoutMs: number;
  /**
   * Added to the threads' nice value (Linux: per thread, through piscina's @napi-rs/nice; ignored where it
   * is not available): where a decode and the event loop want the same core, the event loop gets it.
   */
  nice: number;
}

export const threadsFor = (limits: WorkerLimits): number => limits.size ?? Math.max(1, availableParallelism() - 1);

/** What /api/v1/rfc5280/… answers with: a view object for the response schema, or JSON already serialized. */
export type DecodeAnswer = { value: unknown } | { json: Buffer };

/** Figures of the pool, for tests and the benchmark. */
export interface PoolStats {
  threads: number;
  running: number;
  waiting: number;
  principals: number;
}

const WORKER_FILE = new URL('./worker.mjs', import.meta.url);

/** A first guess of a heavy decode's time (ms) before any was measured: a PKCS#12 file near the caps. */
const FIRST_GUESS_MS = 1000;

/** The task with its bytes in a buffer of their own: a view into a larger one (a pooled Buffer) would be cloned whole. */
function ownBytes(task: DecodeTask): DecodeTask {
  const input = task.input;
  if (!(input instanceof Uint8Array) || input.byteLength === input.buffer.byteLength) return task;
  return { ...task, input: new Uint8Array(input) } as DecodeTask;
}

export class DecodeWorkers {
  readonly threads: number;
  private pool: Piscina<DecodeTask, TaskOutcome> | undefined;
  private inFlight = 0;
  private readonly byPrincipal = new Map<string, number>();
  /** Moving average of the time a pooled decode takes, queueing included (ms). */
  private averageMs = FIRST_GUESS_MS;
  private stopped = false;

  constructor(
    readonly limits: WorkerLimits,
    private readonly logger?: Logger,
  ) {
    this.threads = threadsFor(limits);
  }

  /**
   * The answer of `task` for `principal` (any stable key of the caller): decoded right here when it is
   * cheap, else on a pool thread once admitted. Bad input throws its PKI problem as an inline decode does;
   * a full pool throws SRV-004 (429, this principal's limit) or SRV-003 (503, everyone's).
   */
  async decode(task: DecodeTask, principal: string): Promise<DecodeAnswer> {
    if (!isHeavy(task)) return { value: decodeNow(task) };
    return this.run(precheck(task), principal);
  }

  /** `task` on a pool thread, whatever its size (tests compare it with decodeNow). */
  async run(task: DecodeTask, principal: string): Promise<DecodeAnswer> {
    if (this.stopped) throw new ProblemError('HTTP-007');
    const own = this.byPrincipal.get(principal) ?? 0;
    if (own >= this.limits.perPrincipal) throw this.busy('SRV-004', `at most ${this.limits.perPrincipal} decodes in flight per principal`);
    if (this.inFlight >= this.threads + this.limits.queue) throw this.busy('SRV-003', `${this.threads} decodes running and ${this.limits.queue} waiting`);
    this.inFlight++;
    this.byPrincipal.set(principal, own + 1);
    const started = performance.now();
    let outcome: TaskOutcome;
    try {
      outcome = await this.started().run(ownBytes(task));
    } catch (err) {
      // The thread died or could not start (not the input: decoders answer problems, never throw out).
      if (this.stopped) throw new ProblemError('HTTP-007');
      this.logger?.error({ err }, 'decode worker failed');
      throw new ProblemError('SRV-001');
    } finally {
      this.inFlight--;
      const left = (this.byPrincipal.get(principal) ?? 1) - 1;
      if (left > 0) this.byPrincipal.set(principal, left);
      else this.byPrincipal.delete(principal);
    }
    this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - started);
    if (outcome instanceof Uint8Array) return { json: Buffer.from(outcome.buffer, outcome.byteOffset, outcome.byteLength) };
    if ('value' in outcome) return { value: outcome.value };
    if ('problem' in outcome) {
      const { code, message, detail } = outcome.problem;
      throw new ProblemError(code as ErrorCode, { message, ...(detail !== undefined ? { detail } : {}) });
    }
    // What an inline decoder's unexpected exception was: logged (without the input), answered PKI-001.
    this.logger?.warn({ failure: outcome.failure, kind: task.kind }, 'decoder failed on its input');
    throw new ProblemError('PKI-001');
  }

  stats(): PoolStats {
    const threads = this.pool?.threads.length ?? 0;
    const running = Math.min(this.inFlight, this.threads);
    return { threads, running, waiting: this.inFlight - running, principals: this.byPrincipal.size };
  }

  /** The pool's live threads (tests watch them exit). */
  workerThreads(): readonly Worker[] {
    return this.pool?.threads ?? [];
  }

  /** Terminates the threads; decodes still in flight answer HTTP-007. Later decodes are refused. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await pool.destroy();
  }

  /**
   * Starts one thread now and keeps it (the others start on demand and exit when idle): the first
   * PKCS#12 file then does not wait for a thread to load its TypeScript (~0.3–0.7 s). The kernel calls
   * it when it opens its port, before any decode (once threads were started on demand, it does nothing);
   * kernels that only answer injected requests (tests) start threads on use.
   */
  warm(): void {
    if (!this.stopped) this.started(1);
  }

  private started(minThreads = 0): Piscina<DecodeTask, TaskOutcome> {
    this.pool ??= new Piscina<DecodeTask, TaskOutcome>({
      filename: WORKER_FILE.href,
      name: 'default',
      minThreads: Math.min(minThreads, this.threads),
      maxThreads: this.threads,
      // Admission above keeps the queue within this; piscina's own bound is the safety net.
      maxQueue: this.limits.queue + this.threads,
      idleTimeout: this.limits.idleTimeoutMs,
      concurrentTasksPerWorker: 1,
      niceIncrement: this.limits.nice,
    });
    return this.pool;
  }

  /** Retry-After: how long a pooled decode took lately (queueing included), at least a second. */
  private busy(code: 'SRV-003' | 'SRV-004', detail: string): ProblemError {
    const seconds = Math.max(1, Math.ceil(this.averageMs / 1000));
    return new ProblemError(code, { detail, headers: { 'retry-after': String(seconds) } });
  }
}
