import type { TableRow } from './table-search.js';

/**
 * An event as the events API answers it: Horizon's event object (`_id, code, module, node, timestamp,
 * removeAt, status, details`, client-compat; the MCP server's event search and CSV read these), and
 * Certwright's chain position, actor, object and hashes beside it. The stored row and its hash are
 * unchanged: `timestamp` is the recorded time (created_at) and `details` the hashed payload, parsed.
 */
export const EVENT_PROPERTIES = ['_id', 'seq', 'code', 'module', 'node', 'status', 'principal', 'objectType', 'objectId', 'details', 'timestamp', 'removeAt', 'prevHash', 'hash'] as const;

/** The stored payload is JSON text (the hash covers that text): answered parsed, or as stored if it is not JSON. */
function parsed(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload ?? {};
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return payload;
  }
}

/**
 * Horizon answers details as `[{key, value}]` with string values (its MCP server builds its CSV
 * `detail.<key>` columns from that list): each member of the payload, a non-string value as JSON.
 */
export function detailsOf(payload: unknown): { key: string; value: string }[] {
  const object = parsed(payload);
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return object === undefined || object === null ? [] : [{ key: 'payload', value: typeof object === 'string' ? object : JSON.stringify(object) }];
  return Object.entries(object as Record<string, unknown>).map(([key, value]) => ({ key, value: typeof value === 'string' ? value : JSON.stringify(value) }));
}

/** The text of member `key` of the details (dots go deeper), as a CSV `detail.<key>` column holds it. */
export function detailMember(payload: unknown, key: string): string | undefined {
  let node: unknown = parsed(payload);
  for (const segment of key.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  if (node === undefined || node === null) return undefined;
  return typeof node === 'string' ? node : JSON.stringify(node);
}

export const eventObjectOf = (r: TableRow): Record<string, unknown> => ({
  _id: r.id,
  seq: Number(r.seq),
  code: r.code,
  module: r.module,
  node: r.node ?? null,
  status: r.status,
  principal: r.principal ?? null,
  objectType: r.object_type ?? null,
  objectId: r.object_id ?? null,
  details: detailsOf(r.payload),
  timestamp: Number(r.created_at),
  removeAt: r.remove_at === null || r.remove_at === undefined ? null : Number(r.remove_at),
  prevHash: r.prev_hash,
  hash: r.hash,
});

const nullable = (type: string) => ({ type: [type, 'null'] });

export const eventObjectSchema = {
  type: 'object',
  required: [...EVENT_PROPERTIES],
  properties: {
    _id: { type: 'string' },
    seq: { type: 'integer', description: 'Position in the hash chain' },
    code: { type: 'string' },
    module: { type: 'string' },
    node: { ...nullable('string'), description: 'The node (host:pid) that recorded the event; null for events recorded before Certwright kept it' },
    status: { type: 'string', enum: ['success', 'failure', 'warning'] },
    principal: nullable('string'),
    objectType: nullable('string'),
    objectId: nullable('string'),
    details: {
      type: 'array',
      description: 'Event details, one {key, value} per member of the recorded payload (docs/events.md lists them per code; a value that is not text is JSON); query them as detail.<key>, export them as CSV columns detail.<key>',
      items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } },
    },
    timestamp: { type: 'integer', description: 'When the event was recorded, epoch ms' },
    removeAt: { ...nullable('integer'), description: 'When the event may be purged, epoch ms; null: kept' },
    prevHash: { type: 'string', description: 'Hash of the previous event in the chain' },
    hash: { type: 'string', description: 'SHA-256 of this event and prevHash' },
  },
} as const;
