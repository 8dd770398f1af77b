import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** A signed chain head: at `seq` the event had `hash` when key `keyId` signed it at `signedAt` (epoch ms). */
export interface Checkpoint {
  seq: number;
  hash: string;
  signedAt: number;
  keyId: string;
  /** The checkpoint's number in signing order (1, 2, …), signed: a gap is a deleted checkpoint. Absent on v1 checkpoints. */
  ordinal?: number;
  /** Ed25519 signature of checkpointMessage(), base64. */
  signature: string;
}

/**
 * What a checkpoint signature covers: the canonical JSON of its fields under a fixed context string, so a
 * signature can be checked with no database (proof bundles) and is never valid for anything else.
 */
export function checkpointMessage(c: Omit<Checkpoint, 'signature'>): Buffer {
  if (c.ordinal === undefined) return Buffer.from(canonicalize({ context: 'certwright.events.checkpoint.v1', seq: c.seq, hash: c.hash, signedAt: c.signedAt, keyId: c.keyId }) as string);
  return Buffer.from(canonicalize({ context: 'certwright.events.checkpoint.v2', seq: c.seq, hash: c.hash, signedAt: c.signedAt, keyId: c.keyId, ordinal: c.ordinal }) as string);
}

export function signCheckpoint(c: Omit<Checkpoint, 'signature'>, privateKey: KeyObject): Checkpoint {
  return { ...c, signature: sign(null, checkpointMessage(c), privateKey).toString('base64') };
}

/** True when the signature is the key's over the checkpoint's fields (never throws). */
export function checkpointSignatureValid(c: Checkpoint, publicKey: KeyObject): boolean {
  try {
    return verify(null, checkpointMessage(c), publicKey, Buffer.from(c.signature, 'base64'));
  } catch {
    return false;
  }
}

/** A key's id and fingerprint: sha256 of its SubjectPublicKeyInfo DER, hex. */
export function keyFingerprint(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** Reads an Ed25519 public key (PEM SPKI); throws a readable error on anything else. */
export function ed25519PublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`not an Ed25519 public key (${key.asymmetricKeyType ?? 'unknown type'})`);
  return key;
}

export const publicKeyPem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();
