import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { isId, newId } from '../db/ids.js';
import { insertValues } from '../db/statements.js';
import { isUniqueViolation } from '../db/unique.js';
import { ProblemError } from '../errors/index.js';
import type { CertificateInfo, SubjectAlternateName } from '../pki/x509/model.js';
import { parseCertificatePem } from '../pki/x509/parse.js';
import type { TeamMigratedListener } from '../security/groups/team-migration.js';
import { checkAgainst, LabelStore } from './labels/store.js';
import { DOCUMENT_COLUMNS, FACET_GROUPS, isDocumentColumn, MAIN_COLUMNS, patchOf, recordOf, SAN_COLUMNS, type CertificateRecord, type PreparedCertificate } from './record.js';
import type { CertificateInput, CertificateObject, CertificatePatch, KeyValue } from './types.js';
import { buildersFor, DOCUMENT_COLUMNS_FOR, objectOf, type CertificateRow, type CertificateSides } from './view.js';
import type { SideTexts } from './search/csv.js';

export { prepare, type PreparedCertificate } from './record.js';
export { COLUMNS_FOR, columnsFor, DOCUMENT_COLUMNS_FOR, type CertificateRow } from './view.js';

type Db = Knex | Knex.Transaction;

/** Certificates written per transaction by insertMany. */
export const INSERT_BATCH = 1000;
/** Certificate ids per `IN (…)` of the side-table reads. */
const IN_CHUNK = 2000;

const MAIN = ['tenant', ...MAIN_COLUMNS] as const;
const DOCUMENTS = ['certificate_id', 'tenant', ...DOCUMENT_COLUMNS] as const;
const SANS = ['certificate_id', 'tenant', ...SAN_COLUMNS] as const;
const KEY_VALUES = ['certificate_id', 'tenant', 'key', 'value'] as const;
const FACETS = ['certificate_id', 'tenant', 'facet', 'value'] as const;


/**
 * The certificate of an inventory write, decoded with the PKI toolkit's parser: garbage is PKI-001
 * ("Could not parse provided PEM"), another kind of object (a CSR, a CRL…) CRT-002.
 */
export function parseInventoryCertificate(certificate: unknown): CertificateInfo {
  if (typeof certificate !== 'string' || certificate.trim() === '') throw new ProblemError('PKI-001', { detail: 'no certificate given' });
  try {
    return parseCertificatePem(certificate);
  } catch (err) {
    if (err instanceof ProblemError && err.code === 'PKI-002') throw new ProblemError('CRT-002', { message: 'The object is not a certificate', ...(err.detail ? { detail: err.detail } : {}) });
    throw err;
  }
}

const exists = (id: string): ProblemError => new ProblemError('CRT-004', { detail: `The inventory already holds this certificate as ${id}` });
const notFound = (id: string): ProblemError => new ProblemError('CRT-003', { detail: `No certificate ${id}` });
const byKey = (a: KeyValue, b: KeyValue): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0);

/**
 * The certificate inventory (migration 0006), tenant-scoped. Every write of one certificate is one
 * transaction over the main row and its side rows (SANs, labels, metadata, facets), so a failure never
 * leaves half a certificate. Label definitions are `labels` (checked on every write).
 */
export class CertificateRepository {
  readonly labels: LabelStore;

  constructor(
    readonly knex: Knex,
    readonly clock: () => number,
  ) {
    this.labels = new LabelStore(knex, clock);
  }

  /**
   * Adds a certificate: PKI-001 / CRT-002 for what is not one, CRT-004 (detail: the existing _id) when
   * its thumbprint is already in the inventory, LBL-006 for labels that are not defined or do not match.
   * `trx`: write inside the caller's transaction (enrollment).
   */
  async insert(tenant: string, input: CertificateInput, opts: { trx?: Knex.Transaction } = {}): Promise<CertificateObject> {
    const info = parseInventoryCertificate(input.certificate);
    const now = this.clock();
    const record = recordOf(info, input, { id: newId(now), now });
    const db = opts.trx ?? this.knex;
    await this.labels.check(tenant, record.labels, db);
    // No read for an existing certificate first: the unique (tenant, thumbprint) index refuses it at the first
    // INSERT (only that statement is undone, on both engines), and the catch below names it.
    const write = async (trx: Knex.Transaction): Promise<void> => {
      await this.labels.confirm(trx, tenant, record.labels);
      await this.write(trx, tenant, [record]);
    };
    try {
      if (opts.trx) await write(opts.trx);
      else await this.knex.transaction(write);
    } catch (err) {
      // The same certificate is there already (recorded before, or by a concurrent writer).
      if (isUniqueViolation(err)) {
        const id = await this.idOfThumbprint(tenant, record.main.thumbprint, db);
        if (id) throw exists(id);
      }
      throw err;
    }
    return this.objectOfRecord(record);
  }

