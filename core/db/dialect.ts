import type { Knex } from 'knex';

/** Whether a knex instance (or transaction) talks to MySQL/MariaDB, where SQL differs from SQLite's. */
export const isMysql = (db: Knex | Knex.Transaction): boolean => db.client.config.client === 'mysql2';
