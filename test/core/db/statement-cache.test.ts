import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cacheStatements, openDatabase, STATEMENT_CACHE_MAX_CHARS, STATEMENT_CACHE_MAX_SQL } from '../../../core/db/connection.js';

/**
 * The prepared-statement cache of a SQLite connection (core/db/connection.ts) is bounded by count and by the
 * characters of SQL it keeps (issue 24: distinct large searches pinned hundreds of MB of SQLite programs).
 * A stand-in connection whose prepare() answers a new object each time tells a cached statement from a fresh one.
 */
function fakeConnection(): { conn: { prepare(sql: string): unknown }; prepared: () => number } {
  let n = 0;
  return {
    conn: {
      prepare(sql: string) {
        n++;
        return { sql, n };
      },
    },
    prepared: () => n,
  };
}

t.test('at most 256 statements are kept, least recently used dropped first', async (t) => {
  const { conn, prepared } = fakeConnection();
  const usage = cacheStatements(conn);
  const first = conn.prepare('select 0');
  let same = true;
  for (let i = 1; i < 400; i++) {
    conn.prepare(`select ${i}`);
    // Kept in use, "select 0" is never the least recently used.
    same &&= conn.prepare('select 0') === first;
  }
  t.ok(same, 'a statement in use stays cached');
  t.equal(usage().entries, 256);
  t.equal(prepared(), 400, 'each distinct text prepared once while it is kept');
  t.not(conn.prepare('select 1'), undefined);
  t.equal(prepared(), 401, 'an old statement was dropped, and is prepared again');
});

t.test('the kept statements add up to at most STATEMENT_CACHE_MAX_CHARS of SQL', async (t) => {
  const { conn } = fakeConnection();
  const usage = cacheStatements(conn);
  const sqlOf = (i: number): string => `select * from t where id in (${'?,'.repeat((STATEMENT_CACHE_MAX_SQL - 60) / 2)}?) and n = ${i}`;
  for (let i = 0; i < 200; i++) conn.prepare(sqlOf(i));
  const { entries, chars } = usage();
  t.ok(sqlOf(0).length <= STATEMENT_CACHE_MAX_SQL);
  t.ok(chars <= STATEMENT_CACHE_MAX_CHARS, `${chars} ≤ ${STATEMENT_CACHE_MAX_CHARS}`);
  t.equal(entries, Math.floor(STATEMENT_CACHE_MAX_CHARS / sqlOf(0).length));
  t.equal(conn.prepare(sqlOf(199)), conn.prepare(sqlOf(199)), 'the newest is kept');
});

t.test('a statement longer than STATEMENT_CACHE_MAX_SQL is prepared each time, never kept', async (t) => {
  const { conn } = fakeConnection();
  const usage = cacheStatements(conn);
  const long = `select * from t where id in (${'?,'.repeat(STATEMENT_CACHE_MAX_SQL / 2)}?)`;
  t.not(conn.prepare(long), conn.prepare(long));
  t.same(usage(), { entries: 0, chars: 0 });
});

t.test('on a real connection, large and repeated statements answer the same', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-statement-cache-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { knex } = openDatabase({ url: null, dataDir, pool: { min: 1, max: 1 } });
  t.teardown(() => knex.destroy());
  await knex.raw('CREATE TABLE t (id TEXT PRIMARY KEY)');
  await knex('t').insert(Array.from({ length: 100 }, (_, i) => ({ id: `r${i}` })));
  const ids = Array.from({ length: 5_000 }, (_, i) => `r${i}`);
  for (let round = 0; round < 3; round++) {
    const rows = (await knex('t').whereIn('id', ids).count({ n: '*' })) as { n: number }[];
    t.equal(Number(rows[0]!.n), 100, `round ${round}: the 5,000-value list (not kept) answers`);
    const one = (await knex('t').where({ id: 'r7' }).select('id')) as { id: string }[];
    t.same(one, [{ id: 'r7' }], `round ${round}: the short statement (kept) answers`);
  }
});