  /**
   * The seeding path: already-mapped records (`prepare`), written with multi-row INSERTs per table,
   * INSERT_BATCH certificates per transaction. Labels are checked for all records before anything is
   * written; a duplicate thumbprint fails its batch (earlier batches stay) with CRT-004.
   */
  async insertMany(tenant: string, records: readonly PreparedCertificate[], opts: { batchSize?: number } = {}): Promise<number> {
    if (records.some((r) => r.labels.length > 0)) {
      const definitions = await this.labels.definitions(tenant);
      for (const r of records) checkAgainst(definitions, r.labels);
    }
    const size = Math.max(1, opts.batchSize ?? INSERT_BATCH);
    for (let i = 0; i < records.length; i += size) {
      const batch = records.slice(i, i + size);
      try {
        await this.knex.transaction((trx) => this.write(trx, tenant, batch));
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const thumbprints = [...new Set(batch.map((r) => r.main.thumbprint))];
        const found = (await this.knex('inv_certificates').where({ tenant }).whereIn('thumbprint', thumbprints).first('id')) as { id: string } | undefined;
        if (found) throw exists(found.id);
        if (thumbprints.length < batch.length) throw new ProblemError('CRT-004', { detail: 'The batch holds the same certificate more than once' });
        throw err;
      }
    }
    return records.length;
  }

  async get(tenant: string, id: string, db: Db = this.knex): Promise<CertificateObject | null> {
    const key = id.toLowerCase();
    if (!isId(key)) return null;
    const row = (await db('inv_certificates').where({ tenant, id: key }).first()) as CertificateRow | undefined;
    return row ? (await this.objectsOf(tenant, [row], null, db))[0]! : null;
  }

  /**
   * How many certificates with holder id `holderId` are currently valid (status valid: not revoked, not
   * expired), in the tenant and, of those, in `profile`: a request's globalHolderIdCount / profileHolderIdCount
   * (client-compat §2.5), what an approver weighs. One statement on the (tenant, holder_id) index.
   */
  async validCountsByHolder(tenant: string, holderId: string, profile: string | null, db: Db = this.knex): Promise<{ global: number; profile: number }> {
    const row = (await db('inv_certificates')
      .where({ tenant, holder_id: holderId, revoked: false })
      .where('not_after', '>', this.clock())
      .select(db.raw('count(*) as ??', ['global']), db.raw('coalesce(sum(case when ?? = ? then 1 else 0 end), 0) as ??', ['profile', profile ?? '', 'in_profile']))) as { global: number | string; in_profile: number | string }[];
    return { global: Number(row[0]?.global ?? 0), profile: profile === null ? 0 : Number(row[0]?.in_profile ?? 0) };
  }

  async getByThumbprint(tenant: string, sha1hex: string, db: Db = this.knex): Promise<CertificateObject | null> {
    const row = (await db('inv_certificates').where({ tenant, thumbprint: sha1hex.toLowerCase() }).first()) as CertificateRow | undefined;
    return row ? (await this.objectsOf(tenant, [row], null, db))[0]! : null;
  }

  /** The certificates with this serial (lower-case hex without leading zeros), any issuer; a handful at most. */
  async bySerial(tenant: string, serial: string, db: Db = this.knex): Promise<CertificateObject[]> {
    const rows = (await db('inv_certificates').where({ tenant, serial: serial.toLowerCase() }).limit(20)) as CertificateRow[];
    return rows.length ? this.objectsOf(tenant, rows, null, db) : [];
  }

