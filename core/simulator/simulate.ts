import { DAY_MS, validityMs, type ValidityStep } from '../grading/cabf.js';
import { automationPath, type AutomationPath } from './coverage.js';
import { renewalsOf } from './renewals.js';

/**
 * The renewal simulator (issue 30 item 7): replays a validity / DCV-reuse schedule (core/grading/cabf.ts)
 * over certificates and counts the renewals it implies, per day, month and year, in UTC.
 *
 * The model, kept simple on purpose:
 * - every certificate handed in is simulated (the caller picks them: the inventory reader takes the
 *   non-revoked ones, not yet renewed, that have not expired when the period starts); one that expired
 *   before the period starts, or is valid less than a day (short-lived certificates), is left out;
 * - a certificate is renewed when `renewBefore` of its validity is left (0.33: two thirds into it, as ACME
 *   Renewal Information suggests); the new certificate is valid as long as the one it replaces, or the
 *   schedule's maximum at the renewal date when shorter; it is renewed the same way, until the period ends;
 * - a renewal needs a fresh domain validation when the last one is older than the reuse period in force;
 * - renewals before the period starts are replayed (they set the chain's dates) but not counted;
 * - how a certificate is renewed today (coverage.ts) does not change over the period.
 */
export interface SimCertificate {
  id: string;
  dn: string;
  module: string | null;
  autoRenew: boolean;
  /** An automation policy covers it (coverage.ts). */
  coveredByPolicy?: boolean;
  /** Epoch ms, as the inventory stores them. */
  notBefore: number;
  notAfter: number;
}

export interface SimulationOptions {
  schedule: readonly ValidityStep[];
  /** First simulated year (from 1 January, 00:00 UTC)… */
  fromYear: number;
  /** …and how many years. */
  years: number;
  /** Share of the validity left at renewal, in (0, 1). */
  renewBefore: number;
}

export type PathCounts = Record<AutomationPath, number>;

export interface Peak {
  /** The busiest day (YYYY-MM-DD) or month (YYYY-MM), the earliest of ties; null when nothing is renewed. */
  at: string | null;
  renewals: number;
}

export interface YearFigures {
  year: number;
  /** Renewals in January … December. */
  months: number[];
  renewals: number;
  renewalsByPath: PathCounts;
  /** Renewals of certificates no automation covers: done by hand, as things are today. */
  manualRenewals: number;
  /** Renewals that need a fresh domain validation (the last one is past the reuse period). */
  dcvValidations: number;
  /** Simulated certificates live during the year, and those of them no automation covers. */
  certificates: number;
  uncoveredCertificates: number;
  peakDay: Peak;
  peakMonth: Peak;
}

export interface SimulationResult {
  renewBefore: number;
  period: { fromYear: number; years: number; start: string; end: string };
  certificates: { simulated: number; byPath: PathCounts; expiredAtStart: number; shortLived: number };
  years: YearFigures[];
  peakDay: Peak;
  peakMonth: Peak;
  /** The simulated certificates no automation covers. */
  uncovered: { id: string; dn: string; module: string | null }[];
}

/** Under a day of validity a certificate is short-lived: automated by nature, and days are the unit here. */
export const MIN_LIFETIME_MS = DAY_MS;

const zeroPaths = (): PathCounts => ({ ari: 0, protocol: 0, 'auto-renew': 0, manual: 0 });
const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Accumulates certificates one at a time (the inventory is read page by page), then sums up. */
export class RenewalSimulation {
  readonly start: number;
  readonly end: number;
  private readonly yearStarts: number[];
  private readonly perDay: Int32Array;
  private readonly monthOfDay: Uint16Array;
  private readonly byPath: PathCounts[];
  private readonly dcv: number[];
  private readonly live: number[];
  private readonly liveUncovered: number[];
  private readonly uncovered: SimulationResult['uncovered'] = [];
  private readonly certificates = { simulated: 0, byPath: zeroPaths(), expiredAtStart: 0, shortLived: 0 };

  constructor(private readonly options: SimulationOptions) {
    const { fromYear, years } = options;
    this.yearStarts = Array.from({ length: years + 1 }, (_, i) => Date.UTC(fromYear + i, 0, 1));
    this.start = this.yearStarts[0]!;
    this.end = this.yearStarts[years]!;
    const days = (this.end - this.start) / DAY_MS;
    this.perDay = new Int32Array(days);
    this.monthOfDay = new Uint16Array(days);
    for (let d = 0; d < days; d++) {
      const date = new Date(this.start + d * DAY_MS);
      this.monthOfDay[d] = (date.getUTCFullYear() - fromYear) * 12 + date.getUTCMonth();
    }
    this.byPath = Array.from({ length: years }, zeroPaths);
    this.dcv = new Array<number>(years).fill(0);
    this.live = new Array<number>(years).fill(0);
    this.liveUncovered = new Array<number>(years).fill(0);
  }

