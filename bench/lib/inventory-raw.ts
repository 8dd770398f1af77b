// The peers of bench/inventory: what a competent DBA would hand-write for the same work, on the same connection
// pool and driver (knex.raw, bound parameters), so that every figure of the repository and of the search routes
// stands beside the same work done without them.
import type { Knex } from 'knex';
import { DOCUMENT_COLUMNS, MAIN_COLUMNS, SAN_COLUMNS, type PreparedCertificate } from '../../core/inventory/record.js';

// ---------------------------------------------------------------- raw batched INSERTs (the seeding peer)

/** Rows per INSERT statement: within SQLite's 32,766 bound variables (40 columns × 500) and MySQL's packet. */
const MAIN_ROWS_PER_STATEMENT = 500;
const SIDE_ROWS_PER_STATEMENT = 2000;

const MAIN = ['tenant', ...MAIN_COLUMNS] as const;
const DOCUMENTS = ['certificate_id', 'tenant', ...DOCUMENT_COLUMNS] as const;
const SAN = ['certificate_id', 'tenant', ...SAN_COLUMNS] as const;
const KV = ['certificate_id', 'tenant', 'key', 'value'] as const;
const FACET = ['certificate_id', 'tenant', 'facet', 'value'] as const;

const placeholderCache = new Map<string, string>();
/** `INSERT INTO t (c1, …) VALUES (?, …), (?, …)…` for `rows` rows (built once per shape). */
function insertSql(knex: Knex, table: string, columns: readonly string[], rows: number): string {
  const mysql = knex.client.config.client === 'mysql2';
  const key = `${mysql ? 'mysql' : 'sqlite'}:${table}:${rows}`;
  let sql = placeholderCache.get(key);
  if (!sql) {
    const q = (name: string): string => (mysql ? `\`${name}\`` : `"${name}"`);
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    sql = `INSERT INTO ${q(table)} (${columns.map(q).join(', ')}) VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
    placeholderCache.set(key, sql);
  }
  return sql;
}

async function insertFlat(trx: Knex.Transaction, table: string, columns: readonly string[], values: unknown[], perStatement: number): Promise<void> {
  const width = columns.length;
  const rows = values.length / width;
  for (let at = 0; at < rows; at += perStatement) {
    const n = Math.min(perStatement, rows - at);
    await trx.raw(insertSql(trx, table, columns, n), values.slice(at * width, (at + n) * width) as Knex.RawBinding[]);
  }
}

/**
 * The prepared records written with hand-written multi-row INSERTs, one transaction for the call (as insertMany
 * is given them): the main rows, then each side table. The same row objects, flattened to bound values here.
 */
export async function rawInsertMany(knex: Knex, tenant: string, records: readonly PreparedCertificate[]): Promise<void> {
  const main: unknown[] = [];
  const documents: unknown[] = [];
  const sans: unknown[] = [];
  const labels: unknown[] = [];
  const metadata: unknown[] = [];
  const facets: unknown[] = [];
  for (const r of records) {
    const m = r.main as unknown as Record<string, unknown>;
    main.push(tenant);
    for (const c of MAIN_COLUMNS) main.push(m[c]);
    documents.push(r.id, tenant);
    for (const c of DOCUMENT_COLUMNS) documents.push(m[c]);
    for (const s of r.sans) sans.push(r.id, tenant, s.san_type, s.value, s.value_lc, s.value_rev, s.position);
    for (const l of r.labels) labels.push(r.id, tenant, l.key, l.value);
    for (const l of r.metadata) metadata.push(r.id, tenant, l.key, l.value);
    for (const f of r.facets) facets.push(r.id, tenant, f.facet, f.value);
  }
  await knex.transaction(async (trx) => {
    await insertFlat(trx, 'inv_certificates', MAIN, main, MAIN_ROWS_PER_STATEMENT);
    await insertFlat(trx, 'inv_certificate_documents', DOCUMENTS, documents, MAIN_ROWS_PER_STATEMENT);
    await insertFlat(trx, 'inv_certificate_sans', SAN, sans, SIDE_ROWS_PER_STATEMENT);
    await insertFlat(trx, 'inv_certificate_labels', KV, labels, SIDE_ROWS_PER_STATEMENT);
    await insertFlat(trx, 'inv_certificate_metadata', KV, metadata, SIDE_ROWS_PER_STATEMENT);
    await insertFlat(trx, 'inv_certificate_facets', FACET, facets, SIDE_ROWS_PER_STATEMENT);
  });
}

// ---------------------------------------------------------------- hand-written searches (the search peers)

/** The columns of a full certificate object (what the search answers when the body names no fields). */
const SELECT_ALL = ['id', ...MAIN_COLUMNS.filter((c) => c !== 'id')].map((c) => `c.${c}`).join(', ');

/** Rows as a hand-written page returns them: the page's rows and their side rows. */
export interface RawPage {
  rows: { id: string }[];
  sides: number;
  count?: number;
}

/**
 * The side rows of a page (SANs in certificate order, labels, metadata, the documents: PEM and JSON
 * lists): four reads by certificate id, as any code building the certificate objects must do.
 */
async function sidesOf(knex: Knex, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const marks = ids.map(() => '?').join(', ');
  const [sans, labels, metadata, documents] = await Promise.all([
    knex.raw(`SELECT certificate_id, san_type, value FROM inv_certificate_sans WHERE certificate_id IN (${marks}) ORDER BY certificate_id, position`, ids),
    knex.raw(`SELECT certificate_id, \`key\`, value FROM inv_certificate_labels WHERE certificate_id IN (${marks})`, ids),
    knex.raw(`SELECT certificate_id, \`key\`, value FROM inv_certificate_metadata WHERE certificate_id IN (${marks})`, ids),
    knex.raw(`SELECT certificate_id, ${DOCUMENT_COLUMNS.join(', ')} FROM inv_certificate_documents WHERE certificate_id IN (${marks})`, ids),
  ]);
  return [sans, labels, metadata, documents].reduce((n, r) => n + rowsOf(knex, r).length, 0);
}

