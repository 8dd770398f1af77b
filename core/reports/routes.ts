import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors/index.js';
import { SEARCH_CERTIFICATES } from '../inventory/search/visibility.js';
import { reportLink } from './link.js';
import type { Reports } from './reports.js';
import type { ReportRecord } from './store.js';

/*
 * Who may do what. A report is the CSV of a query over the whole tenant (its task was saved by someone holding
 * search:certificates with no filter, core/scheduler/tasks/routes.ts):
 * - its content (GET /reports/:uuid, the link a mail carries) and the reports of one task (GET
 *   /api/v1/reports/:reportName) are webra routes for a signed-in caller holding that same unfiltered
 *   permission: the uuid names a report, it is not a credential, so a forwarded or leaked mail gives nothing;
 * - the list of every report and their deletion are configuration routes (configuration:reports:read|write):
 *   metadata only, never content.
 */
const SEARCH = { permission: SEARCH_CERTIFICATES } as const;
const READ = { permission: 'configuration:reports:read' } as const;
const WRITE = { permission: 'configuration:reports:write' } as const;
const tags = ['reports'];

export const reportSchema = {
  $id: 'Report',
  type: 'object',
  required: ['_id', 'uuid', 'name', 'fileName', 'contentType', 'size', 'rows', 'createdAt', 'expiresAt', 'link'],
  properties: {
    _id: { type: 'string', description: 'The uuid' },
    uuid: { type: 'string' },
    name: { type: 'string', description: 'The report task that made it' },
    fileName: { type: 'string' },
    contentType: { type: 'string', description: 'text/csv, or application/gzip for a compressed report' },
    size: { type: 'integer', description: 'Bytes stored' },
    rows: { type: 'integer', description: 'Certificates in the CSV' },
    createdAt: { type: 'integer', description: 'epoch ms' },
    expiresAt: { type: 'integer', description: 'epoch ms; the report is deleted then' },
    link: { type: 'string', description: 'GET it to download the CSV (sign-in required)' },
  },
} as const;

const list = { 200: { type: 'array', items: { $ref: 'Report#' } } } as const;
const uuidParams = { type: 'object', required: ['uuid'], properties: { uuid: { type: 'string', maxLength: 64 } } } as const;
const nameParams = { type: 'object', required: ['reportName'], properties: { reportName: { type: 'string', maxLength: 191 } } } as const;

/** The reports cover the whole tenant: a search permission narrowed by a filter does not admit them. */
function requireUnfiltered(request: FastifyRequest): void {
  if (request.principal?.permissions.filtersFor(SEARCH_CERTIFICATES) !== null) {
    throw new ProblemError('SEC-PERM-001', { message: `A report holds certificates of the whole inventory: reading it needs ${SEARCH_CERTIFICATES} with no filter` });
  }
}

const notFound = (uuid: string) => new ProblemError('REPORT-003', { detail: `no report ${uuid.slice(0, 64)}` });

export function reportRoutes(app: FastifyInstance, reports: Reports): void {
  app.addSchema(reportSchema);
  const view = (r: ReportRecord) => ({
    _id: r.uuid,
    uuid: r.uuid,
    name: r.name,
    fileName: r.fileName,
    contentType: r.contentType,
    size: r.size,
    rows: r.rows,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    link: reportLink(reports.config, r.uuid),
  });

  app.get('/api/v1/reports/', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List the stored CSV reports (metadata, newest first)', response: list },
    handler: async (request) => (await reports.store.list(request.tenant, reports.now())).map(view),
  });

  app.get<{ Params: { reportName: string } }>('/api/v1/reports/:reportName', {
    config: { capability: 'webra', access: SEARCH },
    schema: { tags, summary: 'List the stored reports of one report task (metadata, newest first)', params: nameParams, response: list },
    handler: async (request) => {
      requireUnfiltered(request);
      return (await reports.store.list(request.tenant, reports.now(), request.params.reportName)).map(view);
    },
  });

  app.get<{ Params: { uuid: string } }>('/reports/:uuid', {
    config: { capability: 'webra', access: SEARCH },
    schema: { tags, summary: 'Download a report: its CSV (text/csv, or application/gzip when compressed)', params: uuidParams },
    handler: async (request, reply) => {
      requireUnfiltered(request);
      const found = await reports.content(request.tenant, request.params.uuid);
      if (!found) throw notFound(request.params.uuid);
      const { record, stream } = found;
      // fileName is made of [0-9A-Za-z._-] only (the task's fileName pattern, or its sanitized name): safe to quote.
      return reply
        .header('content-type', record.contentType === 'text/csv' ? 'text/csv; charset=utf-8' : record.contentType)
        .header('content-disposition', `attachment; filename="${record.fileName}"`)
        .header('content-length', String(record.size))
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(stream, { objectMode: false }));
    },
  });

  app.delete<{ Params: { uuid: string } }>('/api/v1/reports/:uuid', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete a report: its metadata and its stored file', params: uuidParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      if (!(await reports.remove(request.tenant, request.params.uuid))) throw notFound(request.params.uuid);
      return reply.code(204).send();
    },
  });
}
