import BetterSqlite3 from 'better-sqlite3';
import mysql from 'mysql2/promise';
import { sqliteFileOf } from '../../db/connection.js';
import { databaseDialect } from '../config-type.js';
import { FetchFailure } from '../errors.js';
import type { DatabaseSettings, FetchBounds, FetchSecret } from '../model.js';
import { selectProblem } from '../sql-guard.js';

type Bound = string | number | null;

/** SQLite binds no booleans: true and false as 1 and 0, as MySQL reads them too. */
const bindable = (values: DatabaseSettings['parameters']): Bound[] => (values ?? []).map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));

/**
 * A database datasource: one SELECT, its `?` placeholders bound to `parameters` (never spliced into the text),
 * read-only three times over (sql-guard.ts, then the engine's own read-only mode), at most maxRecords + 1 rows
 * read so that more fails the fetch.
 */
export async function fetchDatabase(settings: DatabaseSettings, secret: FetchSecret | null, bounds: FetchBounds, dataDir: string): Promise<unknown[]> {
  const dialect = databaseDialect(settings.url);
  if (!dialect) throw new FetchFailure('database.url: must be mysql://, mariadb:// or sqlite:');
  const refused = selectProblem(settings.query, dialect, (settings.parameters ?? []).length);
  if (refused) throw new FetchFailure(`database.query: ${refused}`);
  return dialect === 'sqlite' ? readSqlite(settings, bounds, dataDir) : readMysql(settings, secret, bounds);
}

function readSqlite(settings: DatabaseSettings, bounds: FetchBounds, dataDir: string): unknown[] {
  const file = sqliteFileOf(settings.url, dataDir);
  let db: BetterSqlite3.Database;
  try {
    // readonly: SQLite itself refuses any write on this connection; busy: wait for a writer this long at most.
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: bounds.timeoutMs });
  } catch (err) {
    throw new FetchFailure(`sqlite: cannot open the database (${(err as Error).message})`);
  }
  try {
    let statement: BetterSqlite3.Statement;
    try {
      statement = db.prepare(settings.query.trim().replace(/;\s*$/, ''));
    } catch (err) {
      throw new FetchFailure(`database.query: ${(err as Error).message}`);
    }
    // SQLite's own word on the statement: it returns rows and writes nothing.
    if (!statement.reader || !statement.readonly) throw new FetchFailure('database.query: must be a SELECT that only reads');
    const rows: unknown[] = [];
    const deadline = Date.now() + bounds.timeoutMs;
    for (const row of statement.iterate(...bindable(settings.parameters))) {
      rows.push(row);
      // Reading stops one row past the bound: the caller fails the fetch as oversized.
      if (rows.length > bounds.maxRecords) break;
      if (Date.now() > deadline) throw new FetchFailure(`sqlite: no answer within ${bounds.timeoutMs} ms`);
    }
    return rows;
  } catch (err) {
    if (err instanceof FetchFailure) throw err;
    throw new FetchFailure(`sqlite: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

async function readMysql(settings: DatabaseSettings, secret: FetchSecret | null, bounds: FetchBounds): Promise<unknown[]> {
  const url = new URL(settings.url.replace(/^mariadb:/i, 'mysql:'));
  const host = url.host;
  let connection: mysql.Connection | undefined;
  try {
    connection = await mysql.createConnection({
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: secret?.login ?? decodeURIComponent(url.username),
      password: secret?.password ?? '',
      database: decodeURIComponent(url.pathname.slice(1)),
      connectTimeout: bounds.timeoutMs,
      multipleStatements: false,
      charset: 'utf8mb4',
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      timezone: 'Z',
    });
    // A read-only transaction: the server refuses any write this session would attempt.
    await connection.query({ sql: 'START TRANSACTION READ ONLY', timeout: bounds.timeoutMs });
    // A derived table takes a query expression only, and the bound on rows is the server's; the LIMIT is ours, an integer.
    const sql = `SELECT * FROM (${settings.query.trim().replace(/;\s*$/, '')}) AS datasource_rows LIMIT ${bounds.maxRecords + 1}`;
    const [rows] = await connection.execute({ sql, timeout: bounds.timeoutMs }, bindable(settings.parameters));
    await connection.query('ROLLBACK').catch(() => undefined);
    return rows as unknown[];
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'PROTOCOL_SEQUENCE_TIMEOUT' || e.code === 'ETIMEDOUT') throw new FetchFailure(`${host}: no answer within ${bounds.timeoutMs} ms`);
    if (e.code && /^E[A-Z]+$/.test(e.code)) throw new FetchFailure(`${host}: ${e.code}`);
    throw new FetchFailure(`${host}: ${e.message.split('\n')[0]!.slice(0, 300)}`);
  } finally {
    connection?.destroy();
  }
}
