import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/unique.js';

export interface ThrottleSettings {
  identifierFreeAttempts: number;
  addressFreeAttempts: number;
  windowMs: number;
  maxLockMs: number;
}

/** A login source the throttle counts failures of. */
export type ThrottleKey = { kind: 'identifier'; tenant: string; value: string } | { kind: 'address'; value: string };

const TABLE = 'security_login_failures';
const keyOf = (k: ThrottleKey): string => (k.kind === 'identifier' ? `id:${k.tenant}:${k.value}` : `ip:${k.value}`).slice(0, 255);

interface Row {
  key: string;
  failures: number;
  last_failure_at: number | string;
  locked_until: number | string;
}

/**
 * Brute-force throttling of logins per identifier and per client address. Counters live in the
 * database so every node enforces the same locks (DESIGN.md §4); the locks this node has seen are also
 * kept in memory, so requests answered from the verified-key cache are held to them without a query.
 */
export class LoginThrottle {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly knex: Knex,
    private readonly settings: ThrottleSettings,
    private readonly clock: () => number,
  ) {}

  /** Milliseconds until the first of `keys` is unlocked, from memory only; 0 when none is known locked. */
  lockedInMemory(keys: ThrottleKey[]): number {
    const now = this.clock();
    let wait = 0;
    for (const k of keys) {
      const until = this.seen.get(keyOf(k));
      if (until === undefined) continue;
      if (until <= now) this.seen.delete(keyOf(k));
      else wait = Math.max(wait, until - now);
    }
    return wait;
  }

  /** Milliseconds until every key is unlocked, read from the database; 0 when none is locked. */
  async locked(keys: ThrottleKey[]): Promise<number> {
    const now = this.clock();
    const rows = (await this.knex(TABLE).whereIn('key', keys.map(keyOf)).andWhere('locked_until', '>', now)) as Row[];
    let wait = 0;
    for (const r of rows) {
      const until = Number(r.locked_until);
      this.seen.set(r.key, until);
      wait = Math.max(wait, until - now);
    }
    return wait;
  }

  /** Counts a failure for each key; past the free attempts, locks it for twice the previous lock. */
  async recordFailure(keys: ThrottleKey[]): Promise<void> {
    const now = this.clock();
    const { windowMs, maxLockMs } = this.settings;
    for (const k of keys) {
      const key = keyOf(k);
      const free = k.kind === 'identifier' ? this.settings.identifierFreeAttempts : this.settings.addressFreeAttempts;
      for (let attempt = 0; attempt < 2; attempt++) {
        const row = (await this.knex(TABLE).where({ key }).first()) as Row | undefined;
        const previous = row && now - Number(row.last_failure_at) <= windowMs ? row.failures : 0;
        const failures = previous + 1;
        const lockMs = failures > free ? Math.min(1000 * 2 ** (failures - free - 1), maxLockMs) : 0;
        const values = { failures, last_failure_at: now, locked_until: lockMs > 0 ? now + lockMs : 0 };
        try {
          if (row) await this.knex(TABLE).where({ key }).update(values);
          else await this.knex(TABLE).insert({ key, ...values });
        } catch (err) {
          // Another node inserted the same key first: count again on its row.
          if (isUniqueViolation(err) && attempt === 0) continue;
          throw err;
        }
        if (lockMs > 0) this.seen.set(key, now + lockMs);
        break;
      }
    }
  }

  /** A successful login clears its identifier's counter. */
  async reset(key: ThrottleKey): Promise<void> {
    this.seen.delete(keyOf(key));
    await this.knex(TABLE).where({ key: keyOf(key) }).delete();
  }
}
