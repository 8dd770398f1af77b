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
  const breaks = [chainBreak, checkpointBreak].filter((b): b is BrokenLink => b !== null).sort((a, b) => a.seq - b.seq);
  return breaks.length > 0 ? { ...progress, ok: false, firstBroken: breaks[0] } : { ...progress, ok: true };
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
): Promise<BrokenLink | null> {
  const trusted = await deps.keys.trusted();
  let afterSeq = 0;
  for (;;) {
    const page = await deps.checkpoints.page(afterSeq, pageSize);
    const events = await deps.events.atSeqs(page.map((c) => c.seq));
    for (const checkpoint of page) {
      const event = events.get(checkpoint.seq);
      const id = event?.id ?? null;
      const key = trusted.get(checkpoint.keyId);
      if (!key) return { seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} is signed by an unknown or untrusted key (${checkpoint.keyId})` };
      if (!checkpointSignatureValid(checkpoint, key)) return { seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} has an invalid signature` };
      if (!event) return { seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} is missing (it was signed at checkpoint ${checkpoint.seq})` };
      if (event.hash !== checkpoint.hash) {
        return { seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} does not have the hash signed at checkpoint ${checkpoint.seq} (the chain was rewritten)` };
      }
      progress.checkpoints++;
    }
    afterSeq = page.at(-1)?.seq ?? afterSeq;
    await onProgress(progress);
    if (page.length < pageSize) return null;
  }
}
