import type { HashedEvent } from '../chain.js';
import type { Checkpoint } from '../integrity/signature.js';

/** The format tag of a proof bundle; a verifier refuses any other. */
export const BUNDLE_FORMAT = 'certwright.events.proof-bundle/1';

/**
 * A proof bundle (JSON): a slice of the event chain that can be checked with no database.
 * - `anchor`: the seq before the first event and the hash the first event must link to;
 * - `range`: the seqs asked for; `events` run from range.from to the first checkpoint at or after
 *   range.to (an export signs one at range.to when there is none), so the last event is signed;
 * - `events`: every chained field and the hash, in seq order;
 * - `checkpoints`: the signed checkpoints within the events' seqs;
 * - `keys`: the public keys (PEM SPKI) that signed them, by key id (the sha256 of the SPKI DER).
 */
export interface ProofBundle {
  format: typeof BUNDLE_FORMAT;
  exportedAt: number;
  range: { from: number; to: number };
  anchor: { seq: number; hash: string };
  events: HashedEvent[];
  checkpoints: Checkpoint[];
  keys: { keyId: string; publicKey: string }[];
}
