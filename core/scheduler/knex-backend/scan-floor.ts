/**
 * Where a due claim's index scan may start, per job name: a lower bound on the next_run_at of every job of that
 * name this process knows to be lockable (InnoDB only; see claimInOneStatement).
 *
 * Why: claiming a job changes its locked_at, a column of scheduler_jobs_due, so InnoDB leaves the job's old
 * entry in that index delete-marked until its purge threads remove it, and they fall behind while jobs are
 * claimed by the hundred per second (a history of 1,000–2,000 transactions measured with Agenda at 20
 * workers). Those entries sit exactly where the due scan starts (the earliest next_run_at), and a locking read
 * checks each one against the row in the clustered index before skipping it: with the purge lagging, every
 * claim walked past all the jobs claimed before it, a quarter of the server's CPU in the benchmark. Starting the
 * scan at the next_run_at of the last job claimed skips them.
 *
 * The floor is kept a lower bound: a write of this process that may make a job lockable (a save, a finished
 * run of a repeating job, an unlock, an enable) lowers it to that job's next_run_at, or drops every floor when
 * that is not known, including for scans under way when it happened. What no process-local record can see (a
 * job made due in the past or unlocked by another node, or one skipped by SKIP LOCKED because another
 * transaction held it at that moment, which then left it lockable) may lie below the floor; so a floor is
 * used for FLOOR_TTL_MS at most, and a bounded scan that finds nothing is followed by a full one: such a job
 * may run after later-due jobs of a backlog, by at most FLOOR_TTL_MS, and is never missed.
 */
export const FLOOR_TTL_MS = 1000;

interface Floor {
  from: number;
  expires: number;
}

/** One claim under way: the floor it scanned from (if any) and the lowest next_run_at written meanwhile. */
export interface FloorScan {
  readonly name: string;
  readonly floor: Floor | undefined;
  /** floor.from when the claim began (a later change means another claim or a write moved it). */
  readonly from: number | undefined;
  low: number;
}

export class ScanFloors {
  private readonly floors = new Map<string, Floor>();
  private readonly scans = new Set<FloorScan>();

  /**
   * Starts a claim of `name`: its scan may start at the returned `from` (undefined: at the start of the due
   * range, always so when `full`).
   */
  begin(name: string, full = false, now = Date.now()): FloorScan {
    let floor = full ? undefined : this.floors.get(name);
    if (floor && now >= floor.expires) {
      this.floors.delete(name);
      floor = undefined;
    }
    const scan: FloorScan = { name, floor, from: floor?.from, low: Infinity };
    this.scans.add(scan);
    return scan;
  }

  /** Ends a claim; `claimed` is the next_run_at of the job it locked (undefined: none). */
  end(scan: FloorScan, claimed: number | undefined, now = Date.now()): void {
    this.scans.delete(scan);
    const { floor } = scan;
    if (claimed === undefined) {
      // A full scan found nothing lockable: no floor is worth keeping (an idle poll then costs one scan, not two).
      if (!floor) this.floors.delete(scan.name);
      return;
    }
    if (floor && scan.from !== undefined && claimed >= scan.from) {
      // A bounded scan: nothing lockable was left between the floor and the job it took. Raise the floor
      // only if nothing moved it meanwhile (a write lowering it must win; another claim raising it is fine).
      if (floor.from === scan.from && this.floors.get(scan.name) === floor) floor.from = claimed;
      return;
    }
    // A full scan (or one that found a job below a stale floor): a new floor, valid for FLOOR_TTL_MS.
    const from = Math.min(claimed, scan.low);
    if (from !== -Infinity) this.floors.set(scan.name, { from, expires: now + FLOOR_TTL_MS });
  }

  /** A job of `name` may have become lockable with this next_run_at (null: not due-able, nothing to do). */
  lowered(name: string, nextRunAt: number | null): void {
    if (nextRunAt === null) return;
    const floor = this.floors.get(name);
    if (floor && nextRunAt < floor.from) floor.from = nextRunAt;
    for (const scan of this.scans) if (scan.name === name && nextRunAt < scan.low) scan.low = nextRunAt;
  }

  /** Jobs may have become lockable anywhere (ids only known): every floor goes, and no scan under way sets one. */
  reset(): void {
    this.floors.clear();
    for (const scan of this.scans) scan.low = -Infinity;
  }
}
