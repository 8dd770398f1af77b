import { ProblemError } from '../../errors/index.js';

/**
 * Key-derivation work allowed per PKCS#12 file, so a hostile file (huge iteration counts, or thousands
 * of encrypted bags) answers PKI-004 in bounded time instead of pinning a CPU. Real files stay far
 * below: OpenSSL writes 2048 rounds per derivation, Java 10 000, and a file needs a handful of
 * derivations. The PKCS#12 KDF runs in JS at ~2.5 µs a round (500k ≈ 1.3 s); PBKDF2 runs natively at
 * ~0.3 µs (5M ≈ 1.5 s).
 */
export const KDF_ROUND_BUDGET = 500_000;
export const PBKDF2_ROUND_BUDGET = 5_000_000;

export class WorkBudget {
  private kdf = KDF_ROUND_BUDGET;
  private pbkdf2 = PBKDF2_ROUND_BUDGET;

  /** Takes `rounds` of the PKCS#12 KDF (RFC 7292 App. B) from the budget, or refuses with PKI-004. */
  kdfRounds(rounds: number): void {
    this.kdf -= rounds;
    if (this.kdf < 0) throw new ProblemError('PKI-004', { detail: `key derivation needs more than ${KDF_ROUND_BUDGET} PKCS#12 KDF rounds` });
  }

  pbkdf2Rounds(rounds: number): void {
    this.pbkdf2 -= rounds;
    if (this.pbkdf2 < 0) throw new ProblemError('PKI-004', { detail: `key derivation needs more than ${PBKDF2_ROUND_BUDGET} PBKDF2 rounds` });
  }
}
