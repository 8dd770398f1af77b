import { randomBytes } from 'node:crypto';

/**
 * Ids of certificates, requests and events: 24 hex characters (the spec's `[0-9a-fA-F]{24}`), laid out
 * like a MongoDB ObjectId (4 bytes of seconds, then 8 random bytes) so they sort roughly by creation
 * time, which keeps B-tree inserts at the right edge of the index.
 */
export function newId(now: number = Date.now()): string {
  const buf = randomBytes(12);
  buf.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  return buf.toString('hex');
}

export const ID_PATTERN = '^[0-9a-fA-F]{24}$';
export const isId = (value: string): boolean => /^[0-9a-fA-F]{24}$/.test(value);