/** knex.raw answers [rows, fields] on mysql2 and rows on better-sqlite3. */
export function rowsOf<T = Record<string, unknown>>(knex: Knex, result: unknown): T[] {
  return (knex.client.config.client === 'mysql2' ? (result as [T[]])[0] : (result as T[])) ?? [];
}

export interface RawQuery {
  /** The SQL of the page (LIMIT pageSize + 1), as printed in the report. */
  sql: string;
  bindings: unknown[];
  /** A COUNT(*) to run beside it (withCount). */
  countSql?: string;
  countBindings?: unknown[];
  /** A bare scan that answers no page (the unindexed peer): only this statement runs. */
  scanOnly?: boolean;
}

export async function runRaw(knex: Knex, q: RawQuery): Promise<RawPage> {
  const rows = rowsOf<{ id: string }>(knex, await knex.raw(q.sql, q.bindings as Knex.RawBinding[]));
  if (q.scanOnly) return { rows, sides: 0 };
  const page = rows.slice(0, PAGE_SIZE);
  const [sides, count] = await Promise.all([
    sidesOf(
      knex,
      page.map((r) => r.id),
    ),
    q.countSql ? knex.raw(q.countSql, (q.countBindings ?? []) as Knex.RawBinding[]).then((r) => Number(Object.values(rowsOf(knex, r)[0] ?? { n: 0 })[0])) : Promise.resolve(undefined),
  ]);
  return { rows: page, sides, ...(count === undefined ? {} : { count }) };
}

export const PAGE_SIZE = 50;

/** The parameters of the searches (values picked from the synthetic distribution, see inventory-generate.ts). */
export interface SearchParams {
  tenant: string;
  now: number;
  san: string;
  sanSuffix: string;
  labelValue: string;
  profile: string;
  team: string;
  owner: string;
  dnNeedle: string;
  countProfile: string;
}

export interface SearchCase {
  key: string;
  label: string;
  /**
   * The same page read by walking the (tenant, id) order and testing each row (side tables probed by certificate
   * id), with index hints: far faster than the natural form's sort when many rows match. The benchmark times both
   * in the warm-up and keeps the faster as the peer (what a DBA would do after looking at the plans).
   */
  walk?: RawQuery;
  /** Whether the engine can answer it from an index (goal: ≤ max(10× the SQL p95, 20 ms)) or not (≤ 1.5× one full scan). */
  indexed: boolean;
  body: Record<string, unknown>;
  raw: RawQuery;
}

