import t from 'tap';
import { GroupCommit } from '../../../core/db/group-commit.js';
import { EventStore } from '../../../core/events/store.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';

const event = (n: number) => ({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success' as const, objectType: 'certificate', objectId: `c${n}`, payload: { n } });

t.test('appends form one hash chain that verifies', async (t) => {
  const kernel = await bootKernel(t);
  const store = kernel.events;
  const first = await store.append(event(1));
  t.match(first.id, /^[0-9a-f]{24}$/, 'event ids are 24 hex characters');
  t.equal(first.seq, 1);
  t.equal(first.prevHash, '0'.repeat(64), 'the first event links to the genesis hash');
  const second = await store.append(event(2));
  t.equal(second.prevHash, first.hash, 'each event carries the hash of the previous one');
  const fetched = await store.get('default', second.id);
  t.same(fetched, second, 'stored as appended');
  t.equal(await store.get('other-tenant', second.id), undefined, 'tenant-scoped');
  t.same(await store.verify(), { ok: true, count: 2 });
});

t.test('concurrent writers extend one unbroken chain', async (t) => {
  const kernel = await bootKernel(t, { database: { pool: { min: 0, max: 8 } } });
  t.equal(kernel.db.engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');
  // Two stores on the same database behave like two nodes sharing it.
  const other = new EventStore(kernel.db.knex, kernel.db.engine);
  await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? kernel.events : other).append(event(i))));
  const seqs = (await kernel.db.knex('events').orderBy('seq').pluck('seq')).map(Number);
  t.same(seqs, Array.from({ length: 60 }, (_, i) => i + 1), 'seq 1..60 without gaps or duplicates');
  t.same(await kernel.events.verify(7), { ok: true, count: 60 }, 'verifies across page boundaries');
});

t.test('tampering is found at the right event', async (t) => {
  const setup = async () => {
    const kernel = await bootKernel(t);
    for (let i = 1; i <= 5; i++) await kernel.events.append(event(i));
    return kernel;
  };
  const edited = await setup();
  await edited.db.knex('events').where({ seq: 3 }).update({ payload: JSON.stringify({ n: 99 }) });
  t.match(await edited.events.verify(), { ok: false, seq: 3, reason: /content/ }, 'an edited payload');

  const removed = await setup();
  await removed.db.knex('events').where({ seq: 2 }).delete();
  t.match(await removed.events.verify(), { ok: false, seq: 2, reason: /missing/ }, 'a removed event');

  const truncated = await setup();
  await truncated.db.knex('events').where({ seq: 5 }).delete();
  t.match(await truncated.events.verify(), { ok: false, seq: 5, reason: /head/ }, 'a removed tail');

  const rehashed = await setup();
  // Re-hashing an edited event is not enough: the next event still points at the old hash.
  const { eventHash } = await import('../../../core/events/chain.js');
  const row = await rehashed.db.knex('events').where({ seq: 2 }).first();
  const fields = { id: row.id, seq: 2, tenant: row.tenant, code: 'FORGED', module: row.module, status: row.status, principal: row.principal, objectType: row.object_type, objectId: row.object_id, payload: row.payload, createdAt: Number(row.created_at), prevHash: row.prev_hash };
  await rehashed.db.knex('events').where({ seq: 2 }).update({ code: 'FORGED', hash: eventHash(fields) });
  t.match(await rehashed.events.verify(), { ok: false, seq: 3, reason: /previous hash/ }, 'a forged, re-hashed event breaks the next link');
});

t.test('grouped appends: each caller gets its own event, and a bad event fails alone', async (t) => {
  const kernel = await bootKernel(t);
  const store = kernel.events;
  const heard: number[] = [];
  const listener = (e: { seq: number }) => heard.push(e.seq);
  store.appended.add(listener);
  t.teardown(() => store.appended.delete(listener));
  // Started in one tick: the first goes alone, the rest wait and share the next transactions.
  const outcomes = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => store.append(i === 17 ? { ...event(i), code: null as unknown as string } : event(i))),
  );
  const rejected = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
  t.same(rejected, [17], 'only the event without a code is refused');
  const stored = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  t.same(stored.map((e) => (JSON.parse(e.payload) as { n: number }).n), Array.from({ length: 50 }, (_, i) => i).filter((i) => i !== 17), 'each caller answered with its own event');
  t.same(stored.map((e) => e.seq).sort((a, b) => a - b), Array.from({ length: 49 }, (_, i) => i + 1), 'seq 1..49: the refused event left no gap');
  t.same(heard.sort((a, b) => a - b), Array.from({ length: 49 }, (_, i) => i + 1), 'listeners hear each committed event once');
  t.same(await store.verify(), { ok: true, count: 49 });
});

t.test('several appends in one transaction, one of them in a savepoint, keep one chain', async (t) => {
  const kernel = await bootKernel(t, { database: { pool: { min: 0, max: 4 } } });
  const store = kernel.events;
  await store.append(event(0));
  await kernel.db.knex.transaction(async (trx) => {
    await store.appendAll([event(1), event(2)], { trx });
    await store.append(event(3), { trx });
    // A savepoint that appends and is released: the transaction's next append reads the head it left.
    await trx.transaction(async (savepoint) => {
      await store.append(event(4), { trx: savepoint });
    });
    await store.append(event(5), { trx });
    // A savepoint that appends and is rolled back: its event is gone and the chain goes on from before it.
    await trx
      .transaction(async (savepoint) => {
        await store.append(event(6), { trx: savepoint });
        throw new Error('undo');
      })
      .catch(() => undefined);
    await store.appendAll([event(7)], { trx });
  });
  // Appends after the transaction, from another store (another node) too.
  await new EventStore(kernel.db.knex, kernel.db.engine).append(event(8));
  await store.append(event(9));
  const rows = (await kernel.db.knex('events').orderBy('seq').select('seq', 'payload')) as { seq: number | string; payload: string }[];
  t.same(
    rows.map((r) => [Number(r.seq), (JSON.parse(r.payload) as { n: number }).n]),
    [0, 1, 2, 3, 4, 5, 7, 8, 9].map((n, i) => [i + 1, n]),
    'every committed event once, in order, without gaps',
  );
  t.same(await store.verify(), { ok: true, count: 9 });
});

