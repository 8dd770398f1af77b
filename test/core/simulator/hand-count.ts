/**
 * The inventory both simulator tests replay, and the figures counted by hand for 2026–2027 with renewals
 * when a third of the validity is left (`--renew-before 1/3`). Every lifetime is a whole number of days
 * (notAfter = notBefore + N days − 1 s: N days as BR §6.3.2 counts), so each renewal falls two thirds into
 * it: 60 days into 90, 265 d 8 h into 398, 243 d 8 h into 365, 133 d 8 h into 200, 66 d 16 h into 100.
 * The new validity is min(current, CA/B maximum on the renewal date): 398 before 2026-03-15, 200, then 100
 * from 2027-03-15. DCV reuse: 398 / 200 / 100 days at the same dates; the domain was validated at issuance.
 */
import type { YearFigures } from '../../../core/simulator/simulate.js';

const DAY = 86_400_000;

export interface HandCertificate {
  name: string;
  notBefore: number;
  notAfter: number;
  module: string | null;
  autoRenew: boolean;
  /** Left out by the inventory reader (revoked, expired, renewed already); the pure function never sees them. */
  excludedBy?: 'revoked' | 'expired' | 'renewed';
}

const cert = (name: string, issued: string, days: number, module: string | null, extra: Partial<HandCertificate> = {}): HandCertificate => ({
  name,
  notBefore: Date.parse(issued),
  notAfter: Date.parse(issued) + days * DAY - 1000,
  module,
  autoRenew: false,
  ...extra,
});

export const HAND_CERTIFICATES: readonly HandCertificate[] = [
  // A (acme: ARI-capable), 90 days from 2026-01-10 12:00, renewed every 60 days; 90 stays under every
  // maximum. Renewals: 2026-03-11, 05-10, 07-09, 09-07, 11-06 (5 in 2026); 2027-01-05, 03-06, 05-05,
  // 07-04, 09-02, 11-01, 12-31 (7 in 2027). Fresh DCV when the last one is older than the reuse period:
  // 2026-09-07 (240 days > 200), 2027-05-05 (240 > 100), 2027-09-02 (120 > 100), 2027-12-31 (120 > 100).
  cert('A', '2026-01-10T12:00:00Z', 90, 'acme'),
  // E (est: protocol-driven): A's dates, so each of A's renewal days sees two renewals.
  cert('E', '2026-01-10T12:00:00Z', 90, 'est'),
  // B (webra, no autoRenew: renewed by hand), 398 days from 2025-06-01. Renewed 2026-02-21 08:00 (before
  // 2026-03-15: keeps 398 days), 2026-11-13 16:00 (→ 200 days; DCV of 2025-06-01 is 530 days old: fresh),
  // 2027-03-27 00:00 (→ 100; 134 days > 100: fresh), 06-01 16:00, 08-07 08:00 (fresh), 10-13 00:00,
  // 12-18 16:00 (fresh). 2 in 2026, 5 in 2027.
  cert('B', '2025-06-01T00:00:00Z', 398, 'webra'),
  // C (no module, autoRenew: the server renews it), 365 days from 2026-04-01. Renewed 2026-11-30 08:00
  // (→ 200; 243 days > 200: fresh), 2027-04-12 16:00 (→ 100; fresh), 06-18 08:00, 08-24 00:00 (fresh),
  // 10-29 16:00; the next, 2028-01-03, is past the period. 1 in 2026, 4 in 2027.
  cert('C', '2026-04-01T00:00:00Z', 365, null, { autoRenew: true }),
  // H: 12 hours across the start, short-lived: left out (counted in certificates.shortLived).
  { name: 'H', notBefore: Date.parse('2025-12-31T18:00:00Z'), notAfter: Date.parse('2026-01-01T05:59:59Z'), module: 'acme', autoRenew: false },
  // D revoked, F expired a second before the period, G renewed already (its successor is in the
  // inventory): the reader leaves them out; had they been read, D and G would add renewals.
  cert('D', '2026-01-10T12:00:00Z', 90, 'webra', { excludedBy: 'revoked' }),
  cert('F', '2025-10-02T00:00:00Z', 91, 'webra', { excludedBy: 'expired' }),
  cert('G', '2025-12-01T00:00:00Z', 90, 'acme', { excludedBy: 'renewed' }),
];

/**
 * Per month: A and E renew together (2 on each of their days), B, C alone.
 * 2026: Feb B · Mar A E · May A E · Jul A E · Sep A E · Nov A E B C = [0,1,2,0,2,0,2,0,2,0,4,0], 13.
 * 2027: Jan A E · Mar A E B · Apr C · May A E · Jun B C · Jul A E · Aug B C · Sep A E · Oct B C · Nov A E ·
 *       Dec A E B = [2,0,3,1,2,2,2,2,2,2,2,3], 23.
 * Fresh DCV: 2026 A E B C = 4; 2027 A 3, E 3, B 3, C 2 = 11.
 * Peak day: 2 (A and E), first on 2026-03-11, in 2027 on 2027-01-05; peak month 2026-11 (4), in 2027
 * 2027-03 (3, tied with December: the earliest).
 */
export const HAND_YEARS: YearFigures[] = [
  {
    year: 2026,
    months: [0, 1, 2, 0, 2, 0, 2, 0, 2, 0, 4, 0],
    renewals: 13,
    renewalsByPath: { ari: 5, protocol: 5, 'auto-renew': 1, manual: 2 },
    manualRenewals: 2,
    dcvValidations: 4,
    certificates: 4,
    uncoveredCertificates: 1,
    peakDay: { at: '2026-03-11', renewals: 2 },
    peakMonth: { at: '2026-11', renewals: 4 },
  },
  {
    year: 2027,
    months: [2, 0, 3, 1, 2, 2, 2, 2, 2, 2, 2, 3],
    renewals: 23,
    renewalsByPath: { ari: 7, protocol: 7, 'auto-renew': 4, manual: 5 },
    manualRenewals: 5,
    dcvValidations: 11,
    certificates: 4,
    uncoveredCertificates: 1,
    peakDay: { at: '2027-01-05', renewals: 2 },
    peakMonth: { at: '2027-03', renewals: 3 },
  },
];

export const HAND_PEAKS = { peakDay: { at: '2026-03-11', renewals: 2 }, peakMonth: { at: '2026-11', renewals: 4 } };
export const HAND_PERIOD = { fromYear: 2026, years: 2, start: '2026-01-01T00:00:00.000Z', end: '2028-01-01T00:00:00.000Z' };
