import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { eventHash, type HashedEvent } from '../../../core/events/chain.js';
import { BrokenRangeError, exportBundle } from '../../../core/events/bundle/export.js';
import type { ProofBundle } from '../../../core/events/bundle/format.js';
import { BundleRangeError, parseBound, resolveRange } from '../../../core/events/bundle/range.js';
import { BundleFormatError, verifyBundle } from '../../../core/events/bundle/verify.js';
import { createIntegrityServices, type IntegrityServices } from '../../../core/events/integrity/services.js';
import { ed25519PublicKey, keyFingerprint, publicKeyPem } from '../../../core/events/integrity/signature.js';
import type { Kernel } from '../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { createPrincipal } from '../../helpers/security.js';

const event = (n: number) => ({ tenant: n % 2 ? 'default' : 'other', code: 'TEST-EVENT', module: 'test', status: 'success' as const, principal: n % 3 ? null : 'alice', payload: { n, text: 'é ✓' } });

async function setup(t: Test, count: number): Promise<{ kernel: Kernel; integrity: IntegrityServices }> {
  const kernel = await bootKernel(t);
  const integrity = createIntegrityServices({ knex: kernel.db.knex, events: kernel.events, secrets: kernel.secrets, clock: Date.now, abandonedAfterMs: 60_000 });
  for (let i = 1; i <= count; i++) await kernel.events.append(event(i));
  return { kernel, integrity };
}

/** Exports into memory; answers the parsed bundle (a deep copy each call, to edit freely). */
async function exported(integrity: IntegrityServices, range: { from: number; to: number }): Promise<ProofBundle> {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  await exportBundle(integrity, range, sink);
  return JSON.parse(text) as ProofBundle;
}

const rehash = (e: HashedEvent): HashedEvent => {
  const { hash: _old, ...fields } = e;
  return { ...fields, hash: eventHash(fields) };
};

t.test('an exported range verifies with no database, up to the checkpoint that signs it', async (t) => {
  const { kernel, integrity } = await setup(t, 12);
  await integrity.checkpoints.signAt({ seq: 10, hash: (await kernel.db.knex('events').where({ seq: 10 }).first()).hash });
  const bundle = await exported(integrity, { from: 3, to: 8 });
  t.same(bundle.range, { from: 3, to: 8 });
  t.same(bundle.events.map((e) => e.seq), [3, 4, 5, 6, 7, 8, 9, 10], 'the events run on to the checkpoint at 10');
  t.same(bundle.anchor, { seq: 2, hash: bundle.events[0]!.prevHash });
  t.same(bundle.checkpoints.map((c) => c.seq), [10]);
  t.equal(bundle.keys.length, 1);
  t.same(Object.keys(bundle.events[0]!).sort(), ['code', 'createdAt', 'hash', 'id', 'module', 'objectId', 'objectType', 'payload', 'prevHash', 'principal', 'seq', 'status', 'tenant'], 'every chained field and the hash');
  const key = ed25519PublicKey(bundle.keys[0]!.publicKey);
  t.same(verifyBundle(bundle), { ok: true, events: 8, from: 3, to: 10, checkpoints: 1, keys: [keyFingerprint(key)], pinned: false });
  t.match(verifyBundle(bundle, key), { ok: true, pinned: true }, 'with the key pinned');
  t.equal(Number((await kernel.db.knex('event_checkpoints').count({ n: '*' }))[0]!.n), 1, 'an existing checkpoint proves it: none signed');
});

t.test('with no checkpoint at or after the end, the export signs one for the last event', async (t) => {
  const { kernel, integrity } = await setup(t, 6);
  const bundle = await exported(integrity, { from: 1, to: 4 });
  t.same(bundle.events.map((e) => e.seq), [1, 2, 3, 4]);
  t.same(bundle.anchor, { seq: 0, hash: '0'.repeat(64) });
  t.same(bundle.checkpoints.map((c) => c.seq), [4]);
  t.same((await kernel.db.knex('event_checkpoints').pluck('seq')).map(Number), [4], 'kept in the database, so later checks verify it too');
  t.match(verifyBundle(bundle), { ok: true, events: 4, from: 1, to: 4 });
});

