import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/unique.js';

export interface ThrottleSettings {
  /** Free failures of one identifier from one client address (and of a self-service password check). */
  identifierFreeAttempts: number;
  addressFreeAttempts: number;
  /** Failures of one identifier from all addresses that raise an alert event (never a lock). */
  identifierAlertAttempts: number;
  windowMs: number;
  maxLockMs: number;
}

/**
 * A login source the throttle counts failures of. Logins lock per (identifier, address) and per address,
 * never per identifier alone: whoever knows a user name could otherwise keep its owner out. `identifier`
 * locks only the self-service password check, where the caller is already that identifier.
 */
export type ThrottleKey =
  | { kind: 'identifier'; tenant: string; value: string }
  | { kind: 'pair'; tenant: string; identifier: string; address: string }
  | { kind: 'address'; value: string };

const TABLE = 'security_login_failures';
const keyOf = (k: ThrottleKey): string =>
  (k.kind === 'identifier' ? `id:${k.tenant}:${k.value}` : k.kind === 'pair' ? `pair:${k.tenant}:${k.address}:${k.identifier}` : `ip:${k.value}`).slice(0, 255);
const alertKeyOf = (tenant: string, identifier: string): string => `alert:${tenant}:${identifier}`.slice(0, 255);

interface Row {
  key: string;
  failures: number;
  last_failure_at: number | string;
  locked_until: number | string;
}

/**
 * Locks kept in memory at most. Each is one (identifier, address) pair or one address, so without a bound a
 * spray of failed logins from many addresses (or many X-Forwarded-For values behind a trusted proxy) grew the
 * map for good: an entry went only when a later request asked for the same key after its lock ended (issue 24).
 * The database stays the authority: a lock dropped here still answers 429 to every request that reaches the
 * database check; only a request whose exact secret is in the verified-key cache (it knew the secret) skips it.
 */
export const SEEN_LOCKS_MAX = 10_000;

/**
 * Brute-force throttling of logins per (identifier, client address) and per client address. Counters live in the
 * database so every node enforces the same locks (DESIGN.md §4); the locks this node has seen are also
 * kept in memory, so requests answered from the verified-key cache are held to them without a query.
 */
export class LoginThrottle {
  /** Key → the time its lock ends; in the order the locks were last set (oldest first). */
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
      this.remember(r.key, until, now);
      wait = Math.max(wait, until - now);
    }
    return wait;
  }

  /** Locks held in memory now (tests of the bound). */
  get seenSize(): number {
    return this.seen.size;
  }

  /**
   * Keeps `key`'s lock in memory, within SEEN_LOCKS_MAX: when full, ended locks go first, then the locks set
   * longest ago, down to nine tenths of the bound (so a full map is swept once per SEEN_LOCKS_MAX / 10 new locks).
   */
  private remember(key: string, until: number, now: number): void {
    this.seen.delete(key);
    if (this.seen.size >= SEEN_LOCKS_MAX) {
      for (const [k, u] of this.seen) if (u <= now) this.seen.delete(k);
      let drop = this.seen.size - Math.floor(SEEN_LOCKS_MAX * 0.9);
      for (const k of this.seen.keys()) {
        if (drop-- <= 0) break;
        this.seen.delete(k);
      }
    }
    this.seen.set(key, until);
  }

  /** Counts a failure for each key; past the free attempts, locks it for twice the previous lock. */
  async recordFailure(keys: ThrottleKey[]): Promise<void> {
    const now = this.clock();
    const { windowMs, maxLockMs } = this.settings;
    for (const k of keys) {
      const key = keyOf(k);
      const free = k.kind === 'address' ? this.settings.addressFreeAttempts : this.settings.identifierFreeAttempts;
      const lockMs = await this.count(key, (failures) => (failures > free ? Math.min(1000 * 2 ** (failures - free - 1), maxLockMs) : 0), windowMs, now);
      if (lockMs > 0) this.remember(key, now + lockMs, now);
    }
  }

  /**
   * Counts a failed login of `identifier` from any address, without locking anything; true when this
   * failure reaches the alert threshold or a multiple of it (one alert per that many failures, not per failure).
   */
  async identifierFailureAlert(tenant: string, identifier: string): Promise<{ alert: boolean; failures: number }> {
    const threshold = this.settings.identifierAlertAttempts;
    let seen = 0;
    await this.count(alertKeyOf(tenant, identifier), (failures) => ((seen = failures), 0), this.settings.windowMs, this.clock());
    return { alert: threshold > 0 && seen > 0 && seen % threshold === 0, failures: seen };
  }

  /** Adds one failure to `key`'s counter (restarted after `windowMs` without one); returns the lock it sets. */
  private async count(key: string, lockFor: (failures: number) => number, windowMs: number, now: number): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const row = (await this.knex(TABLE).where({ key }).first()) as Row | undefined;
      const previous = row && now - Number(row.last_failure_at) <= windowMs ? row.failures : 0;
      const failures = previous + 1;
      const lockMs = lockFor(failures);
      const values = { failures, last_failure_at: now, locked_until: lockMs > 0 ? now + lockMs : 0 };
      try {
        if (row) await this.knex(TABLE).where({ key }).update(values);
        else await this.knex(TABLE).insert({ key, ...values });
        return lockMs;
      } catch (err) {
        // Another node inserted the same key first: count again on its row.
        if (isUniqueViolation(err) && attempt === 0) continue;
        throw err;
      }
    }
  }

  /** A successful login clears its (identifier, address) counter; the alert counter keeps the evidence. */
  async reset(key: ThrottleKey): Promise<void> {
    this.seen.delete(keyOf(key));
    await this.knex(TABLE).where({ key: keyOf(key) }).delete();
  }
}
