// `npm run bench -- events`: the event store's hash chain, measured beside peers in the same run.
//
// On SQLite (a temp file) and on MariaDB (a fresh database, dropped afterwards), each with the kernel's default
// pool (config/default.yaml database.pool):
//   append    APPEND_EVENTS events through EventStore.append by WRITERS concurrent writers (each appends, awaits,
//             appends again); events/s. Peer: the same rows INSERTed by the same writers into a table of the same
//             shape with no chain (no head row, no lock, no hash): what the chain costs.
//   verify    EventStore.verify() over the whole chain (bounded pages: read, canonical JSON, SHA-256, links);
//             events/s. Peer: plain SHA-256 of the same events' canonical JSON strings, in memory.
// Then, once (SQLite), webhook deliveries/s: a kernel with one webhook trigger on CERTIFICATE-IMPORTED events
// pointing at a local receiver; DELIVERIES events appended at once, timed until the receiver has them all
// (dispatch + delivery jobs + signed POSTs). Peer: the same number of signed POSTs sent straight to the receiver
// by WRITERS concurrent senders.
// A measurement: the exit code is 0 whatever the ratios (1 only when a part could not run).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import canonicalizeModule from 'canonicalize';
import knexFactory, { type Knex } from 'knex';
import { loadConfig } from '../core/config/index.js';
import { openDatabase, type Database } from '../core/db/connection.js';
import { CORE_MIGRATIONS } from '../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../core/db/migrator.js';
import { chainedFields } from '../core/events/chain.js';
import { EventStore, eventOfRow, rowOfEvent, type EventRow, type NewEventInput } from '../core/events/store.js';
import { cpuBusy, fmt } from './lib/measure.js';
import { webhookDeliveries } from './lib/events-webhook.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

const WRITERS = 32;
const APPEND_EVENTS = Number(process.env.EVENTS_APPEND ?? 20_000);
const WARMUP_EVENTS = 500;
/** Minimum events verified (the chain is padded to this with more appends, not timed). */
const VERIFY_EVENTS = Number(process.env.EVENTS_VERIFY ?? 100_000);
const DELIVERIES = Number(process.env.EVENTS_DELIVERIES ?? 2_000);
const MARIADB = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };

interface Row {
  engine: string;
  append: number;
  plain: number;
  verify: number;
  sha: number;
  verified: number;
}

const sample = (n: number): NewEventInput => ({
  tenant: 'default',
  code: 'CERTIFICATE-IMPORTED',
  module: 'inventory',
  status: 'success',
  principal: 'administrator',
  objectType: 'certificate',
  objectId: randomBytes(12).toString('hex'),
  payload: { n, dn: `CN=host-${n}.example.com,O=Example`, serial: randomBytes(16).toString('hex'), profile: 'default' },
});

/** `total` tasks run by `writers` concurrent loops; resolves with the elapsed milliseconds. */
async function concurrently(total: number, writers: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let i = next++; i < total; i = next++) await task(i);
    }),
  );
  return performance.now() - start;
}

async function plainTable(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('bench_events_plain');
  await knex.schema.createTable('bench_events_plain', (t) => {
    t.string('id', 24).primary();
    t.bigInteger('seq').notNullable();
    t.string('tenant', 64).notNullable();
    t.string('code', 64).notNullable();
    t.string('module', 64).notNullable();
    t.string('status', 16).notNullable();
    t.string('principal', 255).nullable();
    t.string('object_type', 64).nullable();
    t.string('object_id', 255).nullable();
    t.text('payload').notNullable();
    t.bigInteger('created_at').notNullable();
    t.string('prev_hash', 64).notNullable();
    t.string('hash', 64).notNullable();
  });
}

