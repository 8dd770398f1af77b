import type { FieldDefinition, FieldStorage, QueryLanguage, SpecialDefinition } from '../query/types.js';
import { REQUEST_STATUSES } from './types.js';

/**
 * HRQL, the request query language (client-compat §4), as a table over migration 0008. Query names
 * follow HCQL's (`holderid`, `label.<name>`) plus HRQL's own (`workflow`, `status`, `requester`,
 * `approver`, `registration.date`, `modification.date`, `expiration.date`); properties are the keys of
 * the request object (§2.5), which sortedBy, fields and groupBy carry.
 */
const T = 'requests';
const lower = (v: string): string => v.toLowerCase();
const side = (table: string): FieldStorage => ({ kind: 'side', table, foreignKey: 'request_id', valueColumn: 'value', keyColumn: 'key', distinct: true });

/** A string column, named in queries `name` and in results `property`. */
const text = (name: string, column: string, property: string, description: string, extra: Partial<FieldDefinition> = {}): FieldDefinition => ({
  name,
  type: 'string',
  storage: { kind: 'column', column },
  property,
  description,
  sortable: true,
  groupable: true,
  ...extra,
});
const date = (name: string, column: string, property: string, description: string): FieldDefinition => ({
  name,
  type: 'date',
  storage: { kind: 'column', column },
  property,
  description,
  sortable: true,
});

export const REQUEST_FIELDS: readonly FieldDefinition[] = [
  // newId writes lower-case hex; clients may send either case.
  text('id', 'id', '_id', 'Request identifier (24 hex characters)', { groupable: false, normalize: lower }),
  text('module', 'module', 'module', 'Module that handles the request (webra, est, scep, …)'),
  // Open: an unknown workflow finds nothing rather than failing the query.
  text('workflow', 'workflow', 'workflow', 'Workflow: enroll, renew, revoke, update, migrate, recover, import'),
  text('status', 'status', 'status', 'Status: pending, approved, denied, canceled, completed', { values: REQUEST_STATUSES, normalize: lower }),
  text('profile', 'profile', 'profile', 'Certificate profile'),
  text('requester', 'requester', 'requester', 'Who submitted the request (principal identifier)'),
  text('approver', 'approver', 'approver', 'Who approved or denied it'),
  text('contact', 'contact', 'contact', 'Contact email'),
  text('team', 'team', 'team', 'Team of the certificate'),
  text('holderid', 'holder_id', 'holderId', 'Holder identifier'),
  // As HCQL writes `holderid`: one word, no dot.
  text('certificateid', 'certificate_id', 'certificateId', 'Identifier of the certificate the request is about or produced', { groupable: false, normalize: lower }),
  // Text, not indexed (rarely searched): no hash key as HCQL's dn has.
  text('dn', 'dn', 'dn', 'Subject DN (SCEP / EST DN whitelist)', { groupable: false }),
  { name: 'label', parametric: true, type: 'string', storage: side('request_labels'), property: 'labels', description: 'Label value: label.<name>', groupable: true },
  { name: 'metadata', parametric: true, type: 'string', storage: side('request_metadata'), property: 'metadata', description: 'Metadata value: metadata.<key>', groupable: true },
  date('registration.date', 'registration_date', 'registrationDate', 'When the request was submitted'),
  date('modification.date', 'last_modification_date', 'lastModificationDate', 'When the request last changed'),
  date('expiration.date', 'expiration_date', 'expirationDate', 'When a pending request expires'),
];

export const REQUEST_SPECIALS: readonly SpecialDefinition[] = [
  {
    subject: 'request',
    verb: 'is',
    description: 'expired: its expiration date has passed; valid: not expired (no expiration date, or a later one)',
    values: {
      valid: (qb, c) => void qb.where((q) => q.whereNull(`${c.table}.expiration_date`).orWhere(`${c.table}.expiration_date`, '>', c.now)),
      expired: (qb, c) => void qb.whereNotNull(`${c.table}.expiration_date`).andWhere(`${c.table}.expiration_date`, '<=', c.now),
    },
  },
];

export const REQUEST_LANGUAGE: QueryLanguage = {
  name: 'HRQL',
  table: T,
  idColumn: 'id',
  tenantColumn: 'tenant',
  fields: REQUEST_FIELDS,
  specials: REQUEST_SPECIALS,
};
