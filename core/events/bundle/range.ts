import type { Knex } from 'knex';

/** A bound of an exported range as typed on the command line: a seq, or an ISO 8601 date. */
export type RangeBound = { seq: number } | { date: number };

/** A bad range: the CLI prints it and exits 2. */
export class BundleRangeError extends Error {
  override name = 'BundleRangeError';
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseBound(text: string, name: string): RangeBound {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const seq = Number(trimmed);
    if (!Number.isSafeInteger(seq) || seq < 1) throw new BundleRangeError(`${name}: a seq starts at 1 (got ${text})`);
    return { seq };
  }
  const date = ISO_DATE.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(date)) throw new BundleRangeError(`${name}: expected a seq (1, 2, …) or an ISO 8601 date (2025-01-31T12:00:00Z), got "${text}"`);
  return { date };
}

/**
 * The seqs a range covers: from = the first event at/after a date, to = the last event at/before a date;
 * defaults: the whole chain. The chain head bounds it (events appended later are not part of the export).
 */
export async function resolveRange(knex: Knex, headSeq: number, from?: RangeBound, to?: RangeBound): Promise<{ from: number; to: number }> {
  if (headSeq === 0) throw new BundleRangeError('the event chain is empty');
  const fromSeq = from === undefined ? 1 : 'seq' in from ? from.seq : await seqAt(knex, 'from', from.date);
  const toSeq = to === undefined ? headSeq : 'seq' in to ? to.seq : await seqAt(knex, 'to', to.date);
  if (fromSeq > headSeq) throw new BundleRangeError(`--from ${fromSeq} is past the chain head (${headSeq})`);
  if (toSeq > headSeq) throw new BundleRangeError(`--to ${toSeq} is past the chain head (${headSeq})`);
  if (fromSeq > toSeq) throw new BundleRangeError(`the range is empty: --from is seq ${fromSeq}, --to is seq ${toSeq}`);
  return { from: fromSeq, to: toSeq };
}

async function seqAt(knex: Knex, side: 'from' | 'to', date: number): Promise<number> {
  const row = (await (side === 'from'
    ? knex('events').where('created_at', '>=', date).min({ seq: 'seq' })
    : knex('events').where('created_at', '<=', date).max({ seq: 'seq' })
  ).first()) as { seq: number | string | null } | undefined;
  if (row?.seq === null || row?.seq === undefined) {
    throw new BundleRangeError(`--${side} ${new Date(date).toISOString()}: no event ${side === 'from' ? 'at or after' : 'at or before'} that date`);
  }
  return Number(row.seq);
}
