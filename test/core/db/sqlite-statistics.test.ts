import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../../core/db/connection.js';

/**
 * SQLite plans by rule until it has statistics: the inventory's `status is valid` page (revoked = 0,
 * not_after > now, by id) went through the not_after range and a sort of every match. openDatabase
 * analyses the tables when it connects (PRAGMA optimize), so a database filled by an import, or by an
 * earlier version, gets plans from its data at the next start.
 */
t.test('a SQLite database gets planner statistics when opened', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-sqlite-stats-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const query = 'SELECT id FROM certs WHERE tenant = ? AND revoked = 0 AND not_after > ? ORDER BY id LIMIT 51';
  const now = 1_000_000;
  const planOf = async (knex: ReturnType<typeof openDatabase>['knex']): Promise<string> =>
    ((await knex.raw(`EXPLAIN QUERY PLAN ${query}`, ['t1', now])) as { detail: string }[]).map((r) => r.detail).join(' | ');

  const first = openDatabase({ url: null, dataDir, pool: { min: 1, max: 1 } });
  await first.knex.raw('CREATE TABLE certs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, revoked INTEGER NOT NULL, not_after INTEGER NOT NULL)');
  await first.knex.raw('CREATE INDEX certs_not_after ON certs (tenant, not_after, id)');
  await first.knex.raw('CREATE INDEX certs_status ON certs (tenant, revoked, id)');
  // Half the rows valid: the status index in id order finds a page at once; the range matches half.
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: `c${String(i).padStart(6, '0')}`, tenant: 't1', revoked: i % 20 === 0 ? 1 : 0, not_after: now - 10_000 + i }));
  for (let i = 0; i < rows.length; i += 500) await first.knex('certs').insert(rows.slice(i, i + 500));
  const before = await planOf(first.knex);
  t.match(before, /TEMP B-TREE/, `without statistics SQLite sorts: ${before}`);
  await first.knex.destroy();

  const second = openDatabase({ url: null, dataDir, pool: { min: 1, max: 1 } });
  t.teardown(() => second.knex.destroy());
  const after = await planOf(second.knex);
  t.notMatch(after, /TEMP B-TREE/, `with them it reads an index in id order: ${after}`);
  const stats = (await second.knex.raw("SELECT COUNT(*) AS n FROM sqlite_stat1 WHERE tbl = 'certs'")) as { n: number }[];
  t.ok(stats[0]!.n > 0, 'the table was analysed');
});
