import type { AgendaBackend } from 'agenda';
import type { Knex } from 'knex';
import { detectEngine } from './engine.js';
import { KnexJobLogger } from './logger.js';
import { KnexJobRepository, type KnexJobRepositoryOptions } from './repository.js';

export type KnexBackendOptions = KnexJobRepositoryOptions;

/**
 * Agenda 6's storage backend on the platform's own knex (SQLite, MySQL/MariaDB, PostgreSQL): jobs in
 * scheduler_jobs, job logs in scheduler_job_logs (migration 0003). No notification channel: Agenda polls
 * every processEvery. The caller owns the knex pool; Agenda's stop() leaves it open.
 */
export class KnexBackend implements AgendaBackend {
  readonly name: string;
  readonly repository: KnexJobRepository;
  readonly logger: KnexJobLogger;
  readonly ownsConnection = false;
  /** None: Agenda falls back to polling every processEvery. */
  readonly notificationChannel = undefined;

  constructor(
    private readonly knex: Knex,
    options: KnexBackendOptions = {},
  ) {
    const engine = options.engine ?? detectEngine(knex);
    this.name = `knex/${engine}`;
    this.repository = new KnexJobRepository(knex, { ...options, engine });
    this.logger = new KnexJobLogger(knex, { engine });
  }

  /** Probes the server and checks both tables exist, failing with the migration to run if not. */
  async connect(): Promise<void> {
    try {
      await this.repository.connect();
      await this.logger.connect();
    } catch (err) {
      // Agenda calls connect() from its constructor and does not handle a rejection: when the owner has
      // already destroyed the pool (a kernel stopping or failing to boot), there is nothing to connect to
      // and no error to report. Any other failure is real.
      if (poolGone(this.knex, err)) return;
      throw err;
    }
  }

  /**
   * Before the owner closes the pool: the queue filling Agenda is in the middle of ends, and none starts after
   * it (a statement reaching a destroyed pool would wait there for its acquire timeout).
   */
  quiesce(): Promise<void> {
    return this.repository.close();
  }

  /** After quiesce(): queue filling allowed again (a scheduler started again). */
  resume(): void {
    this.repository.reopen();
  }

  /** Nothing to close: the pool belongs to the caller. */
  async disconnect(): Promise<void> {}
}

/** knex clears client.pool once destroy() has finished; tarn rejects waiting acquires with "aborted" meanwhile. */
function poolGone(knex: Knex, err: unknown): boolean {
  // knex types `client` as any; only its pool field is read.
  const client = knex.client as { pool?: unknown };
  return client.pool === undefined || (err instanceof Error && err.message === 'aborted');
}
