import type { Logger } from 'pino';
import type { Scheduler } from '../scheduler/scheduler.js';
import { schedulerCron } from '../scheduler/tasks/cron.js';
import type { Datasource } from './model.js';
import type { Datasources } from './service.js';

/** A datasource's scheduled fetch (data: tenant, datasource: cancelling matches on both). */
export const REFRESH_JOB = 'datasource-refresh';

/**
 * Scheduled fetches as Agenda jobs in the platform database: one repeating job per datasource that has a
 * `refresh` CRON (UTC), so several nodes never fetch it twice at once; it follows every change of the
 * datasource (afterChange).
 */
export class DatasourceJobs {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly datasources: Datasources,
    private readonly logger: Logger,
  ) {}

  define(): void {
    this.scheduler.define<{ tenant: string; datasource: string }>(REFRESH_JOB, async ({ tenant, data }) => {
      const d = await this.datasources.definition(tenant, data.datasource);
      if (!d) return;
      const { status } = await this.datasources.refresh(tenant, d);
      this.logger.info({ tenant, datasource: d.name, status: status.status, records: status.records }, 'datasource refreshed on schedule');
    });
  }

  /** The datasource's schedule after a change: a repeating job on its CRON, or none. */
  async reschedule(tenant: string, name: string, d: Datasource | null): Promise<void> {
    await this.scheduler.cancel(REFRESH_JOB, { tenant, datasource: name });
    if (!d || typeof d.refresh !== 'string' || d.refresh.trim() === '') return;
    const cron = schedulerCron(d.refresh);
    if (cron.ok) await this.scheduler.every(cron.cron, REFRESH_JOB, { tenant, datasource: name }, { tenant, timezone: 'UTC' });
  }
}
