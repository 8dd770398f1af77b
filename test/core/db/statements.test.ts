import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import t, { type Test } from 'tap';
import { openDatabase } from '../../../core/db/connection.js';
import { deleteWhere, firstWhere, insertRows, insertValues, runWrite, updateWhere } from '../../../core/db/statements.js';
import { isUniqueViolation } from '../../../core/db/unique.js';
import { freshDatabaseUrl } from '../../helpers/database.js';

/** A scratch table on the test database (SQLite file, or a fresh database on TEST_DATABASE_URL). */
async function probe(t: Test): Promise<{ knex: Knex }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cw-statements-'));
  const url = await freshDatabaseUrl(t);
  const db = openDatabase({ url, dataDir, pool: url ? { min: 0, max: 4 } : { min: 1, max: 1 } });
  t.teardown(async () => {
    await db.knex.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await db.knex.schema.createTable('probe', (table) => {
    table.string('id', 26).primary();
    table.string('kind', 20).notNullable();
    table.integer('n').notNullable();
    table.boolean('flag').notNullable();
    table.text('note').nullable();
  });
  return { knex: db.knex };
}

const rowsOf = async (knex: Knex) =>
  ((await knex('probe').orderBy('id').select('id', 'kind', 'n', 'flag', 'note')) as { id: string; kind: string; n: number; flag: unknown; note: string | null }[]).map((r) => ({
    ...r,
    n: Number(r.n),
    flag: Boolean(r.flag),
  }));

/** The statements knex ran while `work` did (statements that bypass knex are not among them). */
async function knexStatements(knex: Knex, work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listen = (q: { sql: string }) => void seen.push(q.sql);
  knex.on('query', listen);
  try {
    await work();
  } finally {
    knex.off('query', listen);
  }
  return seen.filter((sql) => /probe/.test(sql));
}

t.test('in a transaction: insert, update, delete and read do what the knex builder does', async (t) => {
  const { knex } = await probe(t);
  const statements = await knexStatements(knex, () =>
    knex.transaction(async (trx) => {
      await insertRows(trx, 'probe', { id: 'a', kind: 'x', n: 1, flag: true, note: null });
      await insertRows(trx, 'probe', [
        { id: 'b', kind: 'x', n: 2, flag: false },
        { id: 'c', kind: 'y', n: 3, flag: true, note: 'third' },
      ]);
      t.same(await firstWhere(trx, 'probe', { id: 'c' }, ['kind', 'note']), { kind: 'y', note: 'third' }, 'a read of the columns asked for');
      t.equal(await firstWhere(trx, 'probe', { id: 'zz' }, ['kind']), undefined, 'no row: undefined');
      t.equal(await updateWhere(trx, 'probe', { kind: 'x' }, { n: 10, note: 'x-kind' }), 2, 'two rows changed');
      t.equal(await updateWhere(trx, 'probe', { kind: 'x', note: null }, { n: 99 }), 0, 'a null in where compares as IS NULL (none left)');
      t.equal(await updateWhere(trx, 'probe', { id: 'c', note: 'third' }, { flag: false }), 1);
      t.equal(await deleteWhere(trx, 'probe', { kind: 'x' }, { id: 'a' }), 1, 'unless: the row it names stays');
      t.equal(await runWrite(trx, 'update `probe` set `n` = `n` + ? where `id` = ?', [5, 'a']), 1, 'a raw write answers the rows changed');
    }),
  );
  t.same(
    await rowsOf(knex),
    [
      { id: 'a', kind: 'x', n: 15, flag: true, note: 'x-kind' },
      { id: 'c', kind: 'y', n: 3, flag: false, note: 'third' },
    ],
    'committed: the rows as written (a missing column NULL, booleans read back)',
  );
  t.same(statements, [], 'none went through knex: the transaction’s connection directly');
});

t.test('a rollback undoes the writes: they were in the transaction', async (t) => {
  const { knex } = await probe(t);
  await insertRows(knex, 'probe', { id: 'keep', kind: 'x', n: 1, flag: true });
  await t.rejects(
    knex.transaction(async (trx) => {
      await insertRows(trx, 'probe', { id: 'gone', kind: 'x', n: 2, flag: true });
      await updateWhere(trx, 'probe', { id: 'keep' }, { n: 100 });
      await deleteWhere(trx, 'probe', { id: 'keep' });
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  t.same(await rowsOf(knex), [{ id: 'keep', kind: 'x', n: 1, flag: true, note: null }], 'nothing of the rolled-back transaction is left');
});

t.test('a unique violation is the driver error (isUniqueViolation), and the transaction can go on', async (t) => {
  const { knex } = await probe(t);
  await knex.transaction(async (trx) => {
    await insertRows(trx, 'probe', { id: 'a', kind: 'x', n: 1, flag: true });
    const err = await insertRows(trx, 'probe', { id: 'a', kind: 'y', n: 2, flag: true }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(isUniqueViolation(err), `a duplicate key: ${(err as Error | null)?.message}`);
    await insertRows(trx, 'probe', { id: 'b', kind: 'y', n: 2, flag: false });
  });
  t.same((await rowsOf(knex)).map((r) => r.id), ['a', 'b']);
});

t.test('outside a transaction, or after it ended: through knex (autocommit, or its refusal)', async (t) => {
  const { knex } = await probe(t);
  await insertRows(knex, 'probe', { id: 'a', kind: 'x', n: 1, flag: true });
  t.equal(await updateWhere(knex, 'probe', { id: 'a' }, { n: 2 }), 1);
  t.same(await firstWhere(knex, 'probe', { id: 'a' }, ['n']).then((r) => Number(r?.n)), 2);
  let ended: Knex.Transaction | undefined;
  await knex.transaction(async (trx) => {
    ended = trx;
  });
  await t.rejects(insertRows(ended!, 'probe', { id: 'late', kind: 'x', n: 1, flag: true }), 'an ended transaction takes no statement');
  t.same((await rowsOf(knex)).map((r) => r.id), ['a'], 'and nothing was written outside it');
});

t.test('many rows: as few INSERTs as the engine takes (SQLite bound variables; MySQL rows and packet size), none lost', async (t) => {
  const { knex } = await probe(t);
  const mysql = knex.client.config.client === 'mysql2';
  const columns = ['id', 'kind', 'n', 'flag', 'note'];
  // 7,000 rows of 5 values: 35,000 bound variables, over SQLite's 32,766 per statement; 7 × MySQL's 1,000 rows.
  const many = Array.from({ length: 7000 }, (_, i) => [`r${String(i).padStart(5, '0')}`, 'bulk', i, i % 2 === 0, undefined]);
  const statements = await knexStatements(knex, () => insertValues(knex, 'probe', columns, many));
  t.equal(statements.length, mysql ? 7 : 2, mysql ? 'MySQL: 1,000 rows a statement' : 'SQLite: as many rows as 32,766 variables hold');
  const rows = await rowsOf(knex);
  t.equal(rows.length, 7000, 'every row written');
  t.same(rows[6999], { id: 'r06999', kind: 'bulk', n: 6999, flag: false, note: null }, 'the last one whole, undefined as NULL');

  // 150 values of 60,000 characters (a TEXT holds 65,535 bytes): 9 MB, more than a quarter of MySQL's
  // max_allowed_packet in one statement (the test server's is 16 MiB).
  const big = 'x'.repeat(60_000);
  const large = Array.from({ length: 150 }, (_, i) => [`big${String(i).padStart(3, '0')}`, 'large', i, true, big]);
  const bigStatements = await knexStatements(knex, () => insertValues(knex, 'probe', columns, large));
  if (mysql) t.ok(bigStatements.length > 1, `MySQL: cut under the packet budget (${bigStatements.length} statements)`);
  else t.equal(bigStatements.length, 1, 'SQLite: one statement');
  const notes = (await knex('probe').where({ kind: 'large' }).select('note')) as { note: string }[];
  t.same(notes.map((r) => r.note.length), Array(150).fill(big.length), 'every large value stored whole');
});

t.test('names that are not identifiers are refused, not quoted', async (t) => {
  const { knex } = await probe(t);
  await knex.transaction(async (trx) => {
    await t.rejects(insertRows(trx, 'probe`; drop table probe; --', { id: 'a', kind: 'x', n: 1, flag: true }), /not an identifier/);
    await t.rejects(updateWhere(trx, 'probe', { 'id = id or 1': 'a' }, { n: 2 }), /not an identifier/);
  });
  t.same(await rowsOf(knex), [], 'the table is there, untouched');
});
