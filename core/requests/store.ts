import type { Knex } from 'knex';
import { isId, newId } from '../db/ids.js';
import { firstWhere, insertRows, updateWhere } from '../db/statements.js';
import { REQUEST_STATUSES, REQUEST_WORKFLOWS, type KeyValue, type NewRequest, type RequestObject, type RequestPatch, type StoredRequest, type UpdateResult } from './types.js';

type Db = Knex | Knex.Transaction;
type Row = Record<string, unknown>;
type Kind = 'text' | 'number' | 'boolean' | 'json';

/**
 * Properties a write may set, each in a column of `requests` (migration 0008). `always`:
 * the key is in every object (null when unset); the others are left out when unset.
 */
const COLUMNS: readonly { property: keyof RequestPatch & keyof RequestObject; column: string; kind: Kind; always?: true }[] = [
  { property: 'status', column: 'status', kind: 'text', always: true },
  { property: 'profile', column: 'profile', kind: 'text', always: true },
  { property: 'template', column: 'template', kind: 'json', always: true },
  { property: 'dn', column: 'dn', kind: 'text' },
  { property: 'approver', column: 'approver', kind: 'text' },
  { property: 'contact', column: 'contact', kind: 'text' },
  { property: 'team', column: 'team', kind: 'text' },
  { property: 'approverComment', column: 'approver_comment', kind: 'text' },
  { property: 'expirationDate', column: 'expiration_date', kind: 'number' },
  { property: 'removeAt', column: 'remove_at', kind: 'number', always: true },
  { property: 'certificateId', column: 'certificate_id', kind: 'text' },
  { property: 'holderId', column: 'holder_id', kind: 'text', always: true },
  { property: 'error', column: 'error', kind: 'text' },
  { property: 'externalId', column: 'external_id', kind: 'json' },
  { property: 'retryAt', column: 'retry_at', kind: 'number' },
  { property: 'retryCount', column: 'retry_count', kind: 'number', always: true },
  { property: 'requestedX509Data', column: 'requested_x509_data', kind: 'json' },
  { property: 'dryRun', column: 'dry_run', kind: 'boolean', always: true },
];
const SIDES = { labels: 'request_labels', metadata: 'request_metadata' } as const;

/** Keys that hold secrets (PKCS#12, its password, a private key): never written in clear (issue 7 seals them). */
const SECRET_KEYS = new Set(['password', 'privatekey', 'pkcs12']);

function assertNoSecret(value: unknown, path: string): void {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, inner] of Object.entries(value)) {
    if (SECRET_KEYS.has(key.toLowerCase())) throw new Error(`requests: ${path}.${key} would be stored in clear`);
    assertNoSecret(inner, `${path}.${key}`);
  }
}

/** Column values of the properties `input` sets (absent = untouched, null = cleared). */
function columnsOf(input: RequestPatch): Row {
  assertNoSecret(input.template, 'template');
  if (input.status !== undefined && !REQUEST_STATUSES.includes(input.status)) throw new Error(`requests: unknown status ${JSON.stringify(input.status)}`);
  const out: Row = {};
  for (const { property, column, kind } of COLUMNS) {
    const value = input[property];
    if (value === undefined) continue;
    out[column] = value === null ? null : kind === 'json' ? JSON.stringify(value) : value;
  }
  return out;
}

function decode(kind: Kind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'number') return Number(value);
  if (kind === 'boolean') return Boolean(value);
  return kind === 'json' ? JSON.parse(String(value)) : String(value);
}

/** The request object of a row: a property that is not `always` there is left out when null. */
function objectOf(row: Row, labels: KeyValue[], metadata: KeyValue[]): RequestObject {
  const out: Row = { _id: row.id, module: row.module, workflow: row.workflow };
  if (row.requester !== null && row.requester !== undefined) out.requester = row.requester;
  if (row.requester_comment !== null && row.requester_comment !== undefined) out.requesterComment = row.requester_comment;
  out.registrationDate = Number(row.registration_date);
  out.lastModificationDate = Number(row.last_modification_date);
  for (const { property, column, kind, always } of COLUMNS) {
    const value = decode(kind, row[column]);
    if (value !== null || always) out[property] = value;
  }
  out.labels = labels;
  out.metadata = metadata;
  return out as unknown as RequestObject;
}

