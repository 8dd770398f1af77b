import t, { type Test } from 'tap';
import { eventHash } from '../../../core/events/chain.js';
import { createIntegrityServices } from '../../../core/events/integrity/services.js';
import { EventStore } from '../../../core/events/store.js';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel } from '../../helpers/kernel.js';
import { caller, createPrincipal, ADMIN_HEADERS } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';

const event = (n: number) => ({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success' as const, objectType: 'certificate', objectId: `c${n}`, payload: { n } });

/** A kernel whose jobs run promptly, with `count` events appended; answers the events' ids by seq. */
async function chain(t: Test, count: number, overrides = {}): Promise<{ kernel: Kernel; ids: Map<number, string> }> {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 }, ...overrides });
  const ids = new Map<number, string>();
  for (let i = 1; i <= count; i++) ids.set(i, (await kernel.events.append(event(i))).id);
  return { kernel, ids };
}

interface Run {
  id: string;
  status: string;
  checked: number;
  headSeq: number | null;
  checkpoints: number;
  startedAt: number;
  finishedAt: number | null;
  result: { ok: boolean; firstBroken?: { seq: number; id: string | null; reason: string } } | null;
}

/** Starts a check through the API and waits for its outcome, read back through the API. */
async function runCheck(t: Test, kernel: Kernel): Promise<Run> {
  const api = caller(kernel, ADMIN_HEADERS);
  const started = await api('GET', '/api/v1/events/integrity/run');
  t.equal(started.statusCode, 202, started.body);
  const run = started.json() as Run;
  let latest = run;
  await until(
    'the integrity run to finish',
    async () => {
      const res = await api('GET', '/api/v1/events/integrity/');
      latest = res.json() as Run;
      return latest.id === run.id && latest.status !== 'running';
    },
    30_000,
    50,
  );
  return latest;
}

/** Rows keyed by seq, straight from the table. */
const row = (kernel: Kernel, seq: number) => kernel.db.knex('events').where({ seq }).first();

t.test('a clean chain passes; the state says what was checked', async (t) => {
  const { kernel } = await chain(t, 25);
  const api = caller(kernel, ADMIN_HEADERS);
  const none = await api('GET', '/api/v1/events/integrity/');
  t.equal(none.statusCode, 404, 'no run yet');
  t.equal(none.json().error, 'EVT-INTEG-003');

  const run = await runCheck(t, kernel);
  t.equal(run.status, 'succeeded');
  t.same(run.result, { ok: true });
  t.equal(run.headSeq, 25);
  t.equal(run.checked, 25, 'every event verified');
  t.ok(run.finishedAt! >= run.startedAt);
  const res = await api('GET', '/api/v1/events/integrity/');
  t.equal(res.headers['content-type'], 'application/json');
});

t.test('a run already running is answered instead of a second one', async (t) => {
  // Jobs off: the run stays running, as a long one would.
  const { kernel } = await chain(t, 3, { scheduler: { enabled: false } });
  const api = caller(kernel, ADMIN_HEADERS);
  const [a, b] = await Promise.all([api('GET', '/api/v1/events/integrity/run'), api('GET', '/api/v1/events/integrity/run')]);
  t.equal(a.json().status, 'running');
  t.equal(a.json().id, b.json().id, 'the same run');
  t.equal((await api('GET', '/api/v1/events/integrity/run')).json().id, a.json().id);
  t.equal(Number((await kernel.db.knex('event_integrity_runs').count({ n: '*' }))[0]!.n), 1, 'one run row');
  const agendaJobs = await kernel.db.knex('scheduler_jobs').where({ name: 'events.integrity' }).count({ n: '*' });
  t.equal(Number(agendaJobs[0]!.n), 1, 'one verification job');
});

t.test('running a check takes the system permission; reading it takes search:events', async (t) => {
  const { kernel } = await chain(t, 2);
  const reader = await createPrincipal(kernel, 'auditor', { permissions: [{ value: 'search:events' }] });
  const asReader = caller(kernel, reader.headers);
  t.equal((await asReader('GET', '/api/v1/events/integrity/run')).statusCode, 403);
  await runCheck(t, kernel);
  const read = await asReader('GET', '/api/v1/events/integrity/');
  t.equal(read.statusCode, 200);
  t.equal(read.json().status, 'succeeded');
});

