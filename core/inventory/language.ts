import type { Knex } from 'knex';
import type { FieldDefinition, QueryLanguage, SpecialDefinition } from '../query/types.js';

/**
 * HCQL, the certificate query language (client-compat §4), as a table over the inventory schema
 * (migration 0006). The search, aggregate, CSV and dictionary endpoints all read this one table.
 */
const T = 'inv_certificates';
const col = (column: string, hashKey?: string) => ({ kind: 'column' as const, column, ...(hashKey ? { hashKey } : {}) });
const facet = (name: string, numeric = false) => ({
  kind: 'side' as const,
  table: 'inv_certificate_facets',
  foreignKey: 'certificate_id',
  valueColumn: 'value',
  fixed: { facet: name },
  // facetRows writes each (facet, value) once per certificate; index (tenant, facet, value, certificate_id).
  distinct: true,
  ...(numeric ? { numeric } : {}),
});
const lower = (v: string): string => v.toLowerCase();

/** As the inventory stores serials: lower-case hex of the value's bytes, no leading zero byte. */
export function canonicalSerial(value: string): string {
  const digits = value.replace(/[:\s]/g, '').toLowerCase().replace(/^0+/, '');
  if (digits === '') return '00';
  return digits.length % 2 === 1 ? `0${digits}` : digits;
}

export const REVOCATION_REASONS = [
  'unspecified',
  'keycompromise',
  'cacompromise',
  'affiliationchanged',
  'superseded',
  'cessationofoperation',
  'certificatehold',
  'removefromcrl',
  'privilegewithdrawn',
  'aacompromise',
] as const;

const scalar = (name: string, column: string, property: string, description: string, extra: Partial<FieldDefinition> = {}): FieldDefinition => ({
  name,
  type: 'string',
  storage: col(column),
  property,
  description,
  sortable: true,
  groupable: true,
  ...extra,
});

export const CERTIFICATE_FIELDS: readonly FieldDefinition[] = [
  { name: 'id', type: 'string', storage: col('id'), property: '_id', description: 'Certificate identifier (24 hex characters)', sortable: true, normalize: lower },
  { name: 'dn', type: 'string', storage: col('dn', 'dn_key'), property: 'dn', description: 'Subject DN (RFC 4514, as openssl prints it)', sortable: true },
  { name: 'issuer', type: 'string', storage: col('issuer', 'issuer_key'), property: 'issuer', description: 'Issuer DN', sortable: true, groupable: true },
  scalar('serial', 'serial', 'serial', 'Serial number, hexadecimal', { groupable: false, normalize: canonicalSerial }),
  scalar('profile', 'profile', 'profile', 'Certificate profile'),
  scalar('module', 'module', 'module', 'Module that manages the certificate (webra, est, scep, acme, discovery…)'),
  scalar('owner', 'owner', 'owner', 'Owner (principal identifier)'),
  scalar('team', 'team', 'team', 'Owning team'),
  scalar('contactemail', 'contact_email', 'contactEmail', 'Contact email'),
  scalar('holderid', 'holder_id', 'holderId', 'Holder identifier'),
  scalar('keytype', 'key_type', 'keyType', 'Key type (rsa-2048, ec-secp256r1, ed-25519, …)'),
  scalar('signingalgorithm', 'signing_algorithm', 'signingAlgorithm', 'Signature algorithm'),
  scalar('thumbprint', 'thumbprint', 'thumbprint', 'SHA-1 of the certificate, hexadecimal', { groupable: false, normalize: lower }),
  scalar('publickeythumbprint', 'public_key_thumbprint', 'publicKeyThumbprint', 'SHA-256 of the public key, hexadecimal', { groupable: false, normalize: lower }),
  scalar('grade', 'grade', 'grade', 'Worst grade over the grading policies (A best)'),
  { name: 'valid.from', type: 'date', storage: col('not_before'), property: 'notBefore', description: 'Start of validity', sortable: true },
  { name: 'valid.until', type: 'date', storage: col('not_after'), property: 'notAfter', description: 'End of validity', sortable: true },
  { name: 'revocation.date', type: 'date', storage: col('revocation_date'), property: 'revocationDate', description: 'Revocation date', sortable: true },
  scalar('revocation.reason', 'revocation_reason', 'revocationReason', 'Revocation reason', { values: REVOCATION_REASONS, normalize: lower }),
  {
    name: 'san',
    type: 'string',
    storage: { kind: 'side', table: 'inv_certificate_sans', foreignKey: 'certificate_id', valueColumn: 'value_lc', lowercase: true, reversedColumn: 'value_rev' },
    property: 'subjectAlternateNames',
    description: 'Any subject alternative name value (case-insensitive)',
  },
  {
    name: 'label',
    parametric: true,
    type: 'string',
    storage: { kind: 'side', table: 'inv_certificate_labels', foreignKey: 'certificate_id', valueColumn: 'value', keyColumn: 'key', distinct: true },
    property: 'labels',
    description: 'Label value: label.<name>',
    groupable: true,
  },
  {
    name: 'metadata',
    parametric: true,
    type: 'string',
    storage: { kind: 'side', table: 'inv_certificate_metadata', foreignKey: 'certificate_id', valueColumn: 'value', keyColumn: 'key', distinct: true },
    property: 'metadata',
    description: 'Metadata value: metadata.<key>',
    groupable: true,
  },
  { name: 'discoverydata.ip', type: 'string', storage: facet('discovery.ip'), property: 'discoveryData', description: 'IP address where the certificate was discovered' },
  { name: 'discoverydata.hostname', type: 'string', storage: facet('discovery.hostname'), description: 'Host name where it was discovered' },
  { name: 'discoverydata.os', type: 'string', storage: facet('discovery.os'), description: 'Operating system of the discovering host' },
  { name: 'discoverydata.path', type: 'string', storage: facet('discovery.path'), description: 'File path where it was discovered' },
  { name: 'discoverydata.usage', type: 'string', storage: facet('discovery.usage'), description: 'Usage seen on the host' },
  { name: 'discoverydata.source', type: 'string', storage: facet('discovery.source'), description: 'Discovery source' },
  { name: 'discoverydata.tlsport', type: 'number', storage: facet('discovery.tlsport', true), description: 'TLS port serving the certificate' },
  { name: 'discoveryinfo.campaign', type: 'string', storage: facet('discovery.campaign'), property: 'discoveryInfo', description: 'Discovery campaign that found the certificate' },
  { name: 'thirdparty.connector', type: 'string', storage: facet('thirdparty.connector'), property: 'thirdPartyData', description: 'Third-party connector the certificate is synchronised to' },
  { name: 'thirdparty.id', type: 'string', storage: facet('thirdparty.id'), description: 'Identifier of the certificate at the third party' },
  { name: 'trigger.name', type: 'string', storage: facet('trigger.name'), property: 'triggerResults', description: 'Trigger that ran on the certificate' },
];

