import type { Knex } from 'knex';
import { createPool, type Pool, type PoolConnection, type RowDataPacket } from 'mysql2/promise';
import { JOBS_TABLE, type JobRow } from './rows.js';

export interface DueClaim {
  name: string;
  scanUntil: number;
  lockTime: number;
  lastModifiedBy: string | null;
  nextRunDir: 'asc' | 'desc';
  priorityDir: 'asc' | 'desc';
}

/**
 * MariaDB has no UPDATE … RETURNING, so a claim through knex costs four round trips (BEGIN, SELECT …
 * FOR UPDATE SKIP LOCKED, UPDATE, COMMIT) where PostgreSQL needs one. Here the same transaction goes as
 * one multi-statement batch: the locking SELECT stores the id in a session variable, the UPDATE and the
 * read-back use it. One round trip per claim; the row locked and the semantics are exactly those of the
 * knex path (claimSkippingLocked). The batch runs on a small pool of its own, the only one with
 * multipleStatements on: its SQL is this fixed text with bound values, nothing else ever runs there.
 */
export class OneTripClaimer {
  private readonly pool: Pool;
  private readonly sql: { asc: Record<'asc' | 'desc', string>; desc: Record<'asc' | 'desc', string> };

  constructor(knex: Knex, connections: number) {
    const connection = knex.client.config.connection as Record<string, unknown>;
    this.pool = createPool({ ...connection, multipleStatements: true, connectionLimit: connections, maxIdle: connections });
    // READ COMMITTED like the main pool: the locking read takes no gap locks.
    this.pool.on('connection', (conn) => {
      conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
    });
    const build = (nextRun: 'asc' | 'desc', priority: 'asc' | 'desc') =>
      [
        'SET @cw_claim := NULL',
        'START TRANSACTION',
        `SELECT id INTO @cw_claim FROM ${JOBS_TABLE} WHERE name = ? AND disabled = 0 AND locked_at IS NULL AND next_run_at <= ? ` +
          `ORDER BY next_run_at ${nextRun}, priority ${priority} LIMIT 1 FOR UPDATE SKIP LOCKED`,
        `UPDATE ${JOBS_TABLE} SET locked_at = ?, last_modified_by = ?, updated_at = ? WHERE id = @cw_claim`,
        `SELECT * FROM ${JOBS_TABLE} WHERE id = @cw_claim`,
        'COMMIT',
      ].join(';\n');
    this.sql = {
      asc: { asc: build('asc', 'asc'), desc: build('asc', 'desc') },
      desc: { asc: build('desc', 'asc'), desc: build('desc', 'desc') },
    };
  }

  /** Locks and returns the next due job of the name, or undefined when none is free. */
  async claim(request: DueClaim): Promise<JobRow | undefined> {
    const conn: PoolConnection = await this.pool.getConnection();
    // Idle connections of this pool never keep the process alive: an owner that never calls close()
    // (Agenda does not, for a backend that does not own its connection) can still exit.
    const socket = (conn as unknown as { connection?: { stream?: { ref?(): void; unref?(): void } } }).connection?.stream;
    socket?.ref?.();
    try {
      const [results] = await conn.query(this.sql[request.nextRunDir][request.priorityDir], [
        request.name,
        request.scanUntil,
        request.lockTime,
        request.lastModifiedBy,
        Date.now(),
      ]);
      const rows = (results as unknown[])[4] as RowDataPacket[];
      socket?.unref?.();
      conn.release();
      return (rows[0] as JobRow | undefined) ?? undefined;
    } catch (err) {
      // A batch stops at its first error, possibly inside the transaction: never hand such a connection
      // back to the pool with locks held.
      await conn.query('ROLLBACK').catch(() => undefined);
      conn.destroy();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
