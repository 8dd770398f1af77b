import type { FieldDefinition, QueryLanguage } from '../query/types.js';
import type { EventStatus } from './store.js';

/**
 * HEQL, the event query language (client-compat §4), as a table over the events table (migrations
 * 0001, 0018). Every field is a column of `events` (detail.<key> a member of the payload's JSON): no
 * side tables, no specials. Properties are those of the answered event object (routes/event-object.ts:
 * `_id`, `timestamp`, `details`, `removeAt`…); `id` and `date` still resolve as query names.
 */
const col = (column: string) => ({ kind: 'column' as const, column });
const lower = (v: string): string => v.toLowerCase();

/** What EventStore.append writes: a closed set, so the dictionary lists it and typos are refused. */
export const EVENT_STATUSES = ['success', 'failure', 'warning'] as const satisfies readonly EventStatus[];
// Fails to compile when EventStatus gains a member this list does not have.
const everyStatus: Exclude<EventStatus, (typeof EVENT_STATUSES)[number]> extends never ? true : never = true;
void everyStatus;

export const EVENT_FIELDS: readonly FieldDefinition[] = [
  // newId writes lower-case hex; clients may send either case.
  { name: 'id', type: 'string', storage: col('id'), property: '_id', description: 'Event identifier (24 hex characters)', sortable: true, normalize: lower },
  // (tenant, code, created_at) is indexed: a code narrows and orders cheaply.
  { name: 'code', type: 'string', storage: col('code'), property: 'code', description: 'Event code (SESSION-END, CERTIFICATE-REVOKE, …)', sortable: true, groupable: true },
  { name: 'module', type: 'string', storage: col('module'), property: 'module', description: 'Module that raised the event (pki, inventory, security, a plugin id, …)', sortable: true, groupable: true },
  {
    name: 'status',
    type: 'string',
    storage: col('status'),
    property: 'status',
    description: 'Outcome: success, failure or warning',
    sortable: true,
    groupable: true,
    values: EVENT_STATUSES,
    normalize: lower,
  },
  { name: 'principal', type: 'string', storage: col('principal'), property: 'principal', description: 'Who acted (absent for system events)', groupable: true },
  { name: 'object.type', type: 'string', storage: col('object_type'), property: 'objectType', description: 'Kind of object the event is about (certificate, ca, account, …)', groupable: true },
  { name: 'object.id', type: 'string', storage: col('object_id'), property: 'objectId', description: 'Identifier of the object the event is about' },
  // `timestamp` is Horizon's name (the MCP server queries `timestamp after -24h` and sorts by it); `date`
  // stays for existing queries. Both read created_at, whose (tenant, created_at) index serves ranges.
  { name: 'timestamp', type: 'date', storage: col('created_at'), property: 'timestamp', description: 'When the event was recorded', sortable: true },
  { name: 'date', type: 'date', storage: col('created_at'), property: 'timestamp', description: 'When the event was recorded (same as timestamp)', sortable: true },
  { name: 'node', type: 'string', storage: col('node'), property: 'node', description: 'The node (host:pid) that recorded the event', sortable: true, groupable: true },
  { name: 'removeat', type: 'date', storage: col('remove_at'), property: 'removeAt', description: 'When the event may be purged (absent: kept)', sortable: true },
  {
    name: 'detail',
    type: 'string',
    parametric: true,
    storage: { kind: 'json', column: 'payload' },
    property: 'details',
    description: 'A member of the event details (detail.actorId, detail.ip, …; dotted for nested members), compared as text (numbers and booleans as JSON writes them): not indexed, so combine it with an indexed condition (code, timestamp) on large stores',
  },
  { name: 'seq', type: 'number', storage: col('seq'), property: 'seq', description: 'Position in the hash chain (strictly increasing, no gaps)', sortable: true },
];

export const EVENT_LANGUAGE: QueryLanguage = {
  name: 'HEQL',
  table: 'events',
  idColumn: 'id',
  tenantColumn: 'tenant',
  fields: EVENT_FIELDS,
  specials: [],
};
