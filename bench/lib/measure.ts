import { readFileSync } from 'node:fs';
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

/**
 * CPU time (ms) a process has used so far: all its threads, and its main thread alone (the event loop, which
 * a Node server saturates first). Linux /proc only; undefined elsewhere or once the process is gone. Steadier
 * than a rate on a shared machine, where another tenant's load slows the clock but not the work.
 */
export function processCpuMs(pid: number): { all: number; main: number } | undefined {
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (USER_HZ, 100 on Linux).
  const ticks = (path: string): number => {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  try {
    return { all: ticks(`/proc/${pid}/stat`) * 10, main: ticks(`/proc/${pid}/task/${pid}/stat`) * 10 };
  } catch {
    return undefined;
  }
}
