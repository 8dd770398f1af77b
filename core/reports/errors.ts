import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Codes of CSV reports (/api/v1/reports/, /reports/:uuid; the spec shows none). A report that expired, was
 * deleted or never existed answers the same 404: the answer does not tell which.
 */
export const REPORT_ERRORS = {
  'REPORT-003': { status: 404, title: 'Report not found', message: 'No report has this identifier (it may have expired or been deleted)' },
} as const satisfies Record<string, CatalogueEntry>;
