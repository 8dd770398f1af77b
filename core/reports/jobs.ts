import type { CoreServices } from '../services.js';
import type { Reports } from './reports.js';

/** The job that deletes expired reports (their file, then their row). */
export const REPORT_PURGE_JOB = 'reports.purge-expired';
/** Expired reports already answer 404: the purge only frees their storage, hourly is enough. */
const PURGE_EVERY_MS = 60 * 60_000;

/** Defines the purge job, and puts it in the schedule on nodes that run jobs. */
export async function registerReportPurge(services: CoreServices, reports: Reports): Promise<void> {
  services.scheduler.define(
    REPORT_PURGE_JOB,
    async ({ logger }) => {
      const purged = await reports.purgeExpired();
      if (purged > 0) logger.info({ purged }, 'expired reports deleted');
    },
    { concurrency: 1 },
  );
  if (services.runsJobs) await services.scheduler.every(PURGE_EVERY_MS, REPORT_PURGE_JOB);
}