  /** The certificates of this public key (SHA-256 of the SPKI DER, hex) in force and not revoked, latest first. */
  async inForceByPublicKey(tenant: string, publicKeyThumbprint: string, db: Db = this.knex): Promise<CertificateObject[]> {
    const rows = (await db('inv_certificates')
      .where({ tenant, public_key_thumbprint: publicKeyThumbprint.toLowerCase(), revoked: false })
      .where('not_after', '>', this.clock())
      .orderBy('not_after', 'desc')
      .limit(5)) as CertificateRow[];
    return rows.length ? this.objectsOf(tenant, rows, null, db) : [];
  }

  /** The _id of the certificate with this SHA-1 thumbprint, or null. */
  async idOfThumbprint(tenant: string, sha1hex: string, db: Db = this.knex): Promise<string | null> {
    const row = (await db('inv_certificates').where({ tenant, thumbprint: sha1hex.toLowerCase() }).first('id')) as { id: string } | undefined;
    return row?.id ?? null;
  }

  /**
   * Changes what the caller may change on a certificate (CertificatePatch: absent = unchanged, null =
   * cleared) and rewrites the side rows concerned (labels, metadata, the facets of the JSON lists) in the
   * same transaction. CRT-003 when the certificate does not exist.
   */
  async update(tenant: string, id: string, patch: CertificatePatch, opts: { trx?: Knex.Transaction } = {}): Promise<CertificateObject> {
    const key = id.toLowerCase();
    const change = patchOf(patch, this.clock());
    if (change.labels) await this.labels.check(tenant, change.labels, opts.trx ?? this.knex);
    const run = async (trx: Knex.Transaction): Promise<CertificateObject> => {
      const read = trx('inv_certificates').where({ tenant, id: key }).first('id');
      const found = isId(key) ? await (isMysql(trx) ? read.forUpdate() : read) : undefined;
      if (!found) throw notFound(id);
      const main: Record<string, unknown> = {};
      const document: Record<string, unknown> = {};
      for (const [column, value] of Object.entries(change.columns)) (isDocumentColumn(column) ? document : main)[column] = value;
      await trx('inv_certificates').where({ tenant, id: key }).update(main);
      if (Object.keys(document).length > 0) await trx('inv_certificate_documents').where({ tenant, certificate_id: key }).update(document);
      if (change.labels) {
        await this.labels.confirm(trx, tenant, change.labels);
        await trx('inv_certificate_labels').where({ tenant, certificate_id: key }).delete();
        await insertValues(trx, 'inv_certificate_labels', KEY_VALUES, change.labels.map((l) => [key, tenant, l.key, l.value]));
      }
      if (change.metadata) {
        await trx('inv_certificate_metadata').where({ tenant, certificate_id: key }).delete();
        await insertValues(trx, 'inv_certificate_metadata', KEY_VALUES, change.metadata.map((m) => [key, tenant, m.key, m.value]));
      }
      for (const { group, rows } of change.facets) {
        await trx('inv_certificate_facets').where({ tenant, certificate_id: key }).whereIn('facet', [...FACET_GROUPS[group]]).delete();
        await insertValues(trx, 'inv_certificate_facets', FACETS, rows.map((f) => [key, tenant, f.facet, f.value]));
      }
      return (await this.get(tenant, key, trx))!;
    };
    return opts.trx ? run(opts.trx) : this.knex.transaction(run);
  }

  /** A team renamed or merged (PATCH /security/teams/:previousTeam/:newTeam): its certificates follow. Returns how many. */
  async onTeamMigrated(tenant: string, from: string, to: string, db: Db = this.knex): Promise<number> {
    return renameTeam(db, tenant, from, to, this.clock());
  }