const DAY = 86_400_000;
const LIMIT = PAGE_SIZE + 1;

/**
 * The 12 searches (the full scan is timed in rounds of its own, after the indexed ones: on MariaDB it evicts the
 * buffer pool, which would make the next search start cold): the HCQL body sent to POST /api/v1/certificates/search and the same question hand-written in
 * SQL (page of full rows, ordered as the engine orders: by id unless sorted, LIMIT pageSize + 1, then the side
 * rows of the page). Booleans are bound as 0/1 (SQLite and MySQL store them so); `key` is back-quoted, which both
 * engines read as an identifier (it is a reserved word on MySQL).
 */
export function searchCases(p: SearchParams, mysql: boolean): SearchCase[] {
  const t = p.tenant;
  const now = p.now;
  const page = (where: string, order = 'c.id'): string => `SELECT ${SELECT_ALL} FROM inv_certificates c WHERE ${where} ORDER BY ${order} LIMIT ${LIMIT}`;
  const hint = (index: string): string => (mysql ? `FORCE INDEX (${index === 'inv_cert_tenant_id' ? 'PRIMARY' : index})` : `INDEXED BY ${index}`);
  const walk = (where: string, bindings: unknown[]): RawQuery => ({
    sql: `SELECT ${SELECT_ALL} FROM inv_certificates c ${hint('inv_cert_tenant_id')} WHERE ${where} ORDER BY c.id LIMIT ${LIMIT}`,
    bindings,
  });
  const probe = (table: string, index: string, alias: string, where: string): string =>
    `EXISTS (SELECT 1 FROM ${table} ${alias} ${hint(index)} WHERE ${alias}.certificate_id = c.id AND ${where})`;
  // A side-table hit joined in side-index order: (tenant, key, value, certificate_id) hands the ids over sorted.
  const viaSide = (side: string, where: string): string =>
    `SELECT ${SELECT_ALL} FROM ${side} s JOIN inv_certificates c ON c.id = s.certificate_id WHERE ${where} ORDER BY s.certificate_id LIMIT ${LIMIT}`;
  const reversedPrefix = [...p.sanSuffix.toLowerCase()].reverse().join('');
  const prefixEnd = reversedPrefix.slice(0, -1) + String.fromCharCode(reversedPrefix.charCodeAt(reversedPrefix.length - 1) + 1);
  return [
    {
      key: 'status',
      label: 'status is valid',
      indexed: true,
      body: { query: 'status is valid' },
      raw: { sql: page('c.tenant = ? AND c.revoked = ? AND c.not_after > ?'), bindings: [t, 0, now] },
      walk: walk('c.tenant = ? AND c.revoked = ? AND c.not_after > ?', [t, 0, now]),
    },
    {
      key: 'san',
      label: 'san equals (exact)',
      indexed: true,
      body: { query: `san equals "${p.san}"` },
      raw: { sql: viaSide('inv_certificate_sans', 's.tenant = ? AND s.value_lc = ? AND c.tenant = ?'), bindings: [t, p.san.toLowerCase(), t] },
    },
    {
      key: 'suffix',
      label: 'san matches suffix',
      indexed: true,
      body: { query: `san matches "${p.sanSuffix.replace(/\./g, '\\\\.')}$"` },
      raw: {
        sql: page('c.tenant = ? AND c.id IN (SELECT s.certificate_id FROM inv_certificate_sans s WHERE s.tenant = ? AND s.value_rev >= ? AND s.value_rev < ?)'),
        bindings: [t, t, reversedPrefix, prefixEnd],
      },
      walk: walk(`c.tenant = ? AND ${probe('inv_certificate_sans', 'inv_san_certificate', 's', 's.tenant = ? AND s.value_rev >= ? AND s.value_rev < ?')}`, [t, t, reversedPrefix, prefixEnd]),
    },
    {
      key: 'label',
      label: 'label equals',
      indexed: true,
      body: { query: `label.env equals "${p.labelValue}"` },
      raw: { sql: viaSide('inv_certificate_labels', `s.tenant = ? AND s.\`key\` = ? AND s.value = ? AND c.tenant = ?`), bindings: [t, 'env', p.labelValue, t] },
      walk: walk(`c.tenant = ? AND ${probe('inv_certificate_labels', 'inv_label_certificate', 'l', 'l.tenant = ? AND l.`key` = ? AND l.value = ?')}`, [t, t, 'env', p.labelValue]),
    },
    {
      key: 'expiring',
      label: 'expiring within 30 days',
      indexed: true,
      body: { query: 'valid.until before 30d and status is valid' },
      raw: { sql: page('c.tenant = ? AND c.revoked = ? AND c.not_after > ? AND c.not_after < ?'), bindings: [t, 0, now, now + 30 * DAY] },
      walk: walk('c.tenant = ? AND c.revoked = ? AND c.not_after > ? AND c.not_after < ?', [t, 0, now, now + 30 * DAY]),
    },
    {
      key: 'profileTeam',
      label: 'profile + team',
      indexed: true,
      body: { query: `profile equals "${p.profile}" and team equals "${p.team}"` },
      raw: { sql: page('c.tenant = ? AND c.profile = ? AND c.team = ?'), bindings: [t, p.profile, p.team] },
    },
    {
      key: 'combined',
      label: 'profile + status + label',
      indexed: true,
      body: { query: `profile equals "${p.profile}" and status is valid and label.env equals "${p.labelValue}"` },
      raw: {
        sql: page(
          `c.tenant = ? AND c.profile = ? AND c.revoked = ? AND c.not_after > ? AND EXISTS (SELECT 1 FROM inv_certificate_labels l WHERE l.tenant = ? AND l.\`key\` = ? AND l.value = ? AND l.certificate_id = c.id)`,
        ),
        bindings: [t, p.profile, 0, now, t, 'env', p.labelValue],
      },
      walk: walk(`c.tenant = ? AND c.profile = ? AND c.revoked = ? AND c.not_after > ? AND ${probe('inv_certificate_labels', 'inv_label_certificate', 'l', 'l.tenant = ? AND l.`key` = ? AND l.value = ?')}`, [
        t,
        p.profile,
        0,
        now,
        t,
        'env',
        p.labelValue,
      ]),
    },
    {
      key: 'sorted',
      label: 'status is valid, sorted by notAfter',
      indexed: true,
      body: { query: 'status is valid', sortedBy: [{ element: 'notAfter', order: 'Asc' }] },
      raw: { sql: page('c.tenant = ? AND c.revoked = ? AND c.not_after > ?', 'c.not_after, c.id'), bindings: [t, 0, now] },
    },
    {
      key: 'owner',
      label: 'owner equals',
      indexed: true,
      body: { query: `owner equals "${p.owner}"` },
      raw: { sql: page('c.tenant = ? AND c.owner = ?'), bindings: [t, p.owner] },
    },
    {
      key: 'default',
      label: 'default page (empty query)',
      indexed: true,
      body: {},
      raw: { sql: page('c.tenant = ?'), bindings: [t] },
    },
    {
      key: 'count',
      label: 'profile equals, withCount',
      indexed: true,
      body: { query: `profile equals "${p.countProfile}"`, withCount: true },
      raw: {
        sql: page('c.tenant = ? AND c.profile = ?'),
        bindings: [t, p.countProfile],
        countSql: 'SELECT COUNT(*) AS n FROM inv_certificates WHERE tenant = ? AND profile = ?',
        countBindings: [t, p.countProfile],
      },
      walk: {
        ...walk('c.tenant = ? AND c.profile = ?', [t, p.countProfile]),
        countSql: 'SELECT COUNT(*) AS n FROM inv_certificates WHERE tenant = ? AND profile = ?',
        countBindings: [t, p.countProfile],
      },
    },
    {
      key: 'dn',
      label: 'dn contains (unindexed)',
      indexed: false,
      body: { query: `dn contains "${p.dnNeedle}"` },
      raw: { sql: 'SELECT COUNT(*) AS n FROM inv_certificates WHERE tenant = ? AND LOWER(dn) LIKE ?', bindings: [t, `%${p.dnNeedle.toLowerCase()}%`], scanOnly: true },
    },
  ];
}

