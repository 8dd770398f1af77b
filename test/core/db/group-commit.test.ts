import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import t, { type Test } from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { finishBeforeCommit, GroupCommit } from '../../../core/db/group-commit.js';
import { freshDatabaseUrl } from '../../helpers/database.js';

/** A database (SQLite file, or a fresh one on TEST_DATABASE_URL) with one table of rows. */
async function database(t: Test): Promise<Knex> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-group-commit-'));
  const url = await freshDatabaseUrl(t);
  const { knex } = openDatabase({ url, dataDir, pool: url ? { min: 0, max: 4 } : { min: 1, max: 1 } });
  t.teardown(async () => {
    await knex.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await knex.schema.createTable('rows', (table) => {
    table.string('id', 64).primary();
    table.integer('n').notNullable();
  });
  return knex;
}

const ids = async (knex: Knex): Promise<string[]> => ((await knex('rows').orderBy('id').select('id')) as { id: string }[]).map((r) => r.id);

t.test('concurrent works share one transaction; each gets its own value once it is committed', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex);
  const transactions = new Set<Knex.Transaction>();
  const seenAfter: boolean[] = [];
  const values = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      group
        .run(async (trx) => {
          transactions.add(trx);
          await trx('rows').insert({ id: `r${String(i).padStart(2, '0')}`, n: i });
          return i * 10;
        })
        // Read on another connection (MariaDB) or after the transaction (SQLite): committed rows only.
        .then(async (value) => {
          seenAfter.push((await knex('rows').where({ id: `r${String(i).padStart(2, '0')}` }).first()) !== undefined);
          return value;
        }),
    ),
  );
  t.same(values, Array.from({ length: 20 }, (_, i) => i * 10), 'each caller gets its own work’s value');
  t.equal(transactions.size, 1, 'the 20 works started together were committed by one transaction');
  t.ok(seenAfter.every(Boolean), 'a value is handed over only once its writes are committed');
  t.equal((await ids(knex)).length, 20);
});

t.test('a failing work fails alone: its writes are gone, the others are committed once', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex);
  const runs = new Map<number, number>();
  const results = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) =>
      group.run(async (trx) => {
        runs.set(i, (runs.get(i) ?? 0) + 1);
        await trx('rows').insert({ id: `w${i}`, n: i });
        // Work 4 has written a row before it fails: nothing of it may stay.
        if (i === 4) throw new Error('work 4 failed');
        await trx('rows').insert({ id: `w${i}-second`, n: i });
        return i;
      }),
    ),
  );
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  t.match((results[4] as PromiseRejectedResult).reason, { message: 'work 4 failed' }, 'the failed work gets its own error');
  const expected = [0, 1, 2, 3, 5, 6, 7, 8, 9].flatMap((i) => [`w${i}`, `w${i}-second`]).sort();
  t.same(await ids(knex), expected, 'every other work’s rows exactly once, none of the failed one');
  t.equal(runs.get(4), 2, 'the failed work ran in the group, then alone');
  t.ok([...runs.values()].every((n) => n <= 2), 'a work runs at most twice (its group rolled back, then alone)');
});

t.test('works that arrive while a group is being written go in the next one', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex);
  const transactions: Knex.Transaction[] = [];
  let late: Promise<unknown>[] = [];
  const first = Array.from({ length: 3 }, (_, i) =>
    group.run(async (trx) => {
      transactions.push(trx);
      await trx('rows').insert({ id: `a${i}`, n: i });
      // Submitted while this group's transaction is open: not awaited here (a work must not wait on run()).
      if (i === 0) late = Array.from({ length: 3 }, (_, j) => group.run(async (next) => (transactions.push(next), next('rows').insert({ id: `b${j}`, n: j }))));
    }),
  );
  await Promise.all(first);
  await Promise.all(late);
  t.equal(new Set(transactions.slice(0, 3)).size, 1, 'the first three share a transaction');
  t.equal(new Set(transactions.slice(3)).size, 1, 'the three late ones share the next');
  t.not(transactions[0], transactions[3]);
  t.same(await ids(knex), ['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
});

