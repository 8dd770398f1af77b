import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';
import { noPadBinaryCollation } from '../dialect.js';

/**
 * Query-language string comparisons exact on MySQL/MariaDB, as on SQLite (HCQL, HEQL).
 *
 * - The inventory's searchable columns were `utf8mb4_bin`, which is PAD SPACE on MariaDB: `owner =
 *   "alice "` matched `alice`. They become the NO PAD binary collation.
 * - The events table (0001) had the server's default collation (`utf8mb4_general_ci` on a stock
 *   MariaDB): `code = "session-end"` matched `SESSION-END`. Its searchable columns become NO PAD binary.
 *
 * The NO PAD binary collation is `utf8mb4_nopad_bin` on MariaDB (≥ 10.2) and `utf8mb4_0900_bin` on
 * MySQL 8; a server with neither keeps what it has (logged by the caller's migration output: nothing to
 * do). Indexes are rebuilt by the ALTER; key lengths do not change. SQLite compares exactly already.
 */
const EVENT_COLUMNS = ['id', 'tenant', 'code', 'module', 'status', 'principal', 'object_type', 'object_id'];

interface ColumnInfo {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
}

async function columnsToChange(knex: Knex): Promise<ColumnInfo[]> {
  const [rows] = (await knex.raw(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLLATION_NAME AS collation
       FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND COLLATION_NAME IS NOT NULL
        AND ((TABLE_NAME LIKE 'inv\\_%' AND COLLATION_NAME = 'utf8mb4_bin') OR (TABLE_NAME = 'events' AND COLUMN_NAME IN (${EVENT_COLUMNS.map(() => '?').join(', ')})))
      ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    EVENT_COLUMNS,
  )) as [{ t: string; c: string; type: string; nullable: string }[]];
  return rows.map((r) => {
    if (!/^(var)?char\(\d+\)$|^(tiny|medium|long)?text$/.test(r.type)) throw new Error(`0007: unexpected type ${r.type} of ${r.t}.${r.c}`);
    return { table: r.t, column: r.c, type: r.type, nullable: r.nullable === 'YES' };
  });
}

export const exactStrings0007: Migration = {
  name: '0007_exact_strings',
  async up(knex: Knex) {
    if (knex.client.config.client !== 'mysql2') return;
    const collation = await noPadBinaryCollation(knex);
    if (!collation) return;
    const byTable = new Map<string, ColumnInfo[]>();
    for (const c of await columnsToChange(knex)) byTable.set(c.table, [...(byTable.get(c.table) ?? []), c]);
    for (const [table, columns] of byTable) {
      // One ALTER per table: one rebuild. COLUMN_TYPE (e.g. `varchar(191)`) comes from the server's own
      // catalogue, never from input; names are bound as identifiers.
      const clauses = columns.map((c) => `MODIFY ?? ${c.type} CHARACTER SET utf8mb4 COLLATE ${collation} ${c.nullable ? 'NULL' : 'NOT NULL'}`);
      await knex.raw(`ALTER TABLE ?? ${clauses.join(', ')}`, [table, ...columns.map((c) => c.column)]);
    }
  },
};
