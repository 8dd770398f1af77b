import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import t, { type Test } from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../../core/db/migrator.js';
import { scopedKv } from '../../../core/plugins/kv-store.js';
import { freshDatabaseUrl } from '../../helpers/database.js';

/**
 * Two nodes on one database (SQLite file, or a fresh one on TEST_DATABASE_URL): each its own knex, as two
 * kernels would have.
 */
async function twoNodes(t: Test): Promise<[Knex, Knex]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-kv-'));
  const url = await freshDatabaseUrl(t);
  const open = (): Knex => openDatabase({ url, dataDir, pool: url ? { min: 0, max: 4 } : { min: 1, max: 1 } }).knex;
  const nodes: [Knex, Knex] = [open(), open()];
  t.teardown(async () => {
    for (const knex of nodes) await knex.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await migrateLatest(nodes[0], CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  return nodes;
}

const clock = (): number => Date.now();

t.test('increment: adds to an integer (absent: 0) and answers the sum; scoped by plugin and tenant', async (t) => {
  const [knex] = await twoNodes(t);
  const kv = scopedKv(knex, '@vendor/counter', 'default', clock);
  t.equal(await kv.increment('n'), 1, 'absent: 0 + 1');
  t.equal(await kv.increment('n'), 2);
  t.equal(await kv.increment('n', 5), 7);
  t.equal(await kv.increment('n', -2), 5, 'a negative step');
  t.equal(await kv.get('n'), 5, 'get reads the sum as a number');
  t.equal(await kv.increment('fresh', 10), 10, 'a first step other than 1');
  t.equal(await scopedKv(knex, '@vendor/other', 'default', clock).increment('n'), 1, "another plugin's counter of that name is its own");
  t.equal(await scopedKv(knex, '@vendor/counter', 'tenant-b', clock).increment('n'), 1, "another tenant's too");
  await kv.set('n', 41);
  t.equal(await kv.increment('n'), 42, 'continues from a value set');
});

t.test('increment: a stored value that is not an integer, or a bad step, is an error and changes nothing', async (t) => {
  const [knex] = await twoNodes(t);
  const kv = scopedKv(knex, '@vendor/counter', 'default', clock);
  for (const value of ['seven', 7.5, { n: 1 }, [1], null, true, '7']) {
    await kv.set('bad', value);
    await t.rejects(kv.increment('bad'), { name: 'TypeError', message: /stored value is not an integer/ }, `stored ${JSON.stringify(value)}`);
    t.same(await kv.get('bad'), value, `stored ${JSON.stringify(value)}: unchanged`);
  }
  for (const by of [0.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
    await t.rejects(kv.increment('n', by), { name: 'TypeError', message: /step must be a safe integer/ }, `step ${by}`);
  }
  t.equal(await kv.get('n'), undefined, 'a refused step wrote nothing');
});

t.test('increment: concurrent callers on two nodes each get a different number, none lost', async (t) => {
  const nodes = await twoNodes(t);
  const kvs = nodes.map((knex) => scopedKv(knex, '@vendor/counter', 'default', clock));
  const PER_NODE = 40;
  // The first increments race to insert the row too.
  const answers = await Promise.all(Array.from({ length: PER_NODE * 2 }, (_, i) => kvs[i % 2]!.increment('crl-number')));
  t.same([...answers].sort((a, b) => a - b), Array.from({ length: PER_NODE * 2 }, (_, i) => i + 1), 'exactly 1..80, each once');
  t.equal(await kvs[1]!.get('crl-number'), PER_NODE * 2, 'the stored value is the last number handed out');
});

t.test('setIfAbsent: concurrent callers on two nodes all get the first writer’s value', async (t) => {
  const nodes = await twoNodes(t);
  const kvs = nodes.map((knex) => scopedKv(knex, '@vendor/once', 'default', clock));
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => kvs[i % 2]!.setIfAbsent('ca', { writer: i })));
  const stored = (await kvs[0]!.get<{ writer: number }>('ca'))!;
  t.ok(Number.isInteger(stored.writer), 'one value stored');
  t.same(answers, answers.map(() => stored), 'every caller answered with the stored value');
});
