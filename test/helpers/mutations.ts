import fc from 'fast-check';
import { ProblemError } from '../../core/errors/index.js';

/**
 * Property: `decode` of `bytes` with 1–4 bytes changed and possibly cut short ends in a result or a
 * ProblemError, nothing else. Seeded, so a failure reproduces.
 */
export function assertOnlyProblems(decode: (b: Uint8Array) => unknown, bytes: Uint8Array, seed: number, numRuns = 500): void {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(bytes.length - 1), fc.nat(255)), { minLength: 1, maxLength: 4 }), fc.nat(bytes.length), (edits, cut) => {
      const mutated = Uint8Array.from(bytes.subarray(0, Math.max(cut, bytes.length - 40)));
      for (const [at, value] of edits) if (at < mutated.length) mutated[at] = value;
      try {
        decode(mutated);
      } catch (err) {
        if (!(err instanceof ProblemError)) throw err;
      }
    }),
    { numRuns, seed },
  );
}