/** The aggregate peer: profile × derived status, counted, largest groups first (as the route orders). */
export function rawAggregate(tenant: string, now: number): RawQuery {
  return {
    sql:
      "SELECT profile AS g0, CASE WHEN revoked = ? THEN 'revoked' WHEN not_after <= ? THEN 'expired' ELSE 'valid' END AS g1, COUNT(*) AS n " +
      'FROM inv_certificates WHERE tenant = ? GROUP BY g0, g1 ORDER BY n DESC, g0, g1 LIMIT 1000',
    bindings: [1, now, tenant],
    scanOnly: true,
  };
}

// ---------------------------------------------------------------- hand-written CSV export (the CSV peer)

const CSV_COLUMNS = [
  'id',
  'dn',
  'serial',
  'issuer',
  'not_before',
  'not_after',
  'revoked',
  'revocation_date',
  'revocation_reason',
  'profile',
  'module',
  'owner',
  'team',
  'contact_email',
  'key_type',
  'signing_algorithm',
  'thumbprint',
] as const;
const CSV_BATCH = 1000;

const cell = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const iso = (v: unknown): string => (v === null || v === undefined ? '' : new Date(Number(v)).toISOString());
const text = (v: unknown): string => (v === null || v === undefined ? '' : cell(String(v)));

