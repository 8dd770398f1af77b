/**
 * SQLite WAL checkpoints on a worker thread. A checkpoint copies the pages the WAL holds back into the database
 * file and, with `synchronous = NORMAL`, is where SQLite fsyncs; left to SQLite's automatic checkpoint it runs
 * inside the COMMIT that crosses the threshold, on the event loop (better-sqlite3 is synchronous), and stalled
 * every request in flight for it: bench/enroll measured p99 about 190 ms with it and about 110 ms without.
 *
 * The worker opens its own connection to the same file and runs PASSIVE checkpoints (they never wait for, nor
 * block, the writer or the readers) every `everyMs`. The kernel's own connection keeps its automatic
 * checkpoint, at a higher threshold, as the safety net: the WAL is rewound only by a writer that finds every
 * frame copied, which a PASSIVE checkpoint racing a steady writer seldom leaves it; the remainder it then copies
 * is what the worker has not, usually little. If the worker cannot start, the automatic checkpoint stays as it
 * was; if it dies, the kernel's threshold goes back to the usual one (WAL_AUTOCHECKPOINT) with a warning.
 *
 * The worker is plain JS (the TypeScript loader is not registered in worker threads on Node 20) and loads the
 * same better-sqlite3 the kernel uses, by its resolved path.
 */
import type { Knex } from 'knex';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { WAL_AUTOCHECKPOINT } from './connection.js';

/**
 * How often the worker checkpoints. Each pass copies every page the WAL changed since the last once, however
 * often it was rewritten meanwhile: at 25 ms the worker copied the same index pages so often that its CPU cost
 * more than it saved (bench/enroll: 0.5 ms of CPU per enrollment); at 1 s it is a fraction of that.
 */
export const CHECKPOINT_EVERY_MS = 1000;

/**
 * The kernel's own automatic checkpoint while the worker runs (WAL frames of 4 KiB: 128 MiB). About 3 s of
 * enrollments at full speed: it runs seldom, and copies only what the worker has not. The WAL file is cut
 * back to WAL_SIZE_LIMIT_BYTES when SQLite rewinds it.
 */
export const SAFETY_NET_FRAMES = 32_000;
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
let timer;
let stopped = false;
const pass = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (r && r.checkpointed > 0) parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
  } catch {}
  if (!stopped) timer = setTimeout(pass, workerData.everyMs);
};
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  stopped = true;
  clearTimeout(timer);
  try { db.close(); } catch {}
  parentPort.close();
});
timer = setTimeout(pass, workerData.everyMs);
`;

/** What the worker has done: passes that copied frames, and the frames the last of them copied. */
export interface CheckpointStats {
  passes: number;
  lastCheckpointed: number;
  lastLog: number;
}

export class WalCheckpointer {
  readonly stats: CheckpointStats = { passes: 0, lastCheckpointed: 0, lastLog: 0 };
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private dead = false;

  private constructor() {}

  /**
   * A worker checkpointing `filename` every `everyMs`; undefined when it cannot start (SQLite checkpoints
   * alone). `onDeath` hears of a worker that ended without stop() (with its error, when it had one).
   */
  static start(filename: string, everyMs: number, onDeath?: (err: Error | undefined) => void): WalCheckpointer | undefined {
    const checkpointer = new WalCheckpointer();
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, filename, everyMs } });
      // Never what keeps a process alive: the kernel stops it, and an exiting process takes it along.
      worker.unref();
      worker.on('message', (m: { log: number; checkpointed: number }) => {
        checkpointer.stats.passes++;
        checkpointer.stats.lastCheckpointed = m.checkpointed;
        checkpointer.stats.lastLog = m.log;
      });
      let failure: Error | undefined;
      worker.on('error', (err) => (failure = err));
      checkpointer.exited = new Promise((resolve) =>
        worker.once('exit', () => {
          checkpointer.dead = true;
          // stop() forgets the worker first: an exit it did not ask for is a death.
          if (checkpointer.worker === worker) onDeath?.(failure);
          resolve();
        }),
      );
      checkpointer.worker = worker;
      return checkpointer;
    } catch {
      return undefined;
    }
  }

  /** Whether the worker thread is still there (false once stopped, or if it died). */
  get running(): boolean {
    return this.worker !== undefined && !this.dead;
  }

  /** Closes the worker's connection and waits for the thread to end. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    worker.postMessage('stop');
    await this.exited;
  }
}

/**
 * The kernel's SQLite database checkpointed by a worker: started, then the connection's automatic checkpoint
 * moved to the safety net. Undefined when the worker cannot start: SQLite's own checkpoint stays as it was. A
 * worker that dies later is logged, and the usual threshold comes back (after the raise, if it was under way).
 */
export async function checkpointOffThread(knex: Knex, filename: string, logger: Logger, everyMs = CHECKPOINT_EVERY_MS): Promise<WalCheckpointer | undefined> {
  let raised: Promise<unknown> = Promise.resolve();
  const checkpointer = WalCheckpointer.start(filename, everyMs, (err) => {
    logger.warn({ err }, 'the WAL checkpoint worker ended: SQLite checkpoints on the event loop again');
    void raised.then(() => knex.raw(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`)).catch(() => undefined);
  });
  if (!checkpointer) return undefined;
  // One connection (pool max 1): these pragmas hold for every statement the kernel runs.
  raised = (async () => {
    await knex.raw(`PRAGMA wal_autocheckpoint = ${SAFETY_NET_FRAMES}`);
    await knex.raw(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  })();
  try {
    await raised;
    return checkpointer;
  } catch (err) {
    await checkpointer.stop();
    throw err;
  }
}
