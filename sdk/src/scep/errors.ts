/**
 * ScepError: the only exception the SCEP codec lets out for bad input. It carries the RFC 8894 §3.2.1.4.5
 * failInfo so a server can answer a signed CertRep FAILURE instead of a bare HTTP error.
 *
 *   badAlg (0)          unrecognised or refused algorithm (digest, signature, cipher, key transport)
 *   badMessageCheck (1) integrity failure: the envelope does not open with our key, a digest mismatch
 *   badRequest (2)      malformed or unsupported message
 *   badTime (3)         signingTime too far from now (left to the caller's policy)
 *   badCertId (4)       no certificate matches (signer certificate, envelope recipient)
 */
export type FailInfo = 'badAlg' | 'badMessageCheck' | 'badRequest' | 'badTime' | 'badCertId';

/** failInfo name → the PrintableString digit carried in the failInfo attribute. */
export const FAIL_INFO_CODES: Readonly<Record<FailInfo, number>> = {
  badAlg: 0,
  badMessageCheck: 1,
  badRequest: 2,
  badTime: 3,
  badCertId: 4,
};

export class ScepError extends Error {
  constructor(
    readonly failInfo: FailInfo,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ScepError';
  }
}

/**
 * Runs `fn`; anything but a ScepError thrown inside (a RangeError from a corrupt length, a TypeError from
 * node:crypto on a strange key) becomes a ScepError with `failInfo`, so callers only ever see one type.
 */
export function guarded<T>(failInfo: FailInfo, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ScepError) throw err;
    throw new ScepError(failInfo, `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
