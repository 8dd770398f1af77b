import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { createIntegrityServices } from '../../../core/events/integrity/services.js';
import { checkpointSignatureValid, ed25519PublicKey, keyFingerprint, publicKeyPem, signCheckpoint } from '../../../core/events/integrity/signature.js';
import { SigningKeys } from '../../../core/events/integrity/signing-keys.js';
import type { Kernel } from '../../../core/kernel.js';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';
import { until } from '../../helpers/until.js';

const event = (n: number) => ({ tenant: 'default', code: 'TEST-EVENT', module: 'test', status: 'success' as const, payload: { n } });

const integrityOf = (kernel: Kernel) =>
  createIntegrityServices({ knex: kernel.db.knex, events: kernel.events, secrets: kernel.secrets, clock: Date.now, abandonedAfterMs: 60_000 });

interface CheckpointRow {
  seq: number | string;
  hash: string;
  signed_at: number | string;
  key_id: string;
  signature: string;
  ordinal: number | string;
}
const checkpointRows = async (kernel: Kernel) => ((await kernel.db.knex('event_checkpoints').orderBy('seq')) as CheckpointRow[]).map((r) => ({ ...r, seq: Number(r.seq), signed_at: Number(r.signed_at), ordinal: Number(r.ordinal) }));

async function runCheck(kernel: Kernel): Promise<{ status: string; checkpoints: number; result: { ok: boolean; firstBroken?: { seq: number; reason: string } } }> {
  const api = caller(kernel, ADMIN_HEADERS);
  const { id } = (await api('GET', '/api/v1/events/integrity/run')).json() as { id: string };
  let run: { id: string; status: string } = { id: '', status: 'running' };
  await until('the integrity run to finish', async () => {
    run = (await api('GET', '/api/v1/events/integrity/')).json();
    return run.id === id && run.status !== 'running';
  }, 30_000, 50);
  return run as never;
}

t.test('a checkpoint is signed after every N events, and verifies', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 }, events: { checkpoint: { everyEvents: 5, everyMinutes: 60 } } });
  for (let i = 1; i <= 4; i++) await kernel.events.append(event(i));
  t.same(await checkpointRows(kernel), [], 'no checkpoint before N events');
  await kernel.events.append(event(5));
  await until('a checkpoint at seq 5', async () => (await checkpointRows(kernel)).some((c) => c.seq === 5), 30_000, 50);
  for (let i = 6; i <= 10; i++) await kernel.events.append(event(i));
  // The job signs the head it finds, so at 10 or just past it.
  await until('a checkpoint past seq 10', async () => (await checkpointRows(kernel)).some((c) => c.seq >= 10), 30_000, 50);
  t.same((await checkpointRows(kernel)).map((c) => c.seq), [5, 10], 'one checkpoint per N events');
  t.same((await checkpointRows(kernel)).map((c) => c.ordinal), [1, 2], 'numbered as they are signed');
  const rows = await checkpointRows(kernel);
  const key = (await kernel.db.knex('event_signing_keys').first()) as { key_id: string; public_key: string };
  const publicKey = ed25519PublicKey(key.public_key);
  t.equal(keyFingerprint(publicKey), key.key_id, 'the key id is the fingerprint of the public key');
  for (const row of rows) {
    const event = await kernel.db.knex('events').where({ seq: row.seq }).first();
    t.equal(row.hash, event.hash, `checkpoint ${row.seq} signs the hash of event ${row.seq}`);
    t.ok(checkpointSignatureValid({ seq: row.seq, hash: row.hash, signedAt: row.signed_at, keyId: row.key_id, ordinal: row.ordinal, signature: row.signature }, publicKey), `checkpoint ${row.seq}: the signature verifies`);
    t.notOk(checkpointSignatureValid({ seq: row.seq, hash: row.hash.replace(/^./, (c) => (c === '0' ? '1' : '0')), signedAt: row.signed_at, keyId: row.key_id, ordinal: row.ordinal, signature: row.signature }, publicKey), 'not over another hash');
    t.notOk(checkpointSignatureValid({ seq: row.seq, hash: row.hash, signedAt: row.signed_at, keyId: row.key_id, ordinal: row.ordinal + 1, signature: row.signature }, publicKey), 'not under another number');
  }
  const run = await runCheck(kernel);
  t.equal(run.status, 'succeeded');
  t.equal(run.checkpoints, rows.length, 'the integrity run verified every checkpoint');
});

t.test('the timed checkpoint job signs the head only when it moved', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 }, events: { checkpoint: { everyEvents: 1000, everyMinutes: 7 } } });
  const repeating = await kernel.db.knex('scheduler_jobs').where({ name: 'events.checkpoint' }).whereNotNull('repeat_interval');
  t.equal(repeating.length, 1, 'one repeating checkpoint job');
  t.equal(Number(repeating[0].repeat_interval), 7 * 60_000, 'every everyMinutes');

  for (let i = 1; i <= 3; i++) await kernel.events.append(event(i));
  await kernel.scheduler.now('events.checkpoint');
  await until('a checkpoint at the head', async () => (await checkpointRows(kernel)).some((c) => c.seq === 3), 30_000, 50);

  const integrity = integrityOf(kernel);
  t.equal(await integrity.checkpoints.signHead(), null, 'the head did not move: nothing to sign');
  await kernel.events.append(event(4));
  t.match(await integrity.checkpoints.signHead(), { seq: 4 }, 'it moved: signed');
  t.same((await checkpointRows(kernel)).map((c) => c.seq), [3, 4]);
});

