import { LRUCache } from 'lru-cache';

/**
 * Values a node read from the database and trusts for `ttlMs` before reading them again: settings read on
 * every request (a profile, whether a queue is paused) that change rarely. A change made through this node
 * forgets its key once the change has committed (or failed), so it applies here at once; another node's
 * change is seen within `ttlMs`.
 */
export class TrustedReads<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;

  constructor(ttlMs: number, max = 1024) {
    this.entries = new LRUCache<string, V>({ max, ttl: ttlMs, ttlAutopurge: false });
  }

  /** The trusted value of `key`, else `load()`'s; a miss (null) is not kept, so a row created elsewhere is seen at once. */
  async read(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const value = await load();
    if (value !== null) this.entries.set(key, value);
    return value;
  }

  /** Runs `change` (a transaction writing `key`'s row) and forgets `key` after it, committed or not. */
  async changing<T>(key: string, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      this.entries.delete(key);
    }
  }
}

/** The key of a tenant's named object. */
export const tenantKey = (tenant: string, name: string): string => `${tenant}\u0000${name}`;