const flag = (column: string) => (qb: Knex.QueryBuilder, c: { table: string }) => void qb.where(`${c.table}.${column}`, true);

export const CERTIFICATE_SPECIALS: readonly SpecialDefinition[] = [
  {
    subject: 'status',
    verb: 'is',
    description: 'Derived status: valid (not revoked, not expired), expired, revoked',
    values: {
      valid: (qb, c) => void qb.where(`${c.table}.revoked`, false).andWhere(`${c.table}.not_after`, '>', c.now),
      expired: (qb, c) => void qb.where(`${c.table}.revoked`, false).andWhere(`${c.table}.not_after`, '<=', c.now),
      revoked: (qb, c) => void qb.where(`${c.table}.revoked`, true),
    },
  },
  {
    subject: 'certificate',
    verb: 'is',
    description: 'Certificate flags: selfsigned, archived, escrowed, trusted, discovered, autorenew',
    values: {
      selfsigned: flag('self_signed'),
      archived: flag('archived'),
      escrowed: flag('escrowed'),
      trusted: flag('discovered_trusted'),
      discovered: flag('discovered'),
      autorenew: flag('auto_renew'),
    },
  },
  {
    subject: 'trigger.results',
    verb: 'has',
    description: 'A trigger result with this status: success, failure, warning',
    values: Object.fromEntries(
      ['success', 'failure', 'warning'].map((status) => [
        status,
        (qb: Knex.QueryBuilder, c: { knex: Knex; table: string }) =>
          void qb.whereExists(
            c.knex('inv_certificate_facets as f')
              .select(c.knex.raw('1'))
              .whereRaw('?? = ??', ['f.certificate_id', `${c.table}.id`])
              .andWhere('f.facet', 'trigger.status')
              .andWhere('f.value', status),
          ),
      ]),
    ),
  },
];

export const CERTIFICATE_LANGUAGE: QueryLanguage = {
  name: 'HCQL',
  table: T,
  idColumn: 'id',
  tenantColumn: 'tenant',
  fields: CERTIFICATE_FIELDS,
  specials: CERTIFICATE_SPECIALS,
};
