import { gzipSync } from 'node:zlib';
import type { Knex } from 'knex';
import type { CertwrightConfig } from '../../../config/index.js';
import type { Reports } from '../../../reports/index.js';
import type { CheckedTaskType } from '../checked-type.js';
import { checkReport, retentionMs } from './check.js';
import { reportCsv } from './csv.js';
import { linkMessage } from './link.js';
import { smtpTransport } from './mail.js';
import { REPORT_PARAMETERS_SCHEMA, type ReportParameters } from './parameters.js';
import { addressesOf } from './recipients.js';

export interface ReportDeps {
  knex: Knex;
  clock: () => number;
  config: CertwrightConfig;
  /** Where link_email reports are stored (core/reports). */
  reports: Reports;
}

/** The attachment's (or stored report's) name: fileName (`.csv` added unless it ends so), else the task's name; `.gz` when compressed. */
function attachmentName(taskName: string, p: ReportParameters): string {
  const base = p.fileName || taskName.replace(/[^0-9a-zA-Z\-_.]/g, '_');
  const csv = /\.csv$/i.test(base) ? base : `${base}.csv`;
  return p.compressCsv ? `${csv}.gz` : csv;
}

/**
 * The `report` task type (Horizon's report task): at each run, the certificates its HCQL query matches, as CSV,
 * mailed to its recipients through the platform's SMTP server: attached (attachment_email), or stored as a
 * report that the message links to (link_email; kept retentionPeriod, then purged by core/reports).
 */
export function reportTaskType(deps: ReportDeps): CheckedTaskType {
  return {
    category: 'reporting',
    description: 'Mails the certificates an HCQL query matches as CSV: attached (attachment_email) or as a link to a stored report (link_email) (Horizon report task)',
    parametersSchema: REPORT_PARAMETERS_SCHEMA as unknown as Record<string, unknown>,
    check: (tenant, parameters, db) => checkReport(db ?? deps.knex, tenant, parameters as unknown as ReportParameters),
    async run({ tenant, taskName, parameters }) {
      const p = parameters as unknown as ReportParameters;
      // Saved before a check existed, or a Certwright client's parameters: refuse to run what would not be saved.
      const problem = await checkReport(deps.knex, tenant, p);
      if (problem) return { status: 'failure', summary: problem };
      const smtp = smtpTransport(deps.config);
      if ('missing' in smtp) return { status: 'failure', summary: smtp.missing };
      const lists = await Promise.all([p.recipients, p.cc, p.bcc].map((list) => addressesOf(deps.knex, tenant, list)));
      // One copy per address: a team member also named in `recipients` is not sent it again in bcc.
      const seen = new Set<string>();
      const [to, cc, bcc] = lists.map((list) => list.filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase())));
      const count = seen.size;
      if (count === 0) return { status: 'failure', summary: 'no recipient address: every recipient resolved to none (teams without contact or members with email?)' };
      const { csv, rows } = await reportCsv(deps.knex, deps.clock, tenant, p);
      const filename = attachmentName(taskName, p);
      const matched = `${rows} certificate(s) match ${p.hqlQuery ? `the query ${p.hqlQuery}` : 'no query (every certificate)'}`;
      const content = p.compressCsv ? gzipSync(csv) : Buffer.from(csv, 'utf8');
      // A link report is stored before the message goes: the link it carries works when it arrives.
      const stored =
        p.reportType === 'link_email'
          ? await deps.reports.publish({ tenant, name: taskName, fileName: filename, contentType: p.compressCsv ? 'application/gzip' : 'text/csv', content, rows, retentionMs: retentionMs(p)! })
          : null;
      const text = p.body ?? `The report "${taskName}" is attached: ${matched}.`;
      const message = stored
        ? linkMessage(p, taskName, matched, stored.link, stored.record.expiresAt)
        : {
            ...(p.isHtml && p.body ? { html: p.body } : { text }),
            attachments: [{ filename, content, contentType: p.compressCsv ? 'application/gzip' : 'text/csv; charset=utf-8' }],
          };
      const info = await smtp.transport.sendMail({
        from: p.from,
        ...(to!.length ? { to } : {}),
        ...(cc!.length ? { cc } : {}),
        ...(bcc!.length ? { bcc } : {}),
        subject: p.title,
        ...message,
        headers: Object.fromEntries((p.headers ?? []).map((h) => [h.key, h.value])),
      });
      const refused = (info.rejected ?? []).map(String);
      const sent = `sent to ${count - refused.length} recipient(s)${refused.length ? `; refused: ${refused.join(', ')}` : ''}`;
      if (stored) {
        const { record, link } = stored;
        return {
          status: 'success',
          summary: `report of ${rows} certificate(s) stored (${record.uuid}, until ${new Date(record.expiresAt).toISOString()}), its link ${sent}`,
          details: { rows, report: record.uuid, link, fileName: filename, expiresAt: record.expiresAt, recipients: count, refused },
        };
      }
      return { status: 'success', summary: `report of ${rows} certificate(s) ${sent}`, details: { rows, attachment: filename, recipients: count, refused } };
    },
  };
}
