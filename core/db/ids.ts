import { randomFillSync } from 'node:crypto';

/** Random bytes drawn from the CSPRNG in blocks (one call per 512 ids instead of one per id). */
const POOL = Buffer.alloc(8 * 512);
let poolAt = POOL.length;

/**
 * Ids of certificates, requests and events: 24 hex characters (the spec's `[0-9a-fA-F]{24}`), laid out
 * like a MongoDB ObjectId (4 bytes of seconds, then 8 random bytes) so they sort roughly by creation
 * time, which keeps B-tree inserts at the right edge of the index.
 */
export function newId(now: number = Date.now()): string {
  if (poolAt === POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const buf = Buffer.allocUnsafe(12);
  buf.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  POOL.copy(buf, 4, poolAt, poolAt + 8);
  poolAt += 8;
  return buf.toString('hex');
}

export const ID_PATTERN = '^[0-9a-fA-F]{24}$';
export const isId = (value: string): boolean => /^[0-9a-fA-F]{24}$/.test(value);
