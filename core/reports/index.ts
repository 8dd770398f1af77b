/** CSV reports of link report tasks (issue 30 item 3): stored files, their routes and their purge. */
import type { FastifyInstance } from 'fastify';
import type { CoreServices } from '../services.js';
import { registerReportPurge } from './jobs.js';
import type { Reports } from './reports.js';
import { reportRoutes } from './routes.js';

export { Reports, type ReportsDeps, type PublishInput } from './reports.js';
export type { ReportRecord } from './store.js';
export { REPORT_PURGE_JOB } from './jobs.js';
export { reportLink } from './link.js';

/** Mounts the report routes and the purge job of a Reports service (created before, for the report task type). */
export async function registerReports(app: FastifyInstance, services: CoreServices, reports: Reports): Promise<void> {
  reportRoutes(app, reports);
  await registerReportPurge(services, reports);
}
