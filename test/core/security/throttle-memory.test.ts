import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../../core/db/migrator.js';
import { LoginThrottle, SEEN_LOCKS_MAX, type ThrottleKey } from '../../../core/security/auth/throttle.js';
import { freshDatabaseUrl } from '../../helpers/database.js';

/**
 * The locks a node keeps in memory (core/security/auth/throttle.ts) are bounded (issue 24): failed logins from
 * ever new addresses used to grow the map for good. Locks are written to the table as another node would, then
 * read through locked(), which remembers each one it finds.
 */
const SETTINGS = { identifierFreeAttempts: 5, addressFreeAttempts: 20, identifierAlertAttempts: 10, windowMs: 900_000, maxLockMs: 900_000 };
const address = (i: number): ThrottleKey => ({ kind: 'address', value: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` });
const keyText = (i: number): string => `ip:${(address(i) as { value: string }).value}`;

t.test('the in-memory locks stay within SEEN_LOCKS_MAX; ended locks go first, then the oldest', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-throttle-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const db = openDatabase({ url: await freshDatabaseUrl(t), dataDir, pool: { min: 1, max: 2 } });
  t.teardown(() => db.knex.destroy());
  await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);

  let now = 1_000_000;
  const throttle = new LoginThrottle(db.knex, SETTINGS, () => now);
  const total = SEEN_LOCKS_MAX + 2_000;
  // The first half of the locks end after a minute, the rest after an hour.
  const rows = Array.from({ length: total }, (_, i) => ({ key: keyText(i), failures: 30, last_failure_at: now, locked_until: now + (i < total / 2 ? 60_000 : 3_600_000) }));
  for (let i = 0; i < rows.length; i += 500) await db.knex('security_login_failures').insert(rows.slice(i, i + 500));

  const readLocks = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i += 500) {
      const keys = Array.from({ length: Math.min(500, to - i) }, (_, j) => address(i + j));
      t.ok((await throttle.locked(keys)) > 0);
    }
  };
  await readLocks(0, SEEN_LOCKS_MAX);
  t.equal(throttle.seenSize, SEEN_LOCKS_MAX, 'filled up to the bound');
  await readLocks(SEEN_LOCKS_MAX, total);
  t.ok(throttle.seenSize <= SEEN_LOCKS_MAX, `${throttle.seenSize} ≤ ${SEEN_LOCKS_MAX} after ${total} locks`);
  t.ok(throttle.lockedInMemory([address(total - 1)]) > 0, 'the newest lock is in memory');
  t.equal(throttle.lockedInMemory([address(0)]), 0, 'the oldest went from memory…');
  t.ok((await throttle.locked([address(0)])) > 0, '…but the database still holds it');

  // Two minutes on, the first half has ended. The map topped up to its bound with more running locks, one more
  // lock sweeps out the ended ones first: every running lock stays.
  now += 120_000;
  const extra = Array.from({ length: SEEN_LOCKS_MAX - throttle.seenSize }, (_, i): ThrottleKey => ({ kind: 'address', value: `172.16.${i >> 8}.${i & 255}` }));
  const running = [...Array.from({ length: total / 2 }, (_, i) => address(total / 2 + i)), ...extra];
  await db.knex.batchInsert('security_login_failures', extra.map((k) => ({ key: `ip:${(k as { value: string }).value}`, failures: 30, last_failure_at: now, locked_until: now + 3_600_000 })), 500);
  for (let i = 0; i < extra.length; i += 500) await throttle.locked(extra.slice(i, i + 500));
  t.equal(throttle.seenSize, SEEN_LOCKS_MAX, 'full again');
  const inMemory = (): number => running.filter((k) => throttle.lockedInMemory([k]) > 0).length;
  const before = inMemory();
  const fresh: ThrottleKey = { kind: 'address', value: '192.0.2.1' };
  await db.knex('security_login_failures').insert({ key: 'ip:192.0.2.1', failures: 30, last_failure_at: now, locked_until: now + 3_600_000 });
  t.ok((await throttle.locked([fresh])) > 0);
  t.ok(throttle.seenSize < SEEN_LOCKS_MAX * 0.9, `the ended locks were swept: ${throttle.seenSize} left`);
  t.equal(inMemory(), before, 'no running lock was dropped while ended ones remained');
  t.ok(throttle.lockedInMemory([fresh]) > 0);
});
