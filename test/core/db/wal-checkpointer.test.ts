import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import pino from 'pino';
import { WAL_AUTOCHECKPOINT } from '../../../core/db/connection.js';
import { checkpointOffThread, SAFETY_NET_FRAMES, WAL_SIZE_LIMIT_BYTES, WalCheckpointer } from '../../../core/db/wal-checkpointer.js';
import { bootKernel, LogCapture } from '../../helpers/kernel.js';

/**
 * SQLite's WAL checkpoints run on a worker thread (core/db/wal-checkpointer.ts): the database file gets the
 * pages the WAL holds without the writer's connection copying them. What a user would check: the rows are in
 * the database file itself (a copy of the file alone, without its -wal, has them).
 */

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Rows of `table` in a copy of the database file alone (what the checkpoints have put there). */
async function rowsInFileAlone(filename: string, dir: string, table: string): Promise<number> {
  const copy = join(dir, `copy-${Date.now()}-${Math.random()}.db`);
  copyFileSync(filename, copy);
  const db = openDatabase({ url: `sqlite:${copy}`, dataDir: dir, pool: { min: 1, max: 1 } });
  try {
    const found = (await db.knex.raw('SELECT COUNT(*) AS n FROM sqlite_master WHERE name = ?', [table])) as { n: number }[];
    if (found[0]!.n === 0) return 0;
    return Number(((await db.knex(table).count({ n: '*' })) as { n: number }[])[0]!.n);
  } finally {
    await db.knex.destroy();
  }
}

t.test('the worker copies the WAL into the database file while the writer never checkpoints', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-wal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase({ url: null, dataDir: dir, pool: { min: 1, max: 1 } });
  t.teardown(() => db.knex.destroy());
  // The writer's automatic checkpoint off: only the worker can move pages into the file.
  await db.knex.raw('PRAGMA wal_autocheckpoint = 0');
  await db.knex.raw('CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const body = 'x'.repeat(1000);
  for (let i = 0; i < 20; i++) await db.knex('items').insert(Array.from({ length: 50 }, (_, j) => ({ id: i * 50 + j + 1, body })));
  t.equal(await rowsInFileAlone(db.filename!, dir, 'items'), 0, 'before: the rows are only in the WAL');

  const checkpointer = WalCheckpointer.start(db.filename!, 20);
  t.ok(checkpointer, 'the worker started');
  t.teardown(() => checkpointer!.stop());
  await until('a pass that copied every frame', () => checkpointer!.stats.passes > 0 && checkpointer!.stats.lastCheckpointed === checkpointer!.stats.lastLog);
  t.ok(checkpointer!.stats.lastCheckpointed > 0, `frames copied: ${checkpointer!.stats.lastCheckpointed}`);
  t.equal(await rowsInFileAlone(db.filename!, dir, 'items'), 1000, 'after: the database file alone has every row');

  // Writes go on beside it, and reach the file too. Waited for as a user would, by the file's content: a pass
  // under way when the row is written reports every frame it saw copied without the new ones.
  await db.knex('items').insert({ id: 1001, body });
  let inFile = 0;
  await until('a later write in the file', async () => (inFile = await rowsInFileAlone(db.filename!, dir, 'items')) === 1001).catch(() => undefined);
  t.equal(inFile, 1001, 'a later write reached the file');

  await checkpointer!.stop();
  t.equal(checkpointer!.running, false, 'stopped');
  const stoppedAt = checkpointer!.stats.passes;
  await db.knex('items').insert({ id: 1002, body });
  await new Promise((r) => setTimeout(r, 150));
  t.equal(checkpointer!.stats.passes, stoppedAt, 'no pass after stop');
  t.equal(await rowsInFileAlone(db.filename!, dir, 'items'), 1001, 'and nothing copied after it');
  await checkpointer!.stop(); // twice: harmless
});

t.test('a worker that cannot open its database ends, and stopping it still answers', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-wal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const checkpointer = WalCheckpointer.start(join(dir, 'missing.db'), 20);
  t.ok(checkpointer);
  await until('the worker ended', () => !checkpointer!.running);
  t.equal(checkpointer!.stats.passes, 0, 'no pass');
  t.notOk(existsSync(join(dir, 'missing.db')), 'no database file was created');
  await checkpointer!.stop();
});

t.test("a worker that dies is logged, and the connection's own checkpoint threshold comes back", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-wal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase({ url: null, dataDir: dir, pool: { min: 1, max: 1 } });
  t.teardown(() => db.knex.destroy());
  const capture = new LogCapture();
  const threshold = async (): Promise<number> => ((await db.knex.raw('PRAGMA wal_autocheckpoint')) as { wal_autocheckpoint: number }[])[0]!.wal_autocheckpoint;
  // The worker is pointed at a file that is not there: it dies at once, after or during the raise.
  const checkpointer = await checkpointOffThread(db.knex, join(dir, 'gone.db'), pino({ level: 'warn' }, capture), 20);
  t.ok(checkpointer, 'started');
  await until('the worker ended', () => !checkpointer!.running);
  await until('the threshold back', async () => (await threshold()) === WAL_AUTOCHECKPOINT);
  t.equal(await threshold(), WAL_AUTOCHECKPOINT, `back to ${WAL_AUTOCHECKPOINT} frames`);
  t.match(capture.text, /WAL checkpoint worker ended/, 'and a warning says so');
  await checkpointer!.stop();
});

t.test('a kernel on SQLite checkpoints off its event loop, and its stop ends the worker', async (t) => {
  const kernel = await bootKernel(t);
  if (kernel.db.engine !== 'sqlite') {
    t.equal(kernel.checkpointer, undefined, 'MySQL/MariaDB: no WAL, no worker');
    return;
  }
  t.ok(kernel.checkpointer?.running, 'the worker runs');
  const autocheckpoint = (await kernel.db.knex.raw('PRAGMA wal_autocheckpoint')) as { wal_autocheckpoint: number }[];
  t.equal(autocheckpoint[0]!.wal_autocheckpoint, SAFETY_NET_FRAMES, "the kernel's own checkpoint is the safety net");
  const limit = (await kernel.db.knex.raw('PRAGMA journal_size_limit')) as { journal_size_limit: number }[];
  t.equal(limit[0]!.journal_size_limit, WAL_SIZE_LIMIT_BYTES, 'the WAL file is cut back when rewound');
  await kernel.stop();
  t.equal(kernel.checkpointer!.running, false, 'stopped with the kernel');
});
