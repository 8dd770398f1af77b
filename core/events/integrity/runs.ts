import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import type { BrokenLink } from '../chain.js';
import type { VerificationProgress, VerificationResult } from './verify-chain.js';

/**
 * running: the job is walking the chain (`checked` grows); succeeded: the check finished and the chain is
 * intact; failed: the check finished and found a broken link (`result.firstBroken`); error: the check could
 * not finish (`error` says why: a database failure, or a node that died and was not taken over).
 */
export type IntegrityRunStatus = 'running' | 'succeeded' | 'failed' | 'error';

export interface IntegrityRun {
  id: string;
  status: IntegrityRunStatus;
  startedAt: number;
  finishedAt: number | null;
  headSeq: number | null;
  checked: number;
  checkpoints: number;
  result: { ok: boolean; firstBroken?: BrokenLink } | null;
  error?: string;
}

interface RunRow {
  id: string;
  status: IntegrityRunStatus;
  started_at: number | string;
  finished_at: number | string | null;
  updated_at: number | string;
  head_seq: number | string | null;
  checked: number | string;
  checkpoints: number | string;
  broken_seq: number | string | null;
  broken_id: string | null;
  broken_reason: string | null;
  error: string | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

function fromRow(r: RunRow): IntegrityRun {
  const finished = r.status === 'succeeded' || r.status === 'failed';
  const run: IntegrityRun = {
    id: r.id,
    status: r.status,
    startedAt: Number(r.started_at),
    finishedAt: num(r.finished_at),
    headSeq: num(r.head_seq),
    checked: Number(r.checked),
    checkpoints: Number(r.checkpoints),
    result: !finished
      ? null
      : r.broken_seq === null
        ? { ok: true }
        : { ok: false, firstBroken: { seq: Number(r.broken_seq), id: r.broken_id, reason: r.broken_reason ?? '' } },
  };
  if (r.error !== null) run.error = r.error;
  return run;
}

/** Verification runs, persisted so that any node answers a run's state; at most one runs at a time. */
export class IntegrityRuns {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
    /** A running run with no progress for this long lost its node (and was not taken over): it is closed. */
    private readonly abandonedAfterMs: number,
  ) {}

  /**
   * Opens a run, or answers the one already running (`created: false`). The unique `running` column admits
   * one running row across nodes: of two concurrent starts, one inserts and the other reads it.
   */
  async open(): Promise<{ run: IntegrityRun; created: boolean }> {
    const now = this.clock();
    await this.knex('event_integrity_runs')
      .where({ running: 1 })
      .andWhere('updated_at', '<', now - this.abandonedAfterMs)
      .update({ status: 'error', running: null, finished_at: now, error: 'abandoned: its node stopped making progress' });
    const id = newId(now);
    await this.knex('event_integrity_runs')
      .insert({ id, status: 'running', running: 1, started_at: now, updated_at: now, checked: 0, checkpoints: 0 })
      .onConflict('running')
      .ignore();
    const row = (await this.knex('event_integrity_runs').where({ running: 1 }).first()) as RunRow | undefined;
    // The run may already have finished between the insert and this read: answer ours.
    const run = row ? fromRow(row) : (await this.get(id))!;
    return { run, created: run.id === id };
  }

  async get(id: string): Promise<IntegrityRun | undefined> {
    const row = (await this.knex('event_integrity_runs').where({ id }).first()) as RunRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The most recent run (the latest started). */
  async latest(): Promise<IntegrityRun | undefined> {
    const row = (await this.knex('event_integrity_runs').orderBy('started_at', 'desc').orderBy('id', 'desc').first()) as RunRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Saves progress of a running run (also the run's liveness); false when the run is no longer running. */
  async progress(id: string, p: VerificationProgress): Promise<boolean> {
    const updated = await this.knex('event_integrity_runs')
      .where({ id, status: 'running' })
      .update({ head_seq: p.headSeq, checked: p.checked, checkpoints: p.checkpoints, updated_at: this.clock() });
    return updated > 0;
  }

  async finish(id: string, result: VerificationResult): Promise<void> {
    const broken = result.firstBroken;
    await this.knex('event_integrity_runs')
      .where({ id, status: 'running' })
      .update({
        status: result.ok ? 'succeeded' : 'failed',
        running: null,
        finished_at: this.clock(),
        updated_at: this.clock(),
        head_seq: result.headSeq,
        checked: result.checked,
        checkpoints: result.checkpoints,
        broken_seq: broken?.seq ?? null,
        broken_id: broken?.id ?? null,
        broken_reason: broken ? broken.reason.slice(0, 255) : null,
      });
  }

  async fail(id: string, error: string): Promise<void> {
    await this.knex('event_integrity_runs')
      .where({ id, status: 'running' })
      .update({ status: 'error', running: null, finished_at: this.clock(), updated_at: this.clock(), error: error.slice(0, 1024) });
  }
}
