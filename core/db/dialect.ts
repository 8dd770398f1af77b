import type { Knex } from 'knex';

/** Whether a knex instance (or transaction) talks to MySQL/MariaDB, where SQL differs from SQLite's. */
export const isMysql = (db: Knex | Knex.Transaction): boolean => db.client.config.client === 'mysql2';

/**
 * MySQL/MariaDB's NO PAD binary collation, if the server has one: `utf8mb4_nopad_bin` (MariaDB ≥ 10.2)
 * or `utf8mb4_0900_bin` (MySQL 8). `utf8mb4_bin` is PAD SPACE on MariaDB: `'a '` would equal `'a'`.
 */
export async function noPadBinaryCollation(knex: Knex): Promise<string | undefined> {
  const [rows] = (await knex.raw("SHOW COLLATION WHERE Collation IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')")) as [{ Collation: string }[]];
  const names = rows.map((r) => r.Collation);
  return ['utf8mb4_nopad_bin', 'utf8mb4_0900_bin'].find((n) => names.includes(n));
}

/** The collation of strings that compare exactly, as on SQLite: NO PAD binary, else `utf8mb4_bin`; none off MySQL. */
export async function exactCollation(knex: Knex): Promise<string | undefined> {
  if (!isMysql(knex)) return undefined;
  return (await noPadBinaryCollation(knex)) ?? 'utf8mb4_bin';
}