  add(cert: SimCertificate): void {
    // notAfter is the last valid second: a certificate still valid at the start ends after it.
    if (cert.notAfter < this.start) {
      this.certificates.expiredAtStart++;
      return;
    }
    if (validityMs(cert.notBefore, cert.notAfter) < MIN_LIFETIME_MS) {
      this.certificates.shortLived++;
      return;
    }
    const path = automationPath(cert);
    this.certificates.simulated++;
    this.certificates.byPath[path]++;
    if (path === 'manual') this.uncovered.push({ id: cert.id, dn: cert.dn, module: cert.module });
    // Live during every year that ends after its issuance: the chain of renewals runs past the period's end.
    for (let y = 0; y < this.options.years; y++) {
      if (cert.notBefore >= this.yearStarts[y + 1]!) break;
      this.live[y]!++;
      if (path === 'manual') this.liveUncovered[y]!++;
    }
    for (const renewal of renewalsOf(cert, this.options.schedule, { renewBefore: this.options.renewBefore, until: this.end })) {
      if (renewal.at < this.start) continue;
      const day = Math.floor((renewal.at - this.start) / DAY_MS);
      this.perDay[day]!++;
      const year = Math.floor(this.monthOfDay[day]! / 12);
      this.byPath[year]![path]++;
      if (renewal.freshDcv) this.dcv[year]!++;
    }
  }

  result(): SimulationResult {
    const { fromYear, years, renewBefore } = this.options;
    const perMonth = new Array<number>(years * 12).fill(0);
    this.perDay.forEach((n, d) => (perMonth[this.monthOfDay[d]!]! += n));
    const monthName = (m: number): string => `${fromYear + Math.floor(m / 12)}-${String((m % 12) + 1).padStart(2, '0')}`;
    const dayPeak = (from: number, to: number): Peak => {
      let best = -1;
      for (let d = from; d < to; d++) if (this.perDay[d]! > (best < 0 ? 0 : this.perDay[best]!)) best = d;
      return { at: best < 0 ? null : isoDay(this.start + best * DAY_MS), renewals: best < 0 ? 0 : this.perDay[best]! };
    };
    const monthPeak = (from: number, to: number): Peak => {
      let best = -1;
      for (let m = from; m < to; m++) if (perMonth[m]! > (best < 0 ? 0 : perMonth[best]!)) best = m;
      return { at: best < 0 ? null : monthName(best), renewals: best < 0 ? 0 : perMonth[best]! };
    };
    const dayOf = (ms: number): number => (ms - this.start) / DAY_MS;
    const figures: YearFigures[] = this.byPath.map((renewalsByPath, y) => {
      const months = perMonth.slice(y * 12, y * 12 + 12);
      return {
        year: fromYear + y,
        months,
        renewals: months.reduce((a, b) => a + b, 0),
        renewalsByPath,
        manualRenewals: renewalsByPath.manual,
        dcvValidations: this.dcv[y]!,
        certificates: this.live[y]!,
        uncoveredCertificates: this.liveUncovered[y]!,
        peakDay: dayPeak(dayOf(this.yearStarts[y]!), dayOf(this.yearStarts[y + 1]!)),
        peakMonth: monthPeak(y * 12, y * 12 + 12),
      };
    });
    return {
      renewBefore,
      period: { fromYear, years, start: new Date(this.start).toISOString(), end: new Date(this.end).toISOString() },
      certificates: { ...this.certificates, byPath: { ...this.certificates.byPath } },
      years: figures,
      peakDay: dayPeak(0, this.perDay.length),
      peakMonth: monthPeak(0, perMonth.length),
      uncovered: [...this.uncovered],
    };
  }
}

/** The whole simulation over a list of certificates (the pure form of what the CLI runs page by page). */
export function simulateRenewals(certificates: Iterable<SimCertificate>, options: SimulationOptions): SimulationResult {
  const simulation = new RenewalSimulation(options);
  for (const cert of certificates) simulation.add(cert);
  return simulation.result();
}
