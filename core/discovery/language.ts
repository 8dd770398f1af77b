import type { FieldDefinition, QueryLanguage } from '../query/types.js';
import { DISCOVERY_EVENT_CODES, DISCOVERY_EVENT_STATUSES } from './types.js';

/**
 * HDQL, the discovery event query language (client-compat §4), as a table over `discovery_events`
 * (migration 0009): columns only, no specials. Names follow HCQL/HEQL: a camelCase key lower-cased
 * (`sessionId` → `sessionid`, like `holderid`), a family of keys dotted (`client.*`, like `valid.*`), a
 * reference to another object `<type>.id` (like HEQL's `object.id`). Properties are the read keys of
 * StoredDiscoveryEvent; `date` is the `timestamp`.
 */
const lower = (v: string): string => v.toLowerCase();

const text = (name: string, column: string, property: string, description: string, flags: Partial<FieldDefinition> = {}): FieldDefinition => ({
  name,
  type: 'string',
  storage: { kind: 'column', column },
  property,
  description,
  groupable: true,
  ...flags,
});

export const DISCOVERY_EVENT_FIELDS: readonly FieldDefinition[] = [
  // newId writes lower-case hex; clients may send either case.
  text('id', 'id', '_id', 'Event identifier (24 hex characters)', { sortable: true, groupable: false, normalize: lower }),
  // (tenant, campaign, created_at) and (tenant, code, created_at) are indexed.
  text('campaign', 'campaign', 'campaign', 'Discovery campaign', { sortable: true }),
  text('sessionid', 'session_id', 'sessionId', 'Discovery session', { sortable: true }),
  text('code', 'code', 'code', `Event code (${DISCOVERY_EVENT_CODES.join(', ')}, …)`, { sortable: true }),
  text('status', 'status', 'status', 'Outcome: success, warning or failure', { values: DISCOVERY_EVENT_STATUSES, normalize: lower }),
  text('errorcode', 'error_code', 'errorCode', 'Error code reported by the client'),
  // Free text up to 4,096 characters: searched, not sorted or grouped by.
  text('errormessage', 'error_message', 'errorMessage', 'Error message reported by the client', { groupable: false }),
  text('hostname', 'hostname', 'hostname', 'Host name scanned or imported from', { sortable: true }),
  text('ip', 'ip', 'ip', 'IP address scanned or imported from', { sortable: true }),
  { name: 'port', type: 'number', storage: { kind: 'column', column: 'port' }, property: 'port', description: 'TCP port scanned', sortable: true, groupable: true },
  text('source', 'source', 'source', 'Where the certificate was found (file path, store, URL, …)'),
  // `timestamp` is Horizon's query name (the MCP server's HDQL); `date` stays for existing queries.
  { name: 'timestamp', type: 'date', storage: { kind: 'column', column: 'created_at' }, property: 'timestamp', description: 'When the service recorded the event', sortable: true },
  { name: 'date', type: 'date', storage: { kind: 'column', column: 'created_at' }, property: 'timestamp', description: 'When the service recorded the event (same as timestamp)', sortable: true },
  text('client.version', 'client_version', 'clientVersion', 'Version of the discovery client'),
  text('client.ip', 'client_ip', 'clientIp', 'Address the client reported from'),
  text('client.id', 'client_id', 'clientId', 'Principal that reported the event'),
  text('certificate.id', 'certificate_id', 'certificateId', 'Inventory certificate the event is about', { groupable: false, normalize: lower }),
];

export const DISCOVERY_EVENT_LANGUAGE: QueryLanguage = {
  name: 'HDQL',
  table: 'discovery_events',
  idColumn: 'id',
  tenantColumn: 'tenant',
  fields: DISCOVERY_EVENT_FIELDS,
  specials: [],
};
