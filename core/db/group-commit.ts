import type { Knex } from 'knex';

/** Most works one group carries (bounds the transaction, its locks, and the wait of the last one in). */
const MAX_GROUP = 64;

type Finish = (trx: Knex.Transaction) => Promise<void>;

/** The finishing writes of each open group transaction (several works), by who registered them. */
const finishers = new WeakMap<Knex.Transaction, Map<object, Finish>>();

/**
 * In a group commit's transaction of several works, `finish` runs once (per `key`) after the last work
 * and before the commit: writes the works share are made once per group instead of once per work (the
 * event chain: one multi-row INSERT and one head update for the group's events). Answers false, and
 * registers nothing, in any other transaction (a work alone, a transaction of the caller's own): the
 * caller then writes at once. A failing `finish` fails the group, whose works then run again alone.
 */
export function finishBeforeCommit(trx: Knex.Transaction, key: object, finish: Finish): boolean {
  const registered = finishers.get(trx);
  if (!registered) return false;
  if (!registered.has(key)) registered.set(key, finish);
  return true;
}

interface Waiting {
  work: (trx: Knex.Transaction) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit of short write transactions. `run(work)` commits `work`'s writes as `knex.transaction(work)`
 * would; but while a group's transaction is open (up to `parallel` of them), the works that arrive meanwhile
 * wait, then run one after another in the next transaction and share its commit. A commit is the dearest part of a small write
 * transaction (SQLite writes every page the transaction touched to the WAL; MariaDB flushes its redo log),
 * and concurrent enrollments each write a few rows to the same tables and index edges: one commit for a
 * group writes those pages once (bench/enroll).
 *
 * A work's promise settles after the commit of the transaction that carried it, with the work's own value
 * or error. When any work of a group fails, the whole group is rolled back and every work runs again, each
 * in a transaction of its own, so one failure is its work's alone and no work sees another's writes
 * half-done. Works must therefore be safe to run again after a rollback: database writes through `trx`
 * only, and nothing outside the database that a rollback would not undo (hand results over on
 * `trx.executionPromise`, which settles with the commit or the rollback). A work must not wait on anything
 * but its own statements: the group waits for it.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  /** Groups being written now, and whether one more is about to start (after this turn's callbacks). */
  private running = 0;
  private starting = false;

  /**
   * `parallel`: groups written at once, each in its own transaction on its own connection (MySQL/MariaDB,
   * where a group mostly waits on the network; their works touch rows of their own, and the event chain
   * head is locked only at a group's end: EventStore.record). SQLite has one connection: 1.
   */
  constructor(
    private readonly knex: Knex,
    private readonly parallel = 1,
  ) {}

  run<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.startGroup();
    });
  }

  /** Starts a writer of groups if fewer than `parallel` run and none is about to start. */
  private startGroup(): void {
    if (this.starting || this.running >= this.parallel || this.waiting.length === 0) return;
    this.starting = true;
    this.running++;
    // Starts after the callbacks of this turn of the event loop: on SQLite a transaction runs to its end in
    // microtasks (the driver is synchronous), so the works of requests read in the same turn would
    // otherwise each find the previous one done and never share a commit.
    setImmediate(() => {
      this.starting = false;
      void this.flush();
    });
  }

  /** Writes groups of the waiting works until none waits; then this writer ends. */
  private async flush(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, MAX_GROUP);
        // Works that arrive while this group is written may start another writer.
        this.startGroup();
        if (group.length === 1) {
          await this.alone(group[0]!);
          continue;
        }
        let values: unknown[];
        try {
          values = await this.knex.transaction(async (trx) => {
            const finishing = new Map<object, Finish>();
            finishers.set(trx, finishing);
            const out: unknown[] = [];
            for (const w of group) out.push(await w.work(trx));
            for (const finish of finishing.values()) await finish(trx);
            finishers.delete(trx);
            return out;
          });
        } catch {
          for (const w of group) await this.alone(w);
          continue;
        }
        group.forEach((w, i) => w.resolve(values[i]));
      }
    } finally {
      this.running--;
      this.startGroup();
    }
  }

  private async alone(w: Waiting): Promise<void> {
    try {
      w.resolve(await this.knex.transaction((trx) => w.work(trx)));
    } catch (err) {
      w.reject(err);
    }
  }
}