t.test('the signing key is sealed in the database and created once when nodes race', async (t) => {
  const kernel = await bootKernel(t, { database: { pool: { min: 0, max: 8 } } });
  // Eight "nodes" (own caches) needing the key at once: each may generate one, one row wins.
  const nodes = Array.from({ length: 8 }, () => new SigningKeys(kernel.db.knex, kernel.secrets));
  const keys = await Promise.all(nodes.map((n) => n.current()));
  t.equal(new Set(keys.map((k) => k.keyId)).size, 1, 'every node signs with the same key');
  const rows = (await kernel.db.knex('event_signing_keys').select()) as { key_id: string; private_key_sealed: string; public_key: string }[];
  t.equal(rows.length, 1, 'one key row');
  const row = rows[0]!;
  t.equal(row.key_id, keys[0]!.keyId);

  t.match(row.private_key_sealed, /^cw1\./, 'sealed by the SecretBox');
  const der = keys[0]!.privateKey.export({ type: 'pkcs8', format: 'der' });
  const pem = keys[0]!.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const rawSeed = der.subarray(-32);
  for (const plain of [der.toString('base64'), der.toString('base64url'), der.toString('hex'), rawSeed.toString('base64'), rawSeed.toString('base64url'), rawSeed.toString('hex'), pem]) {
    t.notOk(JSON.stringify(row).includes(plain), 'no plaintext form of the private key in the row');
  }
  t.same(createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' }), der, 'the key that was checked is the real one');
  // A later node opens the stored key (the master key is needed for that).
  const reopened = await new SigningKeys(kernel.db.knex, kernel.secrets).current();
  t.equal(reopened.keyId, row.key_id);
});

t.test('checkpoints signed by a substituted key fail the integrity check', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 } });
  for (let i = 1; i <= 4; i++) await kernel.events.append(event(i));
  const integrity = integrityOf(kernel);
  await integrity.checkpoints.signHead();
  t.equal((await runCheck(kernel)).status, 'succeeded', 'the genuine checkpoint verifies');

  // A forger with database access but not the master key: swaps in their own public key and re-signs.
  const forger = generateKeyPairSync('ed25519');
  const forgedId = keyFingerprint(forger.publicKey);
  await kernel.db.knex('event_signing_keys').update({ key_id: forgedId, public_key: publicKeyPem(forger.publicKey) });
  const [cp] = await checkpointRows(kernel);
  const forged = signCheckpoint({ seq: cp!.seq, hash: cp!.hash, signedAt: cp!.signed_at, keyId: forgedId }, forger.privateKey);
  await kernel.db.knex('event_checkpoints').where({ seq: cp!.seq }).update({ key_id: forgedId, signature: forged.signature });
  const run = await runCheck(kernel);
  t.equal(run.status, 'failed');
  t.match(run.result.firstBroken, { seq: 4, reason: /not trusted|untrusted/ });
});

t.test('a deleted checkpoint is found: checkpoints are numbered as they are signed, the number signed', async (t) => {
  const kernel = await bootKernel(t, { scheduler: { processEveryMs: 100 } });
  const integrity = integrityOf(kernel);
  for (let n = 1; n <= 12; n++) {
    await kernel.events.append(event(n));
    if (n % 3 === 0) await integrity.checkpoints.signHead();
  }
  // An export signs a checkpoint in the middle of the chain: it takes the next number, not its seq's place.
  const at7 = (await kernel.db.knex('events').where({ seq: 7 }).first()) as { hash: string };
  await integrity.checkpoints.signAt({ seq: 7, hash: at7.hash });
  t.same((await checkpointRows(kernel)).map((c) => [c.seq, c.ordinal]), [[3, 1], [6, 2], [7, 5], [9, 3], [12, 4]]);
  t.equal((await runCheck(kernel)).status, 'succeeded', 'every number present: the check passes');
  // Someone with database access deletes the checkpoint at 6 (say, to rewrite events 4..6 unseen).
  await kernel.db.knex('event_checkpoints').where({ seq: 6 }).delete();
  const run = await runCheck(kernel);
  t.equal(run.status, 'failed');
  t.match(run.result.firstBroken, { seq: 9, reason: /checkpoint number 2 is missing/ }, 'reported at the next numbered checkpoint');
});

t.test('two nodes signing at once take distinct numbers', async (t) => {
  const kernel = await bootKernel(t);
  const a = integrityOf(kernel);
  const b = integrityOf(kernel);
  for (let n = 1; n <= 20; n++) await kernel.events.append(event(n));
  const rows = (await kernel.db.knex('events').whereIn('seq', [4, 8, 12, 16, 20]).orderBy('seq')) as { seq: number | string; hash: string }[];
  await Promise.all(rows.flatMap((r) => [a.checkpoints.signAt({ seq: Number(r.seq), hash: r.hash }), b.checkpoints.signAt({ seq: Number(r.seq), hash: r.hash })]));
  const signed = await checkpointRows(kernel);
  t.same(signed.map((c) => c.seq), [4, 8, 12, 16, 20], 'one checkpoint per seq');
  t.same(signed.map((c) => c.ordinal).sort((x, y) => x - y), [1, 2, 3, 4, 5], 'numbers 1..5, none twice, none skipped');
});