  /**
   * Certificate objects of main-table rows (`select inv_certificates.*`, or the columns COLUMNS_FOR(fields)
   * names), in the rows' order. SANs, labels and metadata are read with one query per side table for all
   * rows, and only when `fields` is null or names them. With `fields`, only those properties and `_id`
   * are set; `status` is derived from the clock.
   */
  async objectsOf(
    tenant: string,
    rows: readonly CertificateRow[],
    fields: ReadonlySet<string> | null,
    db: Db = this.knex,
    opts: { contiguous?: boolean } = {},
  ): Promise<CertificateObject[]> {
    if (rows.length === 0) return [];
    const want = (p: string): boolean => fields === null || fields.has(p);
    const ids = rows.map((r) => r.id);
    const documentColumns = DOCUMENT_COLUMNS_FOR(fields);
    const read = (table: string, columns: string[]) => (opts.contiguous ? this.sideRowsInRange(db, table, tenant, ids, columns) : this.sideRows(db, table, tenant, ids, columns));
    const [sans, labels, metadata, documents] = await Promise.all([
      want('subjectAlternateNames') ? read('inv_certificate_sans', ['san_type', 'value', 'position']) : null,
      want('labels') ? read('inv_certificate_labels', ['key', 'value']) : null,
      want('metadata') ? read('inv_certificate_metadata', ['key', 'value']) : null,
      documentColumns.length > 0 ? read('inv_certificate_documents', documentColumns) : null,
    ]);
    const documentOf = documents && new Map(documents.map((d) => [String(d.certificate_id), d]));
    const sanOf = sans && groupBy(sans, (r) => ({ sanType: r.san_type as SubjectAlternateName['sanType'], value: String(r.value), position: Number(r.position) }));
    const labelOf = labels && groupBy(labels, (r) => ({ key: String(r.key), value: String(r.value) }));
    const metaOf = metadata && groupBy(metadata, (r) => ({ key: String(r.key), value: String(r.value) }));
    const now = this.clock();
    const builders = buildersFor(fields);
    return rows.map((row) => {
      const sides: CertificateSides = {};
      if (sanOf) {
        const list = sanOf.get(row.id) ?? [];
        if (list.some((s, i) => i > 0 && s.position < list[i - 1]!.position)) list.sort((a, b) => a.position - b.position);
        sides.sans = list.map((s) => ({ sanType: s.sanType, value: s.value }));
      }
      if (labelOf) sides.labels = (labelOf.get(row.id) ?? []).sort(byKey);
      if (metaOf) sides.metadata = (metaOf.get(row.id) ?? []).sort(byKey);
      const document = documentOf?.get(row.id);
      return objectOf(document ? { ...row, ...document, id: row.id } : row, sides, fields, now, builders);
    });
  }

  /**
   * The SANs, labels and metadata of certificates as CSV text per id (`DNSNAME:a.example; IPADDRESS:10.0.0.1`,
   * `env=prod; tier=web`), in the order objectsOf gives them, for those of `wanted`: the CSV export's
   * side cells without a certificate object (search/csv.ts csvLines). `contiguous` as in objectsOf.
   */
  async sideTextsOf(
    tenant: string,
    ids: readonly string[],
    wanted: ReadonlySet<string>,
    db: Db = this.knex,
    opts: { contiguous?: boolean } = {},
  ): Promise<SideTexts> {
    if (ids.length === 0) return {};
    const read = (table: string, columns: string[]) => (opts.contiguous ? this.sideRowsInRange(db, table, tenant, ids, columns) : this.sideRows(db, table, tenant, ids, columns));
    const [sans, labels, metadata] = await Promise.all([
      wanted.has('subjectAlternateNames') ? read('inv_certificate_sans', ['san_type', 'value', 'position']) : null,
      wanted.has('labels') ? read('inv_certificate_labels', ['key', 'value']) : null,
      wanted.has('metadata') ? read('inv_certificate_metadata', ['key', 'value']) : null,
    ]);
    const out: { -readonly [K in keyof SideTexts]: SideTexts[K] } = {};
    if (sans) {
      const byId = groupBy(sans, (r) => r);
      out.subjectAlternateNames = new Map(
        [...byId].map(([id, list]) => {
          if (list.length > 1) list.sort((a, b) => Number(a.position) - Number(b.position));
          return [id, list.map((r) => `${String(r.san_type)}:${String(r.value)}`).join('; ')];
        }),
      );
    }
    const keyValueText = (rows: Record<string, unknown>[]): Map<string, string> =>
      new Map([...groupBy(rows, (r) => ({ key: String(r.key), value: String(r.value) }))].map(([id, list]) => [id, list.sort(byKey).map((kv) => `${kv.key}=${kv.value}`).join('; ')]));
    if (labels) out.labels = keyValueText(labels);
    if (metadata) out.metadata = keyValueText(metadata);
    return out;
  }

  /** The object of a record just written, without reading it back. */
  private objectOfRecord(record: CertificateRecord): CertificateObject {
    const sides: CertificateSides = {
      sans: record.sans.map((s) => ({ sanType: s.san_type as SubjectAlternateName['sanType'], value: s.value })),
      labels: [...record.labels].sort(byKey),
      metadata: [...record.metadata].sort(byKey),
    };
    return objectOf(record.main, sides, null, this.clock());
  }

