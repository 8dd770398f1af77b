/**
 * The parameters of a `report` task: the fields of Horizon's report scheduled task (its clients send them flat
 * beside name/cron/enabled, horizon.ts maps them here), under Horizon's names so that both forms read alike.
 */

export const REPORT_TASK = 'report';

export interface ReportRecipient {
  type: 'static' | 'team_contact' | 'team_manager' | 'team_members';
  email?: string | null;
  team?: string | null;
}

export interface ReportParameters {
  reportType: 'attachment_email' | 'link_email';
  recipients: ReportRecipient[];
  cc?: ReportRecipient[] | null;
  bcc?: ReportRecipient[] | null;
  from: string;
  title: string;
  body?: string | null;
  isHtml: boolean;
  fileName?: string | null;
  hqlType: 'hcql' | 'hpql' | 'hrql' | 'heql' | 'hdql';
  hqlQuery?: string | null;
  hqlFields?: string[] | null;
  hqlSortedBy?: { element: string; order: 'Asc' | 'Desc' | 'KeyAsc' | 'KeyDesc' }[] | null;
  headers?: { key: string; value: string }[] | null;
  compressCsv?: boolean;
  retentionPeriod?: string | null;
}

/** How long a link report is kept when its task names no retentionPeriod. */
export const DEFAULT_REPORT_RETENTION = '30 days';

/** Every parameter name, in the order answers list them (horizon.ts flattens these, and only these). */
export const REPORT_KEYS = [
  'reportType',
  'recipients',
  'cc',
  'bcc',
  'from',
  'title',
  'body',
  'isHtml',
  'fileName',
  'hqlType',
  'hqlQuery',
  'hqlFields',
  'hqlSortedBy',
  'headers',
  'compressCsv',
  'retentionPeriod',
] as const satisfies readonly (keyof ReportParameters)[];

const recipient = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['static', 'team_contact', 'team_manager', 'team_members'], description: 'static: `email`; team_*: the contact, managers or members of `team`.' },
    email: { type: ['string', 'null'], maxLength: 320 },
    team: { type: ['string', 'null'], maxLength: 191 },
  },
} as const;
const recipients = { type: 'array', maxItems: 100, items: recipient } as const;
const nullable = <S extends { type: string }>(schema: S) => ({ ...schema, type: [schema.type, 'null'] });

/**
 * JSON Schema of the parameters (draft 7, as Horizon's request schema has it). The enums keep every value
 * Horizon knows, so that one it has but Certwright does not run (hrql…) is refused by report checks
 * (check.ts) with a message saying so, not as "must be equal to one of the allowed values".
 */
export const REPORT_PARAMETERS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['reportType', 'recipients', 'from', 'title', 'isHtml', 'hqlType'],
  properties: {
    reportType: { type: 'string', enum: ['attachment_email', 'link_email'], description: 'attachment_email: the CSV is attached; link_email: the CSV is stored as a report (/api/v1/reports/) and the message carries its link, GET /reports/{uuid}.' },
    recipients: { ...recipients, minItems: 1, description: 'To (Horizon: recipients).' },
    cc: nullable(recipients),
    bcc: nullable(recipients),
    from: { type: 'string', minLength: 3, maxLength: 320, description: 'Sender address.' },
    title: { type: 'string', minLength: 1, maxLength: 998, description: 'Subject.' },
    body: { type: ['string', 'null'], maxLength: 65536, description: 'Text of the message (HTML when isHtml).' },
    isHtml: { type: 'boolean' },
    fileName: { type: ['string', 'null'], pattern: '^[0-9a-zA-Z\\-_.]+$', maxLength: 200, description: 'Name of the attachment or of the downloaded report (.csv added when absent); the task name by default.' },
    hqlType: { type: 'string', enum: ['hcql', 'hpql', 'hrql', 'heql', 'hdql'], description: 'Query language: hcql (certificates) only.' },
    hqlQuery: { type: ['string', 'null'], description: 'HCQL query; absent or empty: every certificate.' },
    hqlFields: { type: ['array', 'null'], maxItems: 64, items: { type: 'string' }, description: 'CSV columns (certificate properties); the CSV export defaults when absent.' },
    hqlSortedBy: {
      type: ['array', 'null'],
      maxItems: 16,
      items: { type: 'object', additionalProperties: false, required: ['element', 'order'], properties: { element: { type: 'string' }, order: { type: 'string', enum: ['Asc', 'Desc', 'KeyAsc', 'KeyDesc'] } } },
    },
    headers: {
      type: ['array', 'null'],
      maxItems: 32,
      items: { type: 'object', additionalProperties: false, required: ['key', 'value'], properties: { key: { type: 'string', minLength: 1, maxLength: 76 }, value: { type: 'string', maxLength: 998 } } },
      description: 'Extra message headers.',
    },
    compressCsv: { type: 'boolean', description: 'Gzip the CSV (.csv.gz), attached or stored.' },
    retentionPeriod: { type: ['string', 'null'], maxLength: 32, description: `link_email only: how long the report is kept, a duration ("7 days", "12 hours"); ${DEFAULT_REPORT_RETENTION} when absent.` },
  },
} as const;
