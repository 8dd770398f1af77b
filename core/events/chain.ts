import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// A CommonJS module whose types describe an ES default export; at runtime the default is the function.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export const GENESIS_HASH = '0'.repeat(64);

/** What the hash of an event covers: every stored field but the hash itself. */
export interface ChainedFields {
  id: string;
  seq: number;
  tenant: string;
  code: string;
  module: string;
  status: string;
  principal: string | null;
  objectType: string | null;
  objectId: string | null;
  payload: string;
  createdAt: number;
  prevHash: string;
}

/** sha256 over the RFC 8785 canonical JSON of the event, so any edit to any field changes the hash. */
export function eventHash(fields: ChainedFields): string {
  return createHash('sha256').update(canonicalize(fields) as string).digest('hex');
}