  private async sideRows(db: Db, table: string, tenant: string, ids: readonly string[], columns: string[]): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      // By certificate_id alone: with `tenant` in the WHERE, SQLite (no statistics) picks a (tenant, …)
      // index and reads every side row of the tenant (~100 ms a page at 200k). The ids come from a
      // tenant-filtered read and are unique; the tenant is still checked on each row.
      const rows = (await db(table)
        .whereIn('certificate_id', chunk)
        .select('certificate_id', 'tenant', ...columns)) as Record<string, unknown>[];
      for (const r of rows) if (r.tenant === tenant) out.push(r);
    }
    return out;
  }

  /**
   * sideRows for ids that are every certificate of the tenant between the least and the greatest (an
   * unfiltered export in id order): one range read of the certificate_id index instead of one index
   * dive per id, about twice as fast at 1,000 ids. Rows of other tenants in the range are dropped.
   */
  private async sideRowsInRange(db: Db, table: string, tenant: string, ids: readonly string[], columns: string[]): Promise<Record<string, unknown>[]> {
    let low = ids[0]!;
    let high = low;
    for (const id of ids) {
      if (id < low) low = id;
      if (id > high) high = id;
    }
    const wanted = new Set(ids);
    const rows = (await db(table).where('certificate_id', '>=', low).andWhere('certificate_id', '<=', high).select('certificate_id', 'tenant', ...columns)) as Record<string, unknown>[];
    return rows.filter((r) => r.tenant === tenant && wanted.has(String(r.certificate_id)));
  }

  /** Writes records (main rows first, then each side table) in `trx`. */
  private async write(trx: Knex.Transaction, tenant: string, records: readonly CertificateRecord[]): Promise<void> {
    const main: unknown[][] = [];
    const documents: unknown[][] = [];
    const sans: unknown[][] = [];
    const labels: unknown[][] = [];
    const metadata: unknown[][] = [];
    const facets: unknown[][] = [];
    for (const r of records) {
      const m = r.main as unknown as Record<string, unknown>;
      const row: unknown[] = [tenant];
      for (const c of MAIN_COLUMNS) row.push(m[c]);
      main.push(row);
      const document: unknown[] = [r.id, tenant];
      for (const c of DOCUMENT_COLUMNS) document.push(m[c]);
      documents.push(document);
      for (const s of r.sans) sans.push([r.id, tenant, s.san_type, s.value, s.value_lc, s.value_rev, s.position]);
      for (const l of r.labels) labels.push([r.id, tenant, l.key, l.value]);
      for (const l of r.metadata) metadata.push([r.id, tenant, l.key, l.value]);
      for (const f of r.facets) facets.push([r.id, tenant, f.facet, f.value]);
    }
    await insertValues(trx, 'inv_certificates', MAIN, main);
    await insertValues(trx, 'inv_certificate_documents', DOCUMENTS, documents);
    await insertValues(trx, 'inv_certificate_sans', SANS, sans);
    await insertValues(trx, 'inv_certificate_labels', KEY_VALUES, labels);
    await insertValues(trx, 'inv_certificate_metadata', KEY_VALUES, metadata);
    await insertValues(trx, 'inv_certificate_facets', FACETS, facets);
  }
}

function groupBy<T>(rows: readonly Record<string, unknown>[], map: (r: Record<string, unknown>) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const id = String(r.certificate_id);
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push(map(r));
  }
  return out;
}

/** Rewrites the team of a tenant's certificates (a listener must use the migration's transaction). */
export async function renameTeam(db: Db, tenant: string, from: string, to: string, now: number = Date.now()): Promise<number> {
  return db('inv_certificates').where({ tenant, team: from }).update({ team: to, updated_at: now });
}

/**
 * For the security core's onTeamMigrated hook (core/security/groups/team-migration.ts): the certificates
 * of previousTeam move to newTeam inside the migration's transaction.
 */
export const inventoryTeamMigrated: TeamMigratedListener = async (trx, migration) => {
  await renameTeam(trx, migration.tenant, migration.previousTeam, migration.newTeam);
};