t.test('finishBeforeCommit: once per key, after the works and before the commit; only in a group of several', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex);
  const order: string[] = [];
  const key = {};
  const registered: boolean[] = [];
  await Promise.all(
    Array.from({ length: 4 }, (_, i) =>
      group.run(async (trx) => {
        order.push(`work ${i}`);
        await trx('rows').insert({ id: `w${i}`, n: i });
        registered.push(
          finishBeforeCommit(trx, key, async (last) => {
            order.push('finish');
            // Sees every work's rows, and writes in the same transaction.
            const n = (await last('rows').count({ n: '*' }))[0] as { n: number | string };
            await last('rows').insert({ id: 'total', n: Number(n.n) });
          }),
        );
      }),
    ),
  );
  t.same(order, ['work 0', 'work 1', 'work 2', 'work 3', 'finish'], 'the finish ran once, after the last work');
  t.same(registered, [true, true, true, true]);
  t.equal(Number(((await knex('rows').where({ id: 'total' }).first()) as { n: number }).n), 4, 'its write is committed with the works’');

  const alone = await group.run(async (trx) => finishBeforeCommit(trx, key, async () => void t.fail('a work alone finishes nothing')));
  t.equal(alone, false, 'a work alone: false, the caller writes at once');
  t.equal(await knex.transaction(async (trx) => finishBeforeCommit(trx, key, async () => void t.fail('not a group'))), false, 'a transaction of the caller’s own: false');
});

t.test('a failing finish fails the group: its works run again alone, and nothing of the group stays', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex);
  const runs: number[] = [];
  const finishes: boolean[] = [];
  const values = await Promise.all(
    Array.from({ length: 3 }, (_, i) =>
      group.run(async (trx) => {
        runs.push(i);
        await trx('rows').insert({ id: `w${i}`, n: i });
        const grouped = finishBeforeCommit(trx, group, async (last) => {
          await last('rows').insert({ id: 'finish', n: 0 });
          throw new Error('finish failed');
        });
        finishes.push(grouped);
        return i;
      }),
    ),
  );
  t.same(values, [0, 1, 2], 'every work succeeds alone');
  t.same(runs, [0, 1, 2, 0, 1, 2], 'in the group, then each alone');
  t.same(finishes, [true, true, true, false, false, false]);
  t.same(await ids(knex), ['w0', 'w1', 'w2'], 'the rows of the works once, none of the failed finish');
});

t.test('parallel groups: up to `parallel` transactions at once, every work committed once with its own value', async (t) => {
  const knex = await database(t);
  const group = new GroupCommit(knex, 3);
  const open = new Set<Knex.Transaction>();
  let most = 0;
  const mysql = knex.client.config.client === 'mysql2';
  const pending: Promise<number>[] = [];
  for (let i = 0; i < 30; i++) {
    pending.push(
      group.run(async (trx) => {
        if (!open.has(trx)) {
          open.add(trx);
          most = Math.max(most, open.size);
          trx.executionPromise.finally(() => open.delete(trx)).catch(() => undefined);
        }
        await trx('rows').insert({ id: `p${String(i).padStart(2, '0')}`, n: i });
        // Holds the transaction open a while, as a round trip to a busy server would.
        if (mysql) await trx.raw('select sleep(0.02)');
        return i;
      }),
    );
    // Works arrive over time: each arrival may start another group while the others are open.
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  t.same(await Promise.all(pending), Array.from({ length: 30 }, (_, i) => i), 'each work’s own value');
  t.equal((await ids(knex)).length, 30, 'every row once');
  t.ok(most <= 3, `never more than 3 transactions open at once (${most})`);
  if (mysql) t.ok(most >= 2, `MySQL/MariaDB: groups were written side by side (${most} at once)`);
  else t.equal(most, 1, 'SQLite: its one connection writes one group at a time');
});
