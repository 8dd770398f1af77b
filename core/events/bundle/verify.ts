import type { KeyObject } from 'node:crypto';
import { ChainWalker, type BrokenLink, type HashedEvent } from '../chain.js';
import { checkpointSignatureValid, ed25519PublicKey, keyFingerprint, type Checkpoint } from '../integrity/signature.js';
import { BUNDLE_FORMAT } from './format.js';

/** The file is not a proof bundle at all (the CLI exits 2); a bundle with a bad event is a broken link instead. */
export class BundleFormatError extends Error {
  override name = 'BundleFormatError';
}

export type BundleVerdict =
  | { ok: true; events: number; from: number; to: number; checkpoints: number; keys: string[]; pinned: boolean }
  | { ok: false; broken: BrokenLink };

const HEX64 = /^[0-9a-f]{64}$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSeq = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isString = (v: unknown): v is string => typeof v === 'string';
const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';

const EVENT_FIELDS: Record<keyof HashedEvent, (v: unknown) => boolean> = {
  id: isString,
  seq: isSeq,
  tenant: isString,
  code: isString,
  module: isString,
  status: isString,
  principal: isNullableString,
  objectType: isNullableString,
  objectId: isNullableString,
  payload: isString,
  createdAt: Number.isSafeInteger,
  prevHash: isString,
  hash: isString,
};
const CHECKPOINT_FIELDS: Record<keyof Checkpoint, (v: unknown) => boolean> = {
  seq: isSeq,
  hash: isString,
  signedAt: Number.isSafeInteger,
  keyId: isString,
  signature: isString,
  // Checkpoints signed before ordinals (message v1) have none.
  ordinal: (v) => v === undefined || (isSeq(v) && v > 0),
};

/** The first field of a record that is missing or of the wrong type, if any. */
const badField = (value: unknown, fields: Record<string, (v: unknown) => boolean>): string | null =>
  !isObject(value) ? '(not an object)' : (Object.keys(fields).find((name) => !fields[name]!(value[name])) ?? null);

/**
 * Checks a proof bundle with no database (format.ts): every event's hash, the links from the anchor, seq
 * continuity, each checkpoint's signature by a trusted key and that its (seq, hash) is the bundled event's,
 * and that the last event is signed. Trusted keys: `pinned` if given, else the bundle's own keys (whose id
 * must be their fingerprint). Answers the broken link with the lowest seq.
 */
export function verifyBundle(bundle: unknown, pinned?: KeyObject): BundleVerdict {
  if (!isObject(bundle) || bundle.format !== BUNDLE_FORMAT) throw new BundleFormatError(`not a proof bundle (format must be "${BUNDLE_FORMAT}")`);
  const { anchor, events, checkpoints, keys } = bundle;
  if (!isObject(anchor) || !isSeq(anchor.seq) || !isString(anchor.hash) || !HEX64.test(anchor.hash)) throw new BundleFormatError('the bundle has no valid anchor {seq, hash}');
  if (!Array.isArray(events) || events.length === 0) throw new BundleFormatError('the bundle has no events');
  if (!Array.isArray(checkpoints) || !Array.isArray(keys)) throw new BundleFormatError('the bundle has no checkpoints or keys list');

  const trusted = trustedKeys(keys, pinned);
  const walker = new ChainWalker({ seq: anchor.seq, hash: anchor.hash });
  const bySeq = new Map<number, HashedEvent>();
  let chainBreak: BrokenLink | null = null;
  for (const event of events as unknown[]) {
    const field = badField(event, EVENT_FIELDS);
    if (field) {
      const id = isObject(event) && isString(event.id) ? event.id : null;
      chainBreak = { seq: walker.last.seq + 1, id, reason: `event ${walker.last.seq + 1} is malformed: ${field}` };
      break;
    }
    chainBreak = walker.next(event as HashedEvent);
    if (chainBreak) break;
    bySeq.set((event as HashedEvent).seq, event as HashedEvent);
  }

  const checkpointBreak = checkCheckpoints(checkpoints, bySeq, trusted);
  const broken = [chainBreak, checkpointBreak].filter((b): b is BrokenLink => b !== null).sort((a, b) => a.seq - b.seq)[0];
  if (broken) return { ok: false, broken };
  const last = walker.last;
  const signed = new Set((checkpoints as Checkpoint[]).map((c) => c.seq));
  if (!signed.has(last.seq)) {
    return { ok: false, broken: { seq: last.seq, id: bySeq.get(last.seq)!.id, reason: `event ${last.seq} is not covered by a signed checkpoint (events after the last checkpoint are unproven)` } };
  }
  const usedKeys = [...new Set((checkpoints as Checkpoint[]).map((c) => c.keyId))];
  return { ok: true, events: walker.checked, from: anchor.seq + 1, to: last.seq, checkpoints: checkpoints.length, keys: usedKeys, pinned: pinned !== undefined };
}

/** The keys checkpoints may be signed with: the pinned one, or the bundled ones whose id is their fingerprint. */
function trustedKeys(keys: unknown[], pinned?: KeyObject): Map<string, KeyObject> {
  if (pinned) return new Map([[keyFingerprint(pinned), pinned]]);
  const trusted = new Map<string, KeyObject>();
  for (const entry of keys) {
    if (!isObject(entry) || !isString(entry.keyId) || !isString(entry.publicKey)) continue;
    try {
      const key = ed25519PublicKey(entry.publicKey);
      if (keyFingerprint(key) === entry.keyId) trusted.set(entry.keyId, key);
    } catch {
      // Not a key: checkpoints naming it fail as signed by an unknown key.
    }
  }
  return trusted;
}

function checkCheckpoints(checkpoints: unknown[], bySeq: Map<number, HashedEvent>, trusted: Map<string, KeyObject>): BrokenLink | null {
  let previous = -1;
  for (const [index, value] of checkpoints.entries()) {
    const field = badField(value, CHECKPOINT_FIELDS);
    const seq = isObject(value) && isSeq(value.seq) ? value.seq : previous + 1;
    if (field) return { seq, id: bySeq.get(seq)?.id ?? null, reason: `checkpoint ${index + 1} is malformed: ${field}` };
    const checkpoint = value as Checkpoint;
    const event = bySeq.get(checkpoint.seq);
    const id = event?.id ?? null;
    if (checkpoint.seq <= previous) return { seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} is out of order` };
    previous = checkpoint.seq;
    const key = trusted.get(checkpoint.keyId);
    if (!key) return { seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} is signed by ${HEX64.test(checkpoint.keyId) ? `key ${checkpoint.keyId}` : 'a key'}, which is not trusted` };
    if (!checkpointSignatureValid(checkpoint, key)) return { seq: checkpoint.seq, id, reason: `checkpoint ${checkpoint.seq} has an invalid signature` };
    if (!event) return { seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} is missing (it is signed at checkpoint ${checkpoint.seq})` };
    if (event.hash !== checkpoint.hash) return { seq: checkpoint.seq, id, reason: `event ${checkpoint.seq} does not have the hash signed at checkpoint ${checkpoint.seq}` };
  }
  return null;
}