t.test('tampering in the database is found at the right event', async (t) => {
  const cases: { name: string; tamper: (kernel: Kernel, ids: Map<number, string>) => Promise<unknown>; seq: number; id: (ids: Map<number, string>) => string | null; reason: RegExp }[] = [
    {
      name: 'an edited payload',
      tamper: (k) => k.db.knex('events').where({ seq: 4 }).update({ payload: JSON.stringify({ n: 99 }) }),
      seq: 4,
      id: (ids) => ids.get(4)!,
      reason: /content does not match/,
    },
    {
      name: 'an edited code',
      tamper: (k) => k.db.knex('events').where({ seq: 2 }).update({ code: 'FORGED' }),
      seq: 2,
      id: (ids) => ids.get(2)!,
      reason: /content does not match/,
    },
    { name: 'a removed event', tamper: (k) => k.db.knex('events').where({ seq: 3 }).delete(), seq: 3, id: () => null, reason: /event 3 is missing/ },
    { name: 'a removed tail', tamper: (k) => k.db.knex('events').where({ seq: 6 }).delete(), seq: 6, id: () => null, reason: /event 6 is missing/ },
    {
      name: 'two events swapped',
      tamper: async (k) => {
        const knex = k.db.knex;
        await knex('events').where({ seq: 2 }).update({ seq: 1000 });
        await knex('events').where({ seq: 5 }).update({ seq: 2 });
        await knex('events').where({ seq: 1000 }).update({ seq: 5 });
      },
      seq: 2,
      id: (ids) => ids.get(5)!,
      reason: /previous hash/,
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const { kernel, ids } = await chain(t, 6);
      await c.tamper(kernel, ids);
      const run = await runCheck(t, kernel);
      t.equal(run.status, 'failed');
      t.equal(run.result?.ok, false);
      t.match(run.result?.firstBroken, { seq: c.seq, id: c.id(ids), reason: c.reason });
    });
  }
});

t.test('a chain rewritten with recomputed hashes fails on the checkpoint', async (t) => {
  const { kernel, ids } = await chain(t, 8);
  const integrity = createIntegrityServices({ knex: kernel.db.knex, events: kernel.events, secrets: kernel.secrets, clock: Date.now, abandonedAfterMs: 60_000 });
  await integrity.checkpoints.signAt({ seq: 5, hash: (await row(kernel, 5)).hash });
  // The forger edits event 3 and recomputes every hash after it, and the head: the links all hold.
  let prevHash = (await row(kernel, 2)).hash as string;
  for (let seq = 3; seq <= 8; seq++) {
    const r = await row(kernel, seq);
    const fields = { id: r.id, seq, tenant: r.tenant, code: r.code, module: r.module, status: r.status, principal: r.principal, objectType: r.object_type, objectId: r.object_id, payload: seq === 3 ? '{"n":333}' : r.payload, createdAt: Number(r.created_at), prevHash };
    prevHash = eventHash(fields);
    await kernel.db.knex('events').where({ seq }).update({ payload: fields.payload, prev_hash: fields.prevHash, hash: prevHash });
  }
  await kernel.db.knex('event_chain').where({ id: 1 }).update({ hash: prevHash });
  t.same(await kernel.events.verify(), { ok: true, count: 8 }, 'the links alone do not show it');

  const run = await runCheck(t, kernel);
  t.equal(run.status, 'failed');
  t.match(run.result?.firstBroken, { seq: 5, id: ids.get(5), reason: /hash signed at checkpoint 5/ });
});

t.test('concurrent appends from many writers keep one valid chain', async (t) => {
  const { kernel } = await chain(t, 0, { database: { pool: { min: 0, max: 8 } } });
  const writers = Array.from({ length: 4 }, () => new EventStore(kernel.db.knex, kernel.db.engine));
  await Promise.all(Array.from({ length: 120 }, (_, i) => writers[i % writers.length]!.append(event(i))));
  const run = await runCheck(t, kernel);
  t.equal(run.status, 'succeeded');
  t.equal(run.checked, 120);
});
