import type { Knex } from 'knex';
import type { EventStore } from '../store.js';
import { signCheckpoint, type Checkpoint } from './signature.js';
import type { SigningKeys } from './signing-keys.js';

interface CheckpointRow {
  seq: number | string;
  hash: string;
  signed_at: number | string;
  key_id: string;
  signature: string;
  ordinal: number | string | null;
}

const fromRow = (r: CheckpointRow): Checkpoint => ({
  seq: Number(r.seq),
  hash: r.hash,
  signedAt: Number(r.signed_at),
  keyId: r.key_id,
  ...(r.ordinal === null || r.ordinal === undefined ? {} : { ordinal: Number(r.ordinal) }),
  signature: r.signature,
});

/**
 * Signed checkpoints of the event chain: the (seq, hash) of an event signed with the current key. One per
 * seq: two nodes signing the same head keep the first row.
 */
export class Checkpoints {
  constructor(
    private readonly knex: Knex,
    private readonly events: EventStore,
    private readonly keys: SigningKeys,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Signs the chain head if it moved since the last checkpoint; answers the new checkpoint, or null. */
  async signHead(): Promise<Checkpoint | null> {
    const head = await this.events.head();
    const last = await this.latest();
    if (head.seq === 0 || (last && last.seq >= head.seq)) return null;
    return this.signAt(head);
  }

  /**
   * Signs that the event at `seq` has `hash` (the caller read both from the chain), as the next checkpoint in
   * signing order. Two nodes signing at once may pick the same number: the insert that loses (either unique
   * key: the seq, or the number) is ignored, and when no checkpoint holds the seq then, it signs again with
   * the next number.
   */
  async signAt(at: { seq: number; hash: string }): Promise<Checkpoint> {
    const key = await this.keys.current();
    for (let attempt = 0; attempt < 8; attempt++) {
      const existing = await this.at(at.seq);
      if (existing) return existing;
      const last = (await this.knex('event_checkpoints').max({ n: 'ordinal' }).first()) as { n: number | string | null } | undefined;
      const ordinal = Number(last?.n ?? 0) + 1;
      const checkpoint = signCheckpoint({ seq: at.seq, hash: at.hash, signedAt: this.clock(), keyId: key.keyId, ordinal }, key.privateKey);
      await this.knex('event_checkpoints')
        .insert({ seq: checkpoint.seq, hash: checkpoint.hash, signed_at: checkpoint.signedAt, key_id: checkpoint.keyId, signature: checkpoint.signature, ordinal })
        .onConflict()
        .ignore();
    }
    const signed = await this.at(at.seq);
    if (!signed) throw new Error(`event chain checkpoint at ${at.seq}: no free number after 8 attempts`);
    return signed;
  }

  async latest(): Promise<Checkpoint | undefined> {
    const row = (await this.knex('event_checkpoints').orderBy('seq', 'desc').first()) as CheckpointRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  async at(seq: number): Promise<Checkpoint | undefined> {
    const row = (await this.knex('event_checkpoints').where({ seq }).first()) as CheckpointRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The first checkpoint at or after `seq`: the one that proves an exported range ending there. */
  async firstFrom(seq: number): Promise<Checkpoint | undefined> {
    const row = (await this.knex('event_checkpoints').where('seq', '>=', seq).orderBy('seq').first()) as CheckpointRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Up to `limit` checkpoints with seq > afterSeq (and <= toSeq), in seq order. */
  async page(afterSeq: number, limit: number, toSeq = Number.MAX_SAFE_INTEGER): Promise<Checkpoint[]> {
    const rows = (await this.knex('event_checkpoints').where('seq', '>', afterSeq).andWhere('seq', '<=', toSeq).orderBy('seq').limit(limit)) as CheckpointRow[];
    return rows.map(fromRow);
  }
}