async function measureEngine(engine: string, db: Database): Promise<Row> {
  const knex = db.knex;
  await migrateLatest(knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  const store = new EventStore(knex, db.engine);
  await concurrently(WARMUP_EVENTS, WRITERS, (i) => store.append(sample(i)));

  const appendMs = await concurrently(APPEND_EVENTS, WRITERS, (i) => store.append(sample(i)));

  await plainTable(knex);
  let seq = 0;
  const plainMs = await concurrently(APPEND_EVENTS, WRITERS, async (i) => {
    const e = sample(i);
    const createdAt = Date.now();
    // The row an append writes, with no chain behind it: no head lock, no hash.
    await knex('bench_events_plain').insert(
      rowOfEvent({
        id: randomBytes(12).toString('hex'),
        seq: ++seq,
        tenant: e.tenant,
        code: e.code,
        module: e.module,
        status: e.status,
        principal: e.principal ?? null,
        objectType: e.objectType ?? null,
        objectId: e.objectId ?? null,
        payload: JSON.stringify(e.payload),
        createdAt,
        prevHash: '0'.repeat(64),
        hash: '0'.repeat(64),
      }),
    );
  });
  await knex.schema.dropTableIfExists('bench_events_plain');

  // Pad the chain to VERIFY_EVENTS (not timed).
  const have = WARMUP_EVENTS + APPEND_EVENTS;
  if (have < VERIFY_EVENTS) await concurrently(VERIFY_EVENTS - have, WRITERS, (i) => store.append(sample(i)));

  const verifyStart = performance.now();
  const verdict = await store.verify();
  const verifyMs = performance.now() - verifyStart;
  if (!verdict.ok) throw new Error(`${engine}: the chain did not verify: ${JSON.stringify(verdict)}`);

  // The peer hashes exactly what verify hashes: each event's canonical JSON (read beforehand, not timed).
  const strings: string[] = [];
  for (let after = 0; ; ) {
    const rows = (await knex('events').where('seq', '>', after).orderBy('seq').limit(5000)) as EventRow[];
    if (rows.length === 0) break;
    for (const r of rows) {
      strings.push(canonicalize(chainedFields(eventOfRow(r))) as string);
    }
    after = Number(rows[rows.length - 1]!.seq);
  }
  const shaStart = performance.now();
  let sink = 0;
  for (const s of strings) sink ^= createHash('sha256').update(s).digest()[0]!;
  const shaMs = performance.now() - shaStart;
  if (sink === 256) process.stdout.write(''); // keeps the loop from being optimised away

  return {
    engine,
    append: (APPEND_EVENTS / appendMs) * 1000,
    plain: (APPEND_EVENTS / plainMs) * 1000,
    verify: (verdict.count / verifyMs) * 1000,
    sha: (strings.length / shaMs) * 1000,
    verified: verdict.count,
  };
}

async function onSqlite(): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'cw-bench-events-'));
  const db = openDatabase({ url: null, dataDir: dir, pool: { min: 0, max: 10 } });
  try {
    return await measureEngine('SQLite', db);
  } finally {
    await db.knex.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onMariadb(pool: { min: number; max: number }): Promise<Row> {
  const name = `certwright_bench_events_${randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'mysql2', connection: { ...MARIADB, connectTimeout: 3_000 }, pool: { min: 0, max: 1 } });
  await admin.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4', [name]);
  const db = openDatabase({ url: `mysql://root@127.0.0.1:3306/${name}`, dataDir: tmpdir(), pool });
  try {
    return await measureEngine('MariaDB', db);
  } finally {
    await db.knex.destroy();
    await admin.raw('DROP DATABASE IF EXISTS ??', [name]);
    await admin.destroy();
  }
}

export async function run(): Promise<void> {
  const config = loadConfig({ env: {} });
  const busy = await cpuBusy(1000);
  process.stdout.write(`events benchmark: ${WRITERS} concurrent writers, ${fmt(APPEND_EVENTS)} appends, verify ≥ ${fmt(VERIFY_EVENTS)} events; CPU busy before start ${fmt(busy * 100)}%\n\n`);
  const rows: Row[] = [];
  let failed = false;
  for (const [label, part] of [
    ['SQLite', () => onSqlite()],
    ['MariaDB', () => onMariadb(config.database.pool)],
  ] as const) {
    try {
      rows.push(await part());
    } catch (err) {
      failed = true;
      process.stdout.write(`${label}: could not run: ${(err as Error).message}\n`);
    }
  }
  const table = [
    ['engine', 'append ev/s', 'unchained INSERT/s', 'append/unchained', 'verify ev/s', 'plain SHA-256/s', 'verify/SHA-256'],
    ...rows.map((r) => [r.engine, fmt(r.append), fmt(r.plain), `${fmt((r.append / r.plain) * 100, 1)}%`, fmt(r.verify), fmt(r.sha), `${fmt((r.verify / r.sha) * 100, 1)}%`]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(`${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
  for (const r of rows) process.stdout.write(`  ${r.engine}: ${fmt(r.verified)} events verified\n`);

  try {
    const d = await webhookDeliveries(DELIVERIES, WRITERS, (n) => createHmac('sha256', 'bench').update(String(n)).digest('hex'));
    process.stdout.write(
      `\nwebhook deliveries (SQLite kernel, ${fmt(DELIVERIES)} events → one webhook trigger → local receiver): ${fmt(d.delivered)} delivered/s; ` +
        `direct signed POSTs by ${WRITERS} senders: ${fmt(d.direct)}/s (${fmt((d.delivered / d.direct) * 100, 1)}%)\n`,
    );
  } catch (err) {
    failed = true;
    process.stdout.write(`\nwebhook deliveries: could not run: ${(err as Error).message}\n`);
  }
  if (failed) process.exitCode = 1;
}