/** Each (key, value) once, sorted: the unique index allows no repeat, and reads come back in this order. */
function pairsOf(list: readonly KeyValue[]): KeyValue[] {
  const unique = new Map(list.map((p) => [JSON.stringify([p.key, p.value]), { key: p.key, value: p.value }]));
  return [...unique.values()].sort((a, b) => (a.key === b.key ? (a.value < b.value ? -1 : 1) : a.key < b.key ? -1 : 1));
}

/** The request `base` after `patch` (as update wrote it), as a read would answer it. */
function patched(base: StoredRequest, patch: RequestPatch, modifiedAt: number): StoredRequest {
  const r = base.request;
  const row: Row = {
    id: r._id,
    module: r.module,
    workflow: r.workflow,
    requester: r.requester ?? null,
    requester_comment: r.requesterComment ?? null,
    registration_date: r.registrationDate,
    last_modification_date: modifiedAt,
  };
  // Every column from the base (JSON ones as text, as stored), then the patch's columns over them.
  for (const { property, column, kind } of COLUMNS) {
    const value = r[property];
    row[column] = value === undefined || value === null ? null : kind === 'json' ? JSON.stringify(value) : value;
  }
  Object.assign(row, columnsOf(patch));
  const labels = patch.labels ? pairsOf(patch.labels) : [...r.labels];
  const metadata = patch.metadata ? pairsOf(patch.metadata) : [...r.metadata];
  return { version: base.version + 1, request: objectOf(row, labels, metadata) };
}

/**
 * WebRA requests (migration 0008), tenant-scoped. Every write is one transaction over the row and its
 * labels / metadata, so a failure leaves nothing half-written. `version` starts at 1 and grows on each
 * update; an update naming another version changes nothing (optimistic state transitions).
 */
