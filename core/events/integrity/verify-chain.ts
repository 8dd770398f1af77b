import { ChainWalker, type BrokenLink } from '../chain.js';
import type { EventStore } from '../store.js';
import type { Checkpoints } from './checkpoints.js';
import { checkpointSignatureValid } from './signature.js';
import type { SigningKeys } from './signing-keys.js';

export interface VerificationProgress {
  /** The chain head when the run started: the walk covers seq 1..headSeq (later appends wait for the next run). */
  headSeq: number;
  /** Events verified so far. */
  checked: number;
  /** Checkpoints verified so far. */
  checkpoints: number;
}

export interface VerificationResult extends VerificationProgress {
  ok: boolean;
  firstBroken?: BrokenLink;
  /**
   * The events after the newest checkpoint: not yet signed, so a rewrite of them (hashes recomputed) together
   * with the deletion of the newest checkpoints is not detectable here. In operation it holds at most
   * events.checkpoint.everyEvents events or everyMinutes minutes of them (plus the job's delay).
   */
  unsignedTail: { events: number; fromSeq: number | null };
}

/** Rows read per query: a million events never sit in memory at once. */
export const VERIFY_PAGE_SIZE = 1000;

/**
 * The full integrity check: walks the chain from the genesis hash to the head in bounded pages, then checks
 * every signed checkpoint: its signature by a trusted key and that the event at its seq still has the
 * signed hash (which catches a chain rewritten with all hashes recomputed). Answers the broken link with
 * the lowest seq. `onProgress` runs after each page (the job saves it and extends its lock).
 */
export async function verifyChain(
  deps: { events: EventStore; checkpoints: Checkpoints; keys: SigningKeys },
  onProgress: (progress: VerificationProgress) => Promise<void>,
  pageSize = VERIFY_PAGE_SIZE,
): Promise<VerificationResult> {
  const head = await deps.events.head();
  const progress: VerificationProgress = { headSeq: head.seq, checked: 0, checkpoints: 0 };
  const chainBreak = await walkEvents(deps.events, head, progress, onProgress, pageSize);
  const checkpointBreak = await walkCheckpoints(deps, progress, onProgress, pageSize);
  const breaks = [chainBreak, checkpointBreak.broken].filter((b): b is BrokenLink => b !== null).sort((a, b) => a.seq - b.seq);
  const lastSigned = checkpointBreak.lastSeq;
  const unsignedTail = { events: Math.max(0, head.seq - lastSigned), fromSeq: head.seq > lastSigned ? lastSigned + 1 : null };
  return breaks.length > 0 ? { ...progress, ok: false, firstBroken: breaks[0], unsignedTail } : { ...progress, ok: true, unsignedTail };
}

async function walkEvents(
  events: EventStore,
  head: { seq: number; hash: string },
  progress: VerificationProgress,
  onProgress: (progress: VerificationProgress) => Promise<void>,
  pageSize: number,
): Promise<BrokenLink | null> {
  const walker = new ChainWalker();
  for (;;) {
    const page = await events.page(walker.last.seq, pageSize, head.seq);
    for (const event of page) {
      const broken = walker.next(event);
      if (broken) {
        progress.checked = walker.checked;
        return broken;
      }
    }
    progress.checked = walker.checked;
    await onProgress(progress);
    if (page.length < pageSize) break;
  }
  const last = walker.last;
  // A removed tail: the head row still says where the chain ended.
  if (last.seq < head.seq) return { seq: last.seq + 1, id: null, reason: `event ${last.seq + 1} is missing (the chain head is at ${head.seq})` };
  if (last.hash !== head.hash) {
    const [event] = await events.page(head.seq - 1, 1, head.seq);
    return { seq: head.seq, id: event?.id ?? null, reason: 'the chain head hash does not match the last event' };
  }
  return null;
}

async function walkCheckpoints(
  deps: { events: EventStore; checkpoints: Checkpoints; keys: SigningKeys },
  progress: VerificationProgress,
  onProgress: (progress: VerificationProgress) => Promise<void>,
  pageSize: number,
): Promise<{ broken: BrokenLink | null; lastSeq: number }> {
  const trusted = await deps.keys.trusted();
  let afterSeq = 0;
  // Numbered checkpoints (v2), by number: a gap is a deleted checkpoint.
  const numbered = new Map<number, number>();
  const done = (broken: BrokenLink | null) => ({ broken, lastSeq: afterSeq });
  for (;;) {
    const page = await deps.checkpoints.page(afterSeq, pageSize);
    const events = await deps.events.atSeqs(page.map((c) => c.seq));
    for (const checkpoint of page) {
      const event = events.get(checkpoint.seq);
      const id = event?.id ?? null;
      const key = trusted.get(checkpoint.keyId);
      if (!key) return done({ seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} is signed by an unknown or untrusted key (${checkpoint.keyId})` });
      if (!checkpointSignatureValid(checkpoint, key)) return done({ seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} has an invalid signature` });
      if (!event) return done({ seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} is missing (it was signed at checkpoint ${checkpoint.seq})` });
      if (event.hash !== checkpoint.hash) {
        return done({ seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} does not have the hash signed at checkpoint ${checkpoint.seq} (the chain was rewritten)` });
      }
      if (checkpoint.ordinal !== undefined) numbered.set(checkpoint.ordinal, checkpoint.seq);
      progress.checkpoints++;
    }
    afterSeq = page.at(-1)?.seq ?? afterSeq;
    await onProgress(progress);
    if (page.length < pageSize) break;
  }
  return done(missingCheckpoint(numbered));
}

/** The first gap in the checkpoints' numbers 1..n, reported at the seq of the checkpoint after it. */
function missingCheckpoint(numbered: Map<number, number>): BrokenLink | null {
  if (numbered.size === 0) return null;
  const ordinals = [...numbered.keys()].sort((a, b) => a - b);
  let expected = 1;
  for (const ordinal of ordinals) {
    if (ordinal !== expected) {
      return { seq: numbered.get(ordinal)!, id: null, reason: `checkpoint number ${expected} is missing (deleted): checkpoints are numbered as they are signed, and the next one present is number ${ordinal}` };
    }
    expected++;
  }
  return null;
}