t.test('events appended by the works of a group commit: written once at its end, one chain, nothing of a failed work', async (t) => {
  const kernel = await bootKernel(t);
  const store = kernel.events;
  const group = new GroupCommit(kernel.db.knex);
  await store.append(event(0));
  /** `n` works started together (one group), each appending two events; work `failing` throws after its appends. */
  const works = (base: number, n: number, failing?: number) =>
    Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        group.run(async (trx) => {
          const [a, b] = await store.appendAll([event(base + 2 * i), event(base + 2 * i + 1)], { trx });
          if (i === failing) throw new Error(`work ${i} failed`);
          return [a!.seq, b!.seq];
        }),
      ),
    );
  const stored = async () => (await kernel.db.knex('events').orderBy('seq').select('seq', 'payload')) as { seq: number | string; payload: string }[];

  const grouped = await works(100, 12);
  t.ok(grouped.every((o) => o.status === 'fulfilled'));
  let rows = await stored();
  t.same(rows.map((r) => (JSON.parse(r.payload) as { n: number }).n), [0, ...Array.from({ length: 24 }, (_, i) => 100 + i)], 'every event once, in the works’ order');
  t.same(
    grouped.flatMap((o) => (o as PromiseFulfilledResult<number[]>).value),
    Array.from({ length: 24 }, (_, i) => i + 2),
    'each work was answered the seqs its events are stored at',
  );
  t.same(await store.verify(), { ok: true, count: 25 });

  const failed = await works(200, 6, 2);
  t.same(failed.map((o) => o.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  rows = await stored();
  t.same(rows.slice(25).map((r) => (JSON.parse(r.payload) as { n: number }).n), [200, 201, 202, 203, 206, 207, 208, 209, 210, 211], 'none of the failed work’s events');
  t.same(rows.map((r) => Number(r.seq)), Array.from({ length: 35 }, (_, i) => i + 1), 'seq without gaps');
  t.same(await store.verify(), { ok: true, count: 35 });

  // A savepoint appending in a group transaction that holds unwritten events would read an older head: refused
  // there, and the work then runs alone.
  const tries: number[] = [];
  const both = await Promise.all(
    [0, 1].map((i) =>
      group.run(async (trx) => {
        tries.push(i);
        await store.append(event(300 + i), { trx });
        await trx.transaction(async (savepoint) => void (await store.append(event(400 + i), { trx: savepoint })));
        return i;
      }),
    ),
  );
  t.same(both, [0, 1]);
  t.same(tries, [0, 0, 1], 'refused in the group (which stopped there), then each work alone');
  t.same(await store.verify(), { ok: true, count: 39 });
});

t.test('record: in a group, chained at its end, after what was appended before and before what comes after', async (t) => {
  const kernel = await bootKernel(t, { database: { pool: { min: 0, max: 8 } } });
  const store = kernel.events;
  const payloads = async () => ((await kernel.db.knex('events').orderBy('seq').select('payload')) as { payload: string }[]).map((r) => (JSON.parse(r.payload) as { n: number }).n);

  // Outside a group commit, record is appendAll: written at once.
  await kernel.db.knex.transaction(async (trx) => {
    await store.record([event(1)], { trx });
    t.equal(Number(((await trx('event_chain').where({ id: 1 }).first('seq')) as { seq: number }).seq), 1, 'the head moved at once');
  });

  const group = new GroupCommit(kernel.db.knex);
  const answered = await Promise.all([
    group.run(async (trx) => {
      await store.record([event(2), event(3)], { trx });
      // An append with an answer: the held-back events are chained first, so its seq comes after them.
      const e = await store.append(event(4), { trx });
      await store.record([event(5)], { trx });
      return e.seq;
    }),
    group.run(async (trx) => {
      await store.record([event(6)], { trx });
      return 0;
    }),
  ]);
  t.same(await payloads(), [1, 2, 3, 4, 5, 6], 'the order of the calls');
  t.equal(answered[0], 4, 'the append was answered its stored seq');
  t.same(await store.verify(), { ok: true, count: 6 });

  // Groups side by side (MySQL/MariaDB: on their own connections), each recording events: one chain.
  const parallel = new GroupCommit(kernel.db.knex, 4);
  const heard: number[] = [];
  const listener = (e: { seq: number }) => heard.push(e.seq);
  store.appended.add(listener);
  t.teardown(() => store.appended.delete(listener));
  const works: Promise<void>[] = [];
  for (let i = 0; i < 40; i++) {
    works.push(parallel.run((trx) => store.record([event(100 + i), event(200 + i)], { trx })));
    if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(works);
  const all = await payloads();
  t.equal(all.length, 86);
  for (let i = 0; i < 40; i++) {
    const at = all.indexOf(100 + i);
    t.equal(all[at + 1], 200 + i, `work ${i}: its two events once, side by side`);
  }
  t.same(heard.sort((a, b) => a - b), Array.from({ length: 80 }, (_, i) => i + 7), 'listeners heard each recorded event once, after its commit');
  t.same(await store.verify(), { ok: true, count: 86 });
});
