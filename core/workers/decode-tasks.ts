/**
 * The decodes that may run on a worker thread, as one function both threads call: the event loop for the
 * cheap ones (a small CRL), a pool thread for the heavy ones (every PKCS#12 file, large CRLs and
 * detections). The same code on both sides is what makes a pooled answer the inline one.
 *
 * Input arrives as the route had it (a JSON string, a raw body's bytes, a JWK object): the PEM / base64
 * decoding is part of the task, so a 16 MiB base64 body is not decoded on the event loop either.
 */
import { decodeCrl, CRL_INLINE_MAX_BYTES } from '../pki/crl/decode.js';
import { detect, typeOfLabel, wrongKind } from '../pki/detect.js';
import { decodeInput } from '../pki/input.js';
import { checkPkcs12Framing, decodePkcs12 } from '../pki/pkcs12/decode.js';
import { crlView } from '../pki/views/crl.js';
import { detectionView } from '../pki/views/detection.js';
import { pkcs12View } from '../pki/views/pkcs12.js';

export type DecodeInput = string | Uint8Array;

export type DecodeTask =
  /** Open a PKCS#12 file: the view /api/v1/rfc5280/pkcs12 answers. */
  | { kind: 'pkcs12'; input: DecodeInput; password: string }
  /** Decode a CRL: the view /api/v1/rfc5280/crl answers. */
  | { kind: 'crl'; input: DecodeInput }
  /** Tell what an object is: the view /api/v1/crypto/detect answers. */
  | { kind: 'detect'; input: DecodeInput | Record<string, unknown> };

/** The DER of `input`, refusing a PEM block labelled as another kind before decoding it. */
export function derOf(input: DecodeInput, expected: 'crl' | 'pkcs12'): Uint8Array {
  const { der, label } = decodeInput(input);
  const kind = label === undefined ? undefined : typeOfLabel(label);
  if (kind !== undefined && kind !== expected) throw wrongKind(expected, kind);
  return der;
}

/** The answer of `task`, decoded on the calling thread. Bad input throws its ProblemError (PKI-00x). */
export function decodeNow(task: DecodeTask): unknown {
  switch (task.kind) {
    case 'pkcs12':
      return pkcs12View(decodePkcs12(derOf(task.input, 'pkcs12'), task.password));
    case 'crl':
      return crlView(decodeCrl(derOf(task.input, 'crl')));
    case 'detect':
      return detectionView(detect(task.input), task.input);
  }
}

/**
 * Whether `task` goes to the pool. A PKCS#12 file always does: its cost is its iteration counts (up to
 * ~1.3 s of KDF rounds and ~1.5 s of PBKDF2 under the WorkBudget), not its size. A CRL or a detection does
 * above CRL_INLINE_MAX_BYTES of input: below, decoding holds the event loop a few milliseconds at most.
 */
export function isHeavy(task: DecodeTask): boolean {
  if (task.kind === 'pkcs12') return true;
  const input = task.input;
  if (typeof input === 'string' || input instanceof Uint8Array) return input.length > CRL_INLINE_MAX_BYTES;
  // A JSON object (a JWK): already parsed, and detection reads a few of its members.
  return false;
}

/**
 * What the event loop checks before a task goes to the pool: a PKCS#12 file of at most
 * CRL_INLINE_MAX_BYTES is decoded from PEM / base64 and its framing checked (no key derivation: a few
 * microseconds for a real file), so that malformed files, other kinds of object and MAC iteration counts
 * over the budget answer their problem at once, without a place on the pool. Returns the task to pool.
 */
export function precheck(task: DecodeTask): DecodeTask {
  if (task.kind !== 'pkcs12' || task.input.length > CRL_INLINE_MAX_BYTES) return task;
  const der = derOf(task.input, 'pkcs12');
  checkPkcs12Framing(der);
  return { ...task, input: der };
}

/**
 * How a pool thread answers: a view object, the view already serialized as JSON (large answers: their
 * bytes are moved back, not cloned, and not serialized on the event loop), a problem the decoder raised,
 * or a failure it did not expect (logged by the caller, answered PKI-001 as an inline failure is).
 */
export type TaskOutcome =
  | { value: unknown }
  | Uint8Array
  | { problem: { code: string; message: string; detail?: string } }
  | { failure: string };

/**
 * Kinds whose pooled answers come back as JSON bytes (they are large by the time they are pooled: a CRL
 * of 16 MiB has some 400 000 entries, whose clone and serialization would cost the event loop about as
 * much as decoding them). A PKCS#12 view is small: it comes back as an object and the route's response
 * schema serializes it as before.
 */
export const JSON_ANSWER_KINDS: readonly DecodeTask['kind'][] = ['crl', 'detect'];