/**
 * The same export hand-written: keyset batches of 1000 over (tenant, id), the default CSV columns and the side rows
 * of each batch, one CSV line per certificate handed to `sink`. Resolves with the number of rows.
 */
export async function rawCsvExport(knex: Knex, tenant: string, now: number, sink: (chunk: string) => void): Promise<number> {
  const select = `SELECT ${CSV_COLUMNS.join(', ')} FROM inv_certificates WHERE tenant = ? AND id > ? ORDER BY id LIMIT ${CSV_BATCH}`;
  let after = '';
  let total = 0;
  sink('_id,dn,subjectAlternateNames,serial,issuer,notBefore,notAfter,status,revocationDate,revocationReason,profile,module,owner,team,contactEmail,keyType,signingAlgorithm,thumbprint,labels,metadata\r\n');
  for (;;) {
    const rows = rowsOf<Record<string, unknown>>(knex, await knex.raw(select, [tenant, after]));
    if (rows.length === 0) return total;
    const ids = rows.map((r) => String(r.id));
    const marks = ids.map(() => '?').join(', ');
    const [sans, labels, metadata] = (
      await Promise.all([
        knex.raw(`SELECT certificate_id, san_type AS k, value AS v FROM inv_certificate_sans WHERE certificate_id IN (${marks}) ORDER BY certificate_id, position`, ids),
        knex.raw(`SELECT certificate_id, \`key\` AS k, value AS v FROM inv_certificate_labels WHERE certificate_id IN (${marks}) ORDER BY certificate_id, \`key\``, ids),
        knex.raw(`SELECT certificate_id, \`key\` AS k, value AS v FROM inv_certificate_metadata WHERE certificate_id IN (${marks}) ORDER BY certificate_id, \`key\``, ids),
      ])
    ).map((r, table) => {
      const sep = table === 0 ? ':' : '=';
      const byId = new Map<string, string[]>();
      for (const s of rowsOf<{ certificate_id: string; k: string; v: string }>(knex, r)) {
        let list = byId.get(s.certificate_id);
        if (!list) byId.set(s.certificate_id, (list = []));
        list.push(`${s.k}${sep}${s.v}`);
      }
      return byId;
    }) as [Map<string, string[]>, Map<string, string[]>, Map<string, string[]>];
    let out = '';
    for (const r of rows) {
      const id = String(r.id);
      const revoked = r.revoked === true || r.revoked === 1;
      const status = revoked ? 'revoked' : Number(r.not_after) <= now ? 'expired' : 'valid';
      out +=
        [
          id,
          text(r.dn),
          cell((sans.get(id) ?? []).join('; ')),
          text(r.serial),
          text(r.issuer),
          iso(r.not_before),
          iso(r.not_after),
          status,
          iso(r.revocation_date),
          text(r.revocation_reason),
          text(r.profile),
          text(r.module),
          text(r.owner),
          text(r.team),
          text(r.contact_email),
          text(r.key_type),
          text(r.signing_algorithm),
          text(r.thumbprint),
          cell((labels.get(id) ?? []).join('; ')),
          cell((metadata.get(id) ?? []).join('; ')),
        ].join(',') + '\r\n';
    }
    sink(out);
    total += rows.length;
    after = ids[ids.length - 1]!;
    if (rows.length < CSV_BATCH) return total;
  }
}
