import { DAY_MS, stepFor, validityMs, type ValidityStep } from '../grading/cabf.js';

/** One simulated renewal: when it happens, how long the new certificate is valid, whether it needs a fresh DCV. */
export interface Renewal {
  /** Epoch ms: the renewal, and the new certificate's notBefore. */
  at: number;
  /** Validity period of the new certificate in ms (notAfter − notBefore + 1 s, as BR §6.3.2 counts it). */
  lifetimeMs: number;
  /** The last domain validation is older than the reuse period in force at `at`: it is done again. */
  freshDcv: boolean;
}

export interface RenewalOptions {
  /** Share of the lifetime left when the renewal happens: 0.33 renews two thirds into it. */
  renewBefore: number;
  /** No renewal at or after this instant (epoch ms). */
  until: number;
}

/**
 * The renewals of a certificate (notBefore/notAfter in epoch ms) until `until`: each one happens when
 * `renewBefore` of the current certificate's validity is left; the new certificate is valid as long as the
 * current one, or the schedule's maximum at the renewal date when that is shorter. The domain was validated
 * when the inventory certificate was issued; a renewal later than the reuse period in force validates it
 * again. A certificate that cannot be valid (notAfter before notBefore) has none.
 */
export function* renewalsOf(cert: { notBefore: number; notAfter: number }, schedule: readonly ValidityStep[], options: RenewalOptions): Generator<Renewal> {
  let start = cert.notBefore;
  let lifetime = validityMs(cert.notBefore, cert.notAfter);
  if (!(lifetime > 0)) return;
  let validatedAt = cert.notBefore;
  for (;;) {
    // Rounded to the millisecond so that a chain is the same on every platform (no drifting fractions).
    const at = Math.max(start + 1, start + lifetime - Math.round(lifetime * options.renewBefore));
    if (at >= options.until) return;
    const step = stepFor(at, schedule);
    const next = Math.min(lifetime, step.maxDays * DAY_MS);
    const freshDcv = at - validatedAt > step.dcvReuseDays * DAY_MS;
    if (freshDcv) validatedAt = at;
    yield { at, lifetimeMs: next, freshDcv };
    start = at;
    lifetime = next;
  }
}
