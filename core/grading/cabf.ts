/**
 * The CA/Browser Forum's maximum validity of TLS server certificates (Baseline Requirements §6.3.2, ballot
 * SC-081), by notBefore: 398 days until 2026-03-15, then 200, 100 from 2027-03-15 and 47 from 2029-03-15.
 * The validity period runs from notBefore through notAfter inclusive (BR §1.6.4, RFC 5280 §4.1.2.5), so it
 * is notAfter − notBefore plus one second. The same ballot shortens how long a domain validation may be
 * reused for issuance (BR §4.2.1): 398 days, then 200, 100 and 10 days at the same dates.
 */
export interface ValidityStep {
  /** Certificates whose notBefore is at or after this instant (epoch ms)… */
  from: number;
  /** …may be valid at most this many days… */
  maxDays: number;
  /** …and may reuse a domain validation done at most this many days before their issuance. */
  dcvReuseDays: number;
}

export const DAY_MS = 86_400_000;

export const CABF_SCHEDULE: readonly ValidityStep[] = [
  { from: Number.NEGATIVE_INFINITY, maxDays: 398, dcvReuseDays: 398 },
  { from: Date.UTC(2026, 2, 15), maxDays: 200, dcvReuseDays: 200 },
  { from: Date.UTC(2027, 2, 15), maxDays: 100, dcvReuseDays: 100 },
  { from: Date.UTC(2029, 2, 15), maxDays: 47, dcvReuseDays: 10 },
];

/** The step that governs a certificate issued at `notBefore` (of `schedule`: steps in ascending `from`, the first from −∞). */
export function stepFor(notBefore: number, schedule: readonly ValidityStep[] = CABF_SCHEDULE): ValidityStep {
  let out = schedule[0]!;
  for (const step of schedule) if (notBefore >= step.from) out = step;
  return out;
}

/** The validity period in milliseconds, both ends included. */
export const validityMs = (notBefore: number, notAfter: number): number => notAfter - notBefore + 1000;

/** Days, with up to two decimals (400, 200.5). */
export const days = (ms: number): number => Math.round((ms / DAY_MS) * 100) / 100;

/** How the step reads in a message: "notBefore on or after 2026-03-15" or "notBefore before 2026-03-15". */
export function stepText(step: ValidityStep): string {
  if (step.from === Number.NEGATIVE_INFINITY) return `notBefore before ${new Date(CABF_SCHEDULE[1]!.from).toISOString().slice(0, 10)}`;
  return `notBefore on or after ${new Date(step.from).toISOString().slice(0, 10)}`;
}
