import type { Knex } from 'knex';
import { dayOf, type AnalyticsSource } from './sources.js';

/**
 * What GET /api/v1/analytics/… answers: the tenant's counts, whole or within [from, to]; beside these,
 * one member per dimension (`byCode`, `byStatus`, `byModule` or `byCampaign`): value → count.
 */
export interface AnalyticsAnswer extends Record<string, unknown> {
  total: number;
  byDay: { day: number; total: number }[];
  /** When the counts were last brought up to date (epoch ms); null before the first update. */
  lastUpdate: number | null;
}

const byName = (dimension: string): string => `by${dimension[0]!.toUpperCase()}${dimension.slice(1)}`;

/**
 * Reads the precomputed counts of a tenant: sums over the counts table only (a few rows per day and
 * code), so the cost does not grow with the number of events. `from`/`to` (epoch ms) select whole UTC
 * days: the days containing them, inclusive.
 */
export async function readAnalytics(
  knex: Knex,
  source: AnalyticsSource,
  tenant: string,
  range: { from?: number; to?: number },
  lastUpdate: number | null,
): Promise<AnalyticsAnswer> {
  const base = (): Knex.QueryBuilder => {
    const q = knex(source.table).where('tenant', tenant);
    if (range.from !== undefined) q.andWhere('day', '>=', dayOf(range.from));
    if (range.to !== undefined) q.andWhere('day', '<=', dayOf(range.to));
    return q;
  };
  const days = (await base().select('day').sum({ n: 'total' }).groupBy('day').orderBy('day')) as { day: number | string; n: number | string }[];
  const answer: AnalyticsAnswer = {
    total: days.reduce((s, d) => s + Number(d.n), 0),
    byDay: days.map((d) => ({ day: Number(d.day), total: Number(d.n) })),
    lastUpdate,
  };
  for (const dimension of source.dimensions) {
    const rows = (await base().select({ v: dimension }).sum({ n: 'total' }).groupBy(dimension).orderBy(dimension)) as { v: string; n: number | string }[];
    answer[byName(dimension)] = Object.fromEntries(rows.map((r) => [r.v, Number(r.n)]));
  }
  return answer;
}

export const dimensionProperty = byName;