t.test('an edited bundle names the broken event', async (t) => {
  const { integrity } = await setup(t, 8);
  await integrity.checkpoints.signHead();
  const original = await exported(integrity, { from: 2, to: 8 });
  t.match(verifyBundle(original), { ok: true, events: 7 });
  const fresh = () => structuredClone(original);
  const idAt = (seq: number) => original.events.find((e) => e.seq === seq)!.id;
  const check = (name: string, bundle: ProofBundle, seq: number, reason: RegExp, id: string | null = idAt(seq)) =>
    t.match(verifyBundle(bundle), { ok: false, broken: { seq, id, reason } }, name);

  let b = fresh();
  b.events[3]!.payload = JSON.stringify({ n: 99 });
  check('a changed payload', b, 5, /content does not match/);

  b = fresh();
  b.events.splice(2, 1);
  check('a removed event', b, 4, /event 4 is missing/, null);

  b = fresh();
  b.events.pop();
  check('the signed last event removed', b, 8, /event 8 is missing/, null);

  b = fresh();
  b.checkpoints[0]!.hash = b.events[2]!.hash;
  check('a changed checkpoint hash', b, 8, /invalid signature/);

  b = fresh();
  b.checkpoints[0]!.seq = 7;
  check('a moved checkpoint', b, 7, /invalid signature/);

  b = fresh();
  b.checkpoints = [];
  check('no checkpoint', b, 8, /not covered by a signed checkpoint/);

  b = fresh();
  // Edited and every later hash recomputed: the links hold, the signed hash does not.
  b.events[1]!.payload = '{"n":333}';
  for (let i = 1; i < b.events.length; i++) {
    if (i > 1) b.events[i]!.prevHash = b.events[i - 1]!.hash;
    b.events[i] = rehash(b.events[i]!);
  }
  check('a rewritten chain', b, 8, /hash signed at checkpoint 8/);

  b = fresh();
  const [first, second] = [b.events[1]!, b.events[2]!];
  b.events[1] = second;
  b.events[2] = first;
  check('two events swapped', b, 3, /event 3 is missing/, null);

  b = fresh();
  delete (b.events[4] as Partial<HashedEvent>).createdAt;
  check('a field removed', b, 6, /malformed: createdAt/);

  // Another key, re-signing the edited bundle, with its id: refused when the real key is pinned.
  const forger = generateKeyPairSync('ed25519');
  b = fresh();
  b.keys = [{ keyId: keyFingerprint(forger.publicKey), publicKey: publicKeyPem(forger.publicKey) }];
  check('a key swapped in the bundle', b, 8, /not trusted/);
  t.match(verifyBundle(original, forger.publicKey), { ok: false, broken: { seq: 8, reason: /not trusted/ } }, 'a pinned key that did not sign it');

  b = fresh();
  b.keys[0]!.publicKey = publicKeyPem(forger.publicKey);
  check('a key whose id is not its fingerprint', b, 8, /not trusted/);

  t.throws(() => verifyBundle({ format: 'something else' }), BundleFormatError);
  t.throws(() => verifyBundle({ ...fresh(), events: [] }), BundleFormatError);
});

t.test('a range broken in the database is refused, and nothing is signed over it', async (t) => {
  const { kernel, integrity } = await setup(t, 6);
  await kernel.db.knex('events').where({ seq: 3 }).update({ code: 'FORGED' });
  await t.rejects(exported(integrity, { from: 1, to: 6 }), new BrokenRangeError({ seq: 3, id: (await kernel.db.knex('events').where({ seq: 3 }).first()).id, reason: 'event content does not match its hash' }));
  t.equal(Number((await kernel.db.knex('event_checkpoints').count({ n: '*' }))[0]!.n), 0, 'no checkpoint signed');
});

t.test('range bounds: seqs and ISO dates', async (t) => {
  const kernel = await bootKernel(t);
  const times = [Date.parse('2025-01-01T00:00:00Z'), Date.parse('2025-01-02T00:00:00Z'), Date.parse('2025-01-03T00:00:00Z'), Date.parse('2025-01-04T00:00:00Z')];
  // The store takes its clock at construction: one per appended time.
  const { EventStore } = await import('../../../core/events/store.js');
  for (const at of times) await new EventStore(kernel.db.knex, kernel.db.engine, () => at).append(event(1));
  const { knex } = kernel.db;
  t.same(parseBound('7', '--from'), { seq: 7 });
  t.same(parseBound('2025-01-02', '--from'), { date: times[1] });
  t.throws(() => parseBound('0', '--from'), BundleRangeError);
  t.throws(() => parseBound('yesterday', '--to'), /--to: expected a seq/);
  t.same(await resolveRange(knex, 4), { from: 1, to: 4 }, 'default: the whole chain');
  t.same(await resolveRange(knex, 4, parseBound('2025-01-01T12:00:00Z', '--from'), parseBound('2025-01-03T12:00:00Z', '--to')), { from: 2, to: 3 });
  t.same(await resolveRange(knex, 4, { seq: 2 }, parseBound('2025-01-04', '--to')), { from: 2, to: 4 }, 'a date bound is inclusive');
  await t.rejects(resolveRange(knex, 4, parseBound('2025-02-01', '--from')), /no event at or after/);
  await t.rejects(resolveRange(knex, 4, { seq: 3 }, { seq: 2 }), /range is empty/);
  await t.rejects(resolveRange(knex, 4, undefined, { seq: 9 }), /past the chain head/);
  await t.rejects(resolveRange(knex, 0), /chain is empty/);
});

t.test('GET /api/v1/events/integrity/keys publishes the signing key a verifier pins', async (t) => {
  const { kernel, integrity } = await setup(t, 5);
  const res = await kernel.app.inject({ method: 'GET', url: '/api/v1/events/integrity/keys', headers: { host: 'localhost', ...ADMIN_HEADERS } });
  t.equal(res.statusCode, 200);
  const keys = res.json() as { keyId: string; publicKey: string; active: boolean; createdAt: number }[];
  t.equal(keys.length, 1);
  t.equal(keys[0]!.active, true);
  t.notMatch(res.body, /PRIVATE/, 'public keys only');
  const pinned = ed25519PublicKey(keys[0]!.publicKey);
  t.equal(keyFingerprint(pinned), keys[0]!.keyId, 'the key id is its fingerprint');
  // The published key verifies a bundle exported afterwards, pinned.
  const bundle = await exported(integrity, { from: 1, to: 5 });
  t.match(verifyBundle(bundle, pinned), { ok: true, pinned: true });
  // Access: no credentials 401, no search:events 403, a host not served 404.
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/events/integrity/keys', headers: { host: 'localhost' } })).statusCode, 401);
  const nobody = await createPrincipal(kernel, 'keys-nobody');
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/events/integrity/keys', headers: { host: 'localhost', ...nobody.headers } })).statusCode, 403);
  t.equal((await kernel.app.inject({ method: 'GET', url: '/api/v1/events/integrity/keys', headers: { host: 'evil.example', ...ADMIN_HEADERS } })).statusCode, 404);
});
