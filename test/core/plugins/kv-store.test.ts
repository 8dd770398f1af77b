import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import t, { type Test } from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../../core/db/migrator.js';
import { deleteExpiredKv } from '../../../core/plugins/kv-expiry.js';
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

/** A clock the test moves (epoch ms). */
function manualClock(start = 1_800_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let at = start;
  return { now: () => at, advance: (ms) => void (at += ms) };
}

const expiryOf = async (knex: Knex, pluginId: string, key: string): Promise<number | null | undefined> => {
  const row = (await knex('plugin_kv').where({ plugin_id: pluginId, tenant: 'default', key }).first('expires_at')) as { expires_at: number | string | null } | undefined;
  return row === undefined ? undefined : row.expires_at === null ? null : Number(row.expires_at);
};

t.test('ttlMs: a value reads until its expiry and is absent from then on; a write without ttlMs keeps it for ever', async (t) => {
  const [knex] = await twoNodes(t);
  const time = manualClock();
  const kv = scopedKv(knex, '@vendor/ttl', 'default', time.now);
  await kv.set('order', { state: 'pending' }, { ttlMs: 1_000 });
  t.equal(await expiryOf(knex, '@vendor/ttl', 'order'), time.now() + 1_000, 'expires_at is the write time plus ttlMs');
  time.advance(999);
  t.same(await kv.get('order'), { state: 'pending' }, 'read 1 ms before its expiry');
  time.advance(1);
  t.equal(await kv.get('order'), undefined, 'absent at its expiry');
  await kv.set('order', { state: 'valid' });
  t.equal(await expiryOf(knex, '@vendor/ttl', 'order'), null, 'rewritten without ttlMs: no expiry');
  time.advance(365 * 86_400_000);
  t.same(await kv.get('order'), { state: 'valid' }, 'still there a year later');
  await kv.set('order', { state: 'again' }, { ttlMs: 5 });
  t.equal(await expiryOf(knex, '@vendor/ttl', 'order'), time.now() + 5, 'a new ttlMs replaces the old expiry');
});

t.test('ttlMs: anything but a positive safe integer is a TypeError and writes nothing', async (t) => {
  const [knex] = await twoNodes(t);
  const kv = scopedKv(knex, '@vendor/ttl', 'default', clock);
  for (const ttlMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2, '60000' as unknown as number]) {
    await t.rejects(kv.set('k', 1, { ttlMs }), { name: 'TypeError', message: /ttlMs must be a positive safe integer/ }, `set, ttlMs ${String(ttlMs)}`);
    await t.rejects(kv.setIfAbsent('k', 1, { ttlMs }), { name: 'TypeError', message: /ttlMs must be a positive safe integer/ }, `setIfAbsent, ttlMs ${String(ttlMs)}`);
  }
  t.equal(await knex('plugin_kv').where({ plugin_id: '@vendor/ttl' }).count({ n: '*' }).first().then((r) => Number((r as { n: number | string }).n)), 0, 'no row written');
});

t.test('setIfAbsent with ttlMs: a live value wins; an expired one is replaced, on two nodes by exactly one writer', async (t) => {
  const nodes = await twoNodes(t);
  const time = manualClock();
  const kvs = nodes.map((knex) => scopedKv(knex, '@vendor/once', 'default', time.now));
  t.equal(await kvs[0]!.setIfAbsent('issued:r1', 'first', { ttlMs: 60_000 }), 'first', 'absent: stored');
  time.advance(59_999);
  t.equal(await kvs[1]!.setIfAbsent('issued:r1', 'second', { ttlMs: 60_000 }), 'first', 'live: the first value is answered');
  t.equal(await expiryOf(nodes[0], '@vendor/once', 'issued:r1'), time.now() + 1, 'and its expiry is unchanged');
  time.advance(1);
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => kvs[i % 2]!.setIfAbsent('issued:r1', `retry-${i}`, { ttlMs: 60_000 })));
  t.equal(new Set(answers).size, 1, 'every caller answered with one value');
  t.match(answers[0], /^retry-\d$/, 'the expired value was replaced by one of the racing writers');
  t.equal(await kvs[0]!.get('issued:r1'), answers[0], 'and it is what is stored');
  t.equal(await expiryOf(nodes[0], '@vendor/once', 'issued:r1'), time.now() + 60_000, 'with the new expiry');
  t.equal(await kvs[0]!.setIfAbsent('plain', 'kept'), 'kept', 'without ttlMs');
  time.advance(10 * 365 * 86_400_000);
  t.equal(await kvs[1]!.setIfAbsent('plain', 'other'), 'kept', 'a value without expiry is never replaced');
});

t.test('increment: a live value keeps its expiry; an expired one starts again from the step, with no expiry', async (t) => {
  const [knex] = await twoNodes(t);
  const time = manualClock();
  const kv = scopedKv(knex, '@vendor/counter', 'default', time.now);
  await kv.set('n', 10, { ttlMs: 1_000 });
  t.equal(await kv.increment('n'), 11, 'live: added to');
  t.equal(await expiryOf(knex, '@vendor/counter', 'n'), time.now() + 1_000, 'live: expiry kept');
  time.advance(1_000);
  t.equal(await kv.get('n'), undefined, 'expired');
  t.equal(await kv.increment('n', 3), 3, 'expired: counts from 0');
  t.equal(await expiryOf(knex, '@vendor/counter', 'n'), null, 'and no longer expires');
  await kv.set('word', 'not a number', { ttlMs: 10 });
  await t.rejects(kv.increment('word'), { name: 'TypeError' }, 'a live value that is not an integer is still refused');
  time.advance(10);
  t.equal(await kv.increment('word'), 1, 'once expired it is as if absent');
});

t.test('deleteExpiredKv: deletes expired values of every plugin and tenant, in batches; live and lasting ones stay', async (t) => {
  const [knex] = await twoNodes(t);
  const time = manualClock();
  const plugins = ['@vendor/a', '@vendor/b'];
  for (const pluginId of plugins) {
    for (const tenant of ['default', 'tenant-b']) {
      const kv = scopedKv(knex, pluginId, tenant, time.now);
      for (let i = 0; i < 7; i++) await kv.set(`short-${i}`, i, { ttlMs: 1_000 });
      await kv.set('long', 'stays', { ttlMs: 10_000 });
      await kv.set('lasting', 'stays');
    }
  }
  t.equal(await deleteExpiredKv(knex, time.now(), 3), 0, 'nothing expired yet');
  time.advance(1_000);
  t.equal(await deleteExpiredKv(knex, time.now(), 3), 28, 'the 28 expired values, 3 per statement');
  const left = (await knex('plugin_kv').whereIn('plugin_id', plugins).select('plugin_id', 'tenant', 'key')) as { key: string }[];
  t.same([...new Set(left.map((r) => r.key))].sort(), ['lasting', 'long'], 'the live and the lasting ones stay');
  t.equal(left.length, 8);
  time.advance(9_000);
  t.equal(await deleteExpiredKv(knex, time.now()), 4, 'later, the longer ones');
});
