import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// A CommonJS module whose types describe an ES default export; at runtime the default is the function.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export const GENESIS_HASH = '0'.repeat(64);

/** What the hash of an event covers: every stored field but the hash itself. */
export interface ChainedFields {
  id: string;
  seq: number;
  tenant: string;
  code: string;
  module: string;
  status: string;
  principal: string | null;
  objectType: string | null;
  objectId: string | null;
  payload: string;
  createdAt: number;
  prevHash: string;
}

/** sha256 over the RFC 8785 canonical JSON of the event, so any edit to any field changes the hash. */
export function eventHash(fields: ChainedFields): string {
  return createHash('sha256').update(canonicalize(fields) as string).digest('hex');
}

/** Exactly the chained fields of an event (a hash over any extra property would never match). */
export const chainedFields = (e: ChainedFields): ChainedFields => ({
  id: e.id,
  seq: e.seq,
  tenant: e.tenant,
  code: e.code,
  module: e.module,
  status: e.status,
  principal: e.principal,
  objectType: e.objectType,
  objectId: e.objectId,
  payload: e.payload,
  createdAt: e.createdAt,
  prevHash: e.prevHash,
});

/** A stored event as the chain sees it: its chained fields and the hash recorded with them. */
export interface HashedEvent extends ChainedFields {
  hash: string;
}

/** The first broken link of a chain: where (seq, and the event id when there is an event there) and why. */
export interface BrokenLink {
  seq: number;
  id: string | null;
  reason: string;
}

/**
 * Checks events one at a time in seq order, from an anchor (the seq before the first event and the hash it
 * must link to), so callers walk any number of events in bounded pages: the integrity job over the
 * database, the proof-bundle verifier over a file. The first broken link is final.
 */
export class ChainWalker {
  private expectedSeq: number;
  private prevHash: string;
  private checkedCount = 0;

  constructor(anchor: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH }) {
    this.expectedSeq = anchor.seq + 1;
    this.prevHash = anchor.hash;
  }

  /** Events accepted so far. */
  get checked(): number {
    return this.checkedCount;
  }

  /** The seq and hash of the last accepted event (the anchor before any). */
  get last(): { seq: number; hash: string } {
    return { seq: this.expectedSeq - 1, hash: this.prevHash };
  }

  /** Accepts the next event, or answers why it breaks the chain. */
  next(event: HashedEvent): BrokenLink | null {
    if (event.seq > this.expectedSeq) return { seq: this.expectedSeq, id: null, reason: `event ${this.expectedSeq} is missing` };
    if (event.seq < this.expectedSeq) return { seq: event.seq, id: event.id, reason: `event ${event.seq} is out of order (expected ${this.expectedSeq})` };
    if (event.prevHash !== this.prevHash) return { seq: event.seq, id: event.id, reason: 'previous hash does not match' };
    if (eventHash(chainedFields(event)) !== event.hash) return { seq: event.seq, id: event.id, reason: 'event content does not match its hash' };
    this.prevHash = event.hash;
    this.expectedSeq++;
    this.checkedCount++;
    return null;
  }
}
