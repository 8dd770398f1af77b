import type { SimulationResult, YearFigures } from './simulate.js';

export const FORMATS = ['table', 'csv', 'json'] as const;
export type Format = (typeof FORMATS)[number];

/** What the command prints, besides the figures: how they were made. */
export interface ReportContext {
  schedule: string;
  query: string | null;
}

/** The table lists this many uncovered certificates; the JSON lists them all. */
const UNCOVERED_SHOWN = 20;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export function formatReport(result: SimulationResult, context: ReportContext, format: Format): string {
  if (format === 'json') return `${JSON.stringify({ schedule: context.schedule, query: context.query, ...result }, null, 2)}\n`;
  if (format === 'csv') return csv(result);
  return table(result, context);
}

/** One row per year, for a spreadsheet or a plot; the list of uncovered certificates is in the JSON only. */
const CSV_COLUMNS: readonly [string, (y: YearFigures) => string | number][] = [
  ['year', (y) => y.year],
  ...MONTHS.map((m, i) => [m, (y: YearFigures) => y.months[i]!] as [string, (y: YearFigures) => number]),
  ['renewals', (y) => y.renewals],
  ['ari_renewals', (y) => y.renewalsByPath.ari],
  ['protocol_renewals', (y) => y.renewalsByPath.protocol],
  ['auto_renew_renewals', (y) => y.renewalsByPath['auto-renew']],
  ['manual_renewals', (y) => y.manualRenewals],
  ['dcv_validations', (y) => y.dcvValidations],
  ['certificates', (y) => y.certificates],
  ['uncovered_certificates', (y) => y.uncoveredCertificates],
  ['peak_day', (y) => y.peakDay.at ?? ''],
  ['peak_day_renewals', (y) => y.peakDay.renewals],
  ['peak_month', (y) => y.peakMonth.at ?? ''],
  ['peak_month_renewals', (y) => y.peakMonth.renewals],
];

function csv(result: SimulationResult): string {
  const lines = [CSV_COLUMNS.map(([name]) => name).join(',')];
  for (const y of result.years) lines.push(CSV_COLUMNS.map(([, value]) => String(value(y))).join(','));
  return `${lines.join('\n')}\n`;
}

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  // Numbers right-aligned, the first column (labels) left-aligned.
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd()).join('\n');
}

function table(result: SimulationResult, context: ReportContext): string {
  const { period, certificates: c } = result;
  const peak = (p: { at: string | null; renewals: number }): string => (p.at === null ? '-' : `${p.renewals} (${p.at})`);
  const out = [
    `Renewals under the ${context.schedule} schedule, ${period.fromYear}–${period.fromYear + period.years - 1} (UTC), each certificate renewed when ${Math.round(result.renewBefore * 100)}% of its validity is left${context.query ? `; query: ${context.query}` : ''}`,
    `${c.simulated} certificates simulated: ${c.byPath.ari} ACME (ARI-capable), ${c.byPath.protocol} other protocols, ${c.byPath['auto-renew']} auto-renew, ${c.byPath.manual} no automation (renewed by hand)` +
      (c.shortLived ? `; ${c.shortLived} short-lived (under a day) left out` : ''),
    '',
    'Renewals per month',
    columns([['year', ...MONTHS, 'total'], ...result.years.map((y) => [String(y.year), ...y.months.map(String), String(y.renewals)])]),
    '',
    'Per year',
    columns([
      ['year', 'certificates', 'no automation', 'by hand', 'ACME', 'protocols', 'auto-renew', 'fresh DCV', 'peak/day (date)', 'peak/month (month)'],
      ...result.years.map((y) => [
        String(y.year),
        String(y.certificates),
        String(y.uncoveredCertificates),
        String(y.manualRenewals),
        String(y.renewalsByPath.ari),
        String(y.renewalsByPath.protocol),
        String(y.renewalsByPath['auto-renew']),
        String(y.dcvValidations),
        peak(y.peakDay),
        peak(y.peakMonth),
      ]),
    ]),
    '',
    result.peakDay.at === null ? 'Peak rate needed: no renewal in the period' : `Peak rate needed: ${peak(result.peakDay)} renewals a day, ${peak(result.peakMonth)} a month`,
  ];
  if (result.uncovered.length) {
    out.push('', `No automation covers ${result.uncovered.length} certificates:`);
    for (const u of result.uncovered.slice(0, UNCOVERED_SHOWN)) out.push(`  ${u.id}  ${u.module ?? '-'}  ${u.dn}`);
    if (result.uncovered.length > UNCOVERED_SHOWN) out.push(`  … and ${result.uncovered.length - UNCOVERED_SHOWN} more (--format json lists them all)`);
  }
  return `${out.join('\n')}\n`;
}
