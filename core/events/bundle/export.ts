import type { Writable } from 'node:stream';
import { ChainWalker, GENESIS_HASH, type BrokenLink, type HashedEvent } from '../chain.js';
import type { IntegrityServices } from '../integrity/services.js';
import { publicKeyPem, type Checkpoint } from '../integrity/signature.js';
import { BUNDLE_FORMAT, type ProofBundle } from './format.js';

const PAGE_SIZE = 1000;

/** The exported range does not verify against the database: no checkpoint is signed over it. */
export class BrokenRangeError extends Error {
  override name = 'BrokenRangeError';
  constructor(readonly broken: BrokenLink) {
    super(`BROKEN at seq ${broken.seq} (id ${broken.id ?? 'none'}): ${broken.reason}`);
  }
}

/** Writes, and waits when the stream asks to (a large range streams page by page); rejects if it fails meanwhile. */
async function write(out: Writable, text: string): Promise<void> {
  if (out.write(text)) return;
  await new Promise<void>((ok, fail) => {
    const drained = () => {
      out.off('error', failed);
      ok();
    };
    const failed = (err: Error) => {
      out.off('drain', drained);
      fail(err);
    };
    out.once('drain', drained).once('error', failed);
  });
}

/**
 * Streams the proof bundle of seqs range.from..range.to (format.ts) to `out`, in bounded pages. The events
 * run on to the first checkpoint at or after range.to; when there is none, one is signed for range.to
 * once the exported events have verified from the anchor (a broken range is refused, never signed).
 */
export async function exportBundle(
  integrity: IntegrityServices,
  range: { from: number; to: number },
  out: Writable,
  clock: () => number = Date.now,
): Promise<{ events: number; from: number; to: number; checkpoints: number; keys: string[] }> {
  const { events, checkpoints, keys } = integrity;
  const existing = await checkpoints.firstFrom(range.to);
  const end = existing?.seq ?? range.to;
  const [first] = await events.page(range.from - 1, 1, end);
  if (!first || first.seq !== range.from) throw new BrokenRangeError({ seq: range.from, id: null, reason: `event ${range.from} is missing` });
  const anchor = range.from === 1 ? { seq: 0, hash: GENESIS_HASH } : { seq: range.from - 1, hash: first.prevHash };

  const header: Omit<ProofBundle, 'events' | 'checkpoints' | 'keys'> = { format: BUNDLE_FORMAT, exportedAt: clock(), range, anchor };
  await write(out, `${JSON.stringify(header).slice(0, -1)},\n"events": [`);
  const walker = new ChainWalker(anchor);
  let last: HashedEvent | undefined;
  for (let page: HashedEvent[]; (page = await events.page(walker.last.seq, PAGE_SIZE, end)).length > 0; ) {
    const lines: string[] = [];
    for (const event of page) {
      const broken = walker.next(event);
      if (broken) throw new BrokenRangeError(broken);
      lines.push(`${last ? ',' : ''}\n  ${JSON.stringify(event)}`);
      last = event;
    }
    await write(out, lines.join(''));
  }
  if (!last || last.seq !== end) throw new BrokenRangeError({ seq: walker.last.seq + 1, id: null, reason: `event ${walker.last.seq + 1} is missing` });

  // The proof of the range: the checkpoint that signs its last event (existing, or signed now).
  if (!existing) await checkpoints.signAt({ seq: last.seq, hash: last.hash });
  const covering: Checkpoint[] = [];
  for (let page: Checkpoint[]; (page = await checkpoints.page(covering.at(-1)?.seq ?? range.from - 1, PAGE_SIZE, end)).length > 0; ) covering.push(...page);
  const trusted = await keys.trusted();
  const keyIds = [...new Set(covering.map((c) => c.keyId))];
  const bundledKeys = keyIds.flatMap((keyId) => {
    const key = trusted.get(keyId);
    return key ? [{ keyId, publicKey: publicKeyPem(key) }] : [];
  });
  await write(out, `\n],\n"checkpoints": ${JSON.stringify(covering, null, 1)},\n"keys": ${JSON.stringify(bundledKeys, null, 1)}\n}\n`);
  return { events: walker.checked, from: range.from, to: end, checkpoints: covering.length, keys: keyIds };
}
