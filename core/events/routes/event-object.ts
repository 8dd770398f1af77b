import type { TableRow } from './table-search.js';

/** An event as the events API answers it: the HEQL properties (language.ts) plus payload and chain hashes. */
export const EVENT_PROPERTIES = ['_id', 'seq', 'code', 'module', 'status', 'principal', 'objectType', 'objectId', 'payload', 'createdAt', 'prevHash', 'hash'] as const;

/** The stored payload is JSON text (the hash covers that text): answered parsed, or as stored if it is not JSON. */
function parsed(payload: unknown): unknown {
  if (typeof payload !== 'string') return payload ?? {};
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return payload;
  }
}

export const eventObjectOf = (r: TableRow): Record<string, unknown> => ({
  _id: r.id,
  seq: Number(r.seq),
  code: r.code,
  module: r.module,
  status: r.status,
  principal: r.principal ?? null,
  objectType: r.object_type ?? null,
  objectId: r.object_id ?? null,
  payload: parsed(r.payload),
  createdAt: Number(r.created_at),
  prevHash: r.prev_hash,
  hash: r.hash,
});

const nullable = (type: string) => ({ type: [type, 'null'] });

export const eventObjectSchema = {
  type: 'object',
  required: [...EVENT_PROPERTIES],
  properties: {
    _id: { type: 'string' },
    seq: { type: 'integer' },
    code: { type: 'string' },
    module: { type: 'string' },
    status: { type: 'string', enum: ['success', 'failure', 'warning'] },
    principal: nullable('string'),
    objectType: nullable('string'),
    objectId: nullable('string'),
    payload: { description: 'Event details: a JSON object whose members depend on the code (docs/events.md)' },
    createdAt: { type: 'integer', description: 'Epoch ms' },
    prevHash: { type: 'string', description: 'Hash of the previous event in the chain' },
    hash: { type: 'string', description: 'SHA-256 of this event and prevHash' },
  },
} as const;