export class RequestStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number = Date.now,
  ) {}

  /** `trx`: inside the caller's transaction (a transition and its event commit together). */
  /** `id`: the new request's id, made beforehand by the caller (newId); else made here. */
  async insert(input: NewRequest, opts: { trx?: Knex.Transaction; id?: string } = {}): Promise<StoredRequest> {
    if (!REQUEST_WORKFLOWS.includes(input.workflow)) throw new Error(`requests: unknown workflow ${JSON.stringify(input.workflow)}`);
    const now = this.clock();
    if (opts.id !== undefined && !isId(opts.id)) throw new Error(`requests: ${JSON.stringify(opts.id)} is not an id`);
    const id = opts.id ?? newId(now);
    const row: Row = {
      id,
      tenant: input.tenant,
      module: input.module,
      workflow: input.workflow,
      requester: input.requester ?? null,
      requester_comment: input.requesterComment ?? null,
      registration_date: now,
      last_modification_date: now,
      template: '{}',
      ...columnsOf(input),
      version: 1,
    };
    const write = async (trx: Knex.Transaction): Promise<StoredRequest> => {
      await insertRows(trx, 'requests', row);
      // A new id has no side rows yet: insert only. The answer is what was written (the columns' defaults
      // filled in), not a read back.
      const labels = await this.insertSides(trx, input.tenant, id, SIDES.labels, input.labels);
      const metadata = await this.insertSides(trx, input.tenant, id, SIDES.metadata, input.metadata);
      return { version: 1, request: objectOf({ retry_count: 0, dry_run: false, ...row }, labels, metadata) };
    };
    return opts.trx ? write(opts.trx) : this.knex.transaction(write);
  }

  async get(tenant: string, id: string, opts: { trx?: Knex.Transaction } = {}): Promise<StoredRequest | null> {
    const key = id.toLowerCase();
    return isId(key) ? this.read(opts.trx ?? this.knex, tenant, key) : null;
  }

  /**
   * `get` for a caller that holds the request as it was at some version (`known`): only the row's version is
   * read, and while it is still that version the request is `known`'s (insert and update are the only writes,
   * and every update takes a new version), without reading the row, its labels or its metadata.
   */
  async getKnowing(tenant: string, id: string, known: StoredRequest, opts: { trx?: Knex.Transaction } = {}): Promise<StoredRequest | null> {
    const key = id.toLowerCase();
    if (!isId(key)) return null;
    const db = opts.trx ?? this.knex;
    if (known.request._id !== key) return this.read(db, tenant, key);
    const row = (await firstWhere(db, 'requests', { tenant, id: key }, ['version'])) as Pick<Row, 'version'> | undefined;
    if (!row) return null;
    if (Number(row.version) !== known.version) return this.read(db, tenant, key);
    const r = known.request;
    return { version: known.version, request: { ...r, labels: [...r.labels], metadata: [...r.metadata] } };
  }

  /** Request objects of rows of `requests` read by a search (labels and metadata in one read each). */
  async objectsOfRows(tenant: string, rows: readonly Row[]): Promise<RequestObject[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => String(r.id));
    const sides = async (table: string): Promise<Map<string, KeyValue[]>> => {
      const found = (await this.knex(table).where({ tenant }).whereIn('request_id', ids).select('request_id', 'key', 'value')) as (KeyValue & { request_id: string })[];
      const out = new Map<string, KeyValue[]>();
      for (const r of found) out.set(r.request_id, [...(out.get(r.request_id) ?? []), { key: r.key, value: r.value }]);
      return out;
    };
    const [labels, metadata] = [await sides(SIDES.labels), await sides(SIDES.metadata)];
    return rows.map((row) => objectOf(row, pairsOf(labels.get(String(row.id)) ?? []), pairsOf(metadata.get(String(row.id)) ?? [])));
  }

  /**
   * Applies `patch` if the request is still at `expectedVersion`; the modification date is the clock's.
   * `base`: the request as read at `expectedVersion` — the answer is then built from it and the patch (the
   * conditional UPDATE proves the row was still that version) instead of read back.
   */
  async update(tenant: string, id: string, expectedVersion: number, patch: RequestPatch, opts: { trx?: Knex.Transaction; base?: StoredRequest } = {}): Promise<UpdateResult> {
    const key = id.toLowerCase();
    if (!isId(key)) return { outcome: 'missing' };
    const columns = { ...columnsOf(patch), last_modification_date: this.clock(), version: expectedVersion + 1 };
    const base = opts.base && opts.base.version === expectedVersion && opts.base.request._id === key ? opts.base : undefined;
    const run = async (trx: Knex.Transaction): Promise<UpdateResult> => {
      const changed = await updateWhere(trx, 'requests', { tenant, id: key, version: expectedVersion }, columns);
      if (changed === 0) {
        const current = (await trx('requests').where({ tenant, id: key }).first('version')) as Row | undefined;
        return current ? { outcome: 'conflict', version: Number(current.version) } : { outcome: 'missing' };
      }
      await this.writeSides(trx, tenant, key, patch);
      if (base) return { outcome: 'updated', stored: patched(base, patch, columns.last_modification_date) };
      return { outcome: 'updated', stored: (await this.read(trx, tenant, key))! };
    };
    return opts.trx ? run(opts.trx) : this.knex.transaction(run);
  }

  /** The side rows of a new request; answers the list as a read would give it. */
  private async insertSides(trx: Knex.Transaction, tenant: string, id: string, table: string, list: readonly KeyValue[] | undefined): Promise<KeyValue[]> {
    const pairs = pairsOf(list ?? []);
    if (pairs.length > 0) await trx(table).insert(pairs.map((p) => ({ request_id: id, tenant, key: p.key, value: p.value })));
    return pairs;
  }

  /** Replaces the labels / metadata lists `input` carries. */
  private async writeSides(trx: Knex.Transaction, tenant: string, id: string, input: RequestPatch): Promise<void> {
    for (const [property, table] of Object.entries(SIDES) as [keyof typeof SIDES, string][]) {
      const list = input[property];
      if (!list) continue;
      await trx(table).where({ tenant, request_id: id }).delete();
      const rows = pairsOf(list).map((p) => ({ request_id: id, tenant, key: p.key, value: p.value }));
      if (rows.length > 0) await trx(table).insert(rows);
    }
  }

  private async read(db: Db, tenant: string, id: string): Promise<StoredRequest | null> {
    const row = (await db('requests').where({ tenant, id }).first()) as Row | undefined;
    if (!row) return null;
    const side = async (table: string): Promise<KeyValue[]> =>
      pairsOf((await db(table).where({ tenant, request_id: id }).select('key', 'value')) as KeyValue[]);
    const [labels, metadata] = [await side(SIDES.labels), await side(SIDES.metadata)];
    return { version: Number(row.version), request: objectOf(row, labels, metadata) };
  }
}
