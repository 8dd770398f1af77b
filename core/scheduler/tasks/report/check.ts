import type { Knex } from 'knex';
import { ProblemError } from '../../../errors/index.js';
import { parseFiniteDuration } from '../../../http/finite-duration.js';
import { CERTIFICATE_LANGUAGE } from '../../../inventory/language.js';
import { projectionOf } from '../../../inventory/search/projection.js';
import { sortKeysOf } from '../../../inventory/search/sort.js';
import { parseQuery } from '../../../query/index.js';
import { DEFAULT_REPORT_RETENTION, type ReportParameters, type ReportRecipient } from './parameters.js';

/** An address, or `Name <address>`: what nodemailer and SMTP take as a sender or recipient. */
export const ADDRESS = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+$/;
const SENDER = /^(?:[^<>\r\n]*<([^<>]+)>|([^<>]+))$/;
/** A header field name (RFC 5322 ftext), never one the message itself sets. */
const HEADER_NAME = /^[!-9;-~]+$/;
const RESERVED_HEADERS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'sender', 'reply-to', 'date', 'message-id', 'content-type', 'content-transfer-encoding', 'mime-version']);

/** Whether the parameters can run, beyond their JSON Schema: a message naming the field, or null. */
export async function checkReport(knex: Knex, tenant: string, p: ReportParameters): Promise<string | null> {
  const retention = retentionProblem(p);
  if (retention) return retention;
  if (p.hqlType !== 'hcql') return `hqlType: "${p.hqlType}" is not supported: report tasks query certificates (hcql)`;

  const sender = SENDER.exec(p.from.trim());
  if (!sender || !ADDRESS.test((sender[1] ?? sender[2] ?? '').trim())) return `from: "${p.from}" is not an email address`;
  for (const [field, list] of [['recipients', p.recipients], ['cc', p.cc], ['bcc', p.bcc]] as const) {
    for (const [i, r] of (list ?? []).entries()) {
      const problem = await checkRecipient(knex, tenant, r);
      if (problem) return `${field}[${i}]: ${problem}`;
    }
  }
  for (const [i, h] of (p.headers ?? []).entries()) {
    if (!HEADER_NAME.test(h.key) || RESERVED_HEADERS.has(h.key.toLowerCase())) return `headers[${i}].key: "${h.key}" is not a header this report may set`;
    if (/[\r\n]/.test(h.value)) return `headers[${i}].value: must be one line`;
  }
  if (/[\r\n]/.test(p.title)) return 'title: must be one line';

  // The query, columns and order are checked now, as the CSV export checks them, not found broken at 8 am.
  try {
    parseQuery(p.hqlQuery, CERTIFICATE_LANGUAGE);
  } catch (err) {
    return `hqlQuery: ${queryProblem(err)}`;
  }
  try {
    if (projectionOf(p.hqlFields)?.has('permissions')) return 'hqlFields: permissions are answered by searches, not in CSV reports';
  } catch (err) {
    return `hqlFields: ${queryProblem(err)}`;
  }
  try {
    sortKeysOf(CERTIFICATE_LANGUAGE, p.hqlSortedBy ?? undefined);
  } catch (err) {
    return `hqlSortedBy: ${queryProblem(err)}`;
  }
  return null;
}

/** A link report is kept a while (at least a minute, at most ten years); an attachment is not kept at all. */
const MIN_RETENTION_MS = 60_000;
const MAX_RETENTION_MS = 3650 * 86_400_000;

/** How long a link report is kept, in ms (retentionPeriod, else the default); null when `p` is no link report. */
export function retentionMs(p: ReportParameters): number | null {
  if (p.reportType !== 'link_email') return null;
  return parseFiniteDuration(p.retentionPeriod ?? DEFAULT_REPORT_RETENTION);
}

function retentionProblem(p: ReportParameters): string | null {
  const given = p.retentionPeriod !== undefined && p.retentionPeriod !== null;
  if (p.reportType !== 'link_email') return given ? 'retentionPeriod: applies to link_email reports only (an attachment is not kept)' : null;
  const ms = retentionMs(p);
  if (ms === null) return `retentionPeriod: "${p.retentionPeriod}" is not a duration (e.g. "7 days", "12 hours")`;
  if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) return 'retentionPeriod: must be between 1 minute and 3650 days';
  return null;
}

function queryProblem(err: unknown): string {
  if (err instanceof ProblemError) return err.detail ? `${err.message} (${err.detail})` : err.message;
  throw err;
}

/** Horizon's rules: static names an address and no team; team_* name an existing team and no address. */
async function checkRecipient(knex: Knex, tenant: string, r: ReportRecipient): Promise<string | null> {
  if (r.type === 'static') {
    if (r.team) return 'a static recipient has no team';
    return r.email && ADDRESS.test(r.email) ? null : `a static recipient needs an email address (got ${JSON.stringify(r.email ?? null)})`;
  }
  if (r.email) return `a ${r.type} recipient has no email (its team's addresses are used)`;
  if (!r.team) return `a ${r.type} recipient needs a team`;
  const team = (await knex('security_teams').where({ tenant, name: r.team }).first('id')) as { id: string } | undefined;
  return team ? null : `team "${r.team}" does not exist`;
}
