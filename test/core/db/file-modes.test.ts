/**
 * Files at rest (issue 24 item 6): the SQLite database holds password hashes and sealed secrets, so a new data
 * directory is 0700 and the database, WAL and shared-memory files are 0600; a boot over files others can
 * read warns, naming each. On SQLite whatever the engine under test (it is the embedded default's files).
 */
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { bootKernel, LogCapture, tempDir } from '../../helpers/kernel.js';

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

t.test('a new data directory and database are private to the service user', async (t) => {
  const dataDir = join(tempDir(t), 'data', 'nested');
  const db = openDatabase({ url: null, dataDir, pool: { min: 1, max: 1 } });
  t.teardown(() => db.knex.destroy());
  await db.knex.schema.createTable('secrets_at_rest', (table) => table.string('value'));
  await db.knex('secrets_at_rest').insert({ value: 'sealed' });
  t.equal(modeOf(dataDir), '0700', 'data directory');
  for (const suffix of ['', '-wal', '-shm']) t.equal(modeOf(db.filename! + suffix), '0600', `certwright.db${suffix}`);
});

t.test('a boot over a database others can read warns, naming the files', async (t) => {
  const dataDir = tempDir(t);
  const first = openDatabase({ url: null, dataDir, pool: { min: 1, max: 1 } });
  await first.knex.raw('select 1');
  await first.knex.destroy();
  chmodSync(first.filename!, 0o644);
  chmodSync(dataDir, 0o755);
  const capture = new LogCapture();
  await bootKernel(t, { dataDir, database: { url: null } }, { capture });
  const warnings = capture.lines.map((l) => JSON.parse(l) as { level: number; path?: string; mode?: string; msg: string }).filter((l) => l.level === 40 && l.path !== undefined);
  t.ok(warnings.some((w) => w.path === first.filename && w.mode === '0644'), 'the database file, with its mode');
  t.ok(warnings.some((w) => w.path === dataDir && w.mode === '0755'), 'the data directory');
  t.match(warnings[0]?.msg, /chmod go-rwx/, 'says how to fix it');
  t.equal(modeOf(first.filename!), '0644', 'an existing file keeps the mode its operator chose');
});
