import { cpus } from 'node:os';

/** Numbers as the tables print them: thousands separated, a fixed number of decimals. */
export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Share of CPU time (all cores) not idle during the next `ms` milliseconds: a busy machine skews ratios. */
export async function cpuBusy(ms: number): Promise<number> {
  const sample = (): { idle: number; total: number } =>
    cpus().reduce(
      (acc, c) => {
        const t = c.times;
        return { idle: acc.idle + t.idle, total: acc.total + t.user + t.nice + t.sys + t.idle + t.irq };
      },
      { idle: 0, total: 0 },
    );
  const before = sample();
  await new Promise((r) => setTimeout(r, ms));
  const after = sample();
  const total = after.total - before.total;
  return total > 0 ? 1 - (after.idle - before.idle) / total : 0;
}
