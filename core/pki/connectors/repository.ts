import type { Knex } from 'knex';
import { isMysql } from '../../db/dialect.js';
import { newId } from '../../db/ids.js';
import { tenantKey, TrustedReads } from '../../db/trusted-reads.js';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import type { EventStore } from '../../events/store.js';
import { maskConfiguration } from './configuration.js';
import { VERSION_CHECK_MS } from './instances.js';
import {
  connectorOfRow,
  DEFAULT_QUEUE,
  DEFAULT_QUEUE_LIMITS,
  DEFAULT_QUEUE_SETTINGS,
  queueOfRow,
  rowOfConnector,
  rowOfQueue,
  type ConnectorRecord,
  type ConnectorRow,
  type QueueLimits,
  type QueueRecord,
  type QueueRow,
  type QueueSettings,
  type QueueStateView,
} from './model.js';

const CONNECTORS = 'pki_connectors';
const QUEUES = 'pki_queues';
const ITEMS = 'pki_queue_items';

/** The API shape of a connector: secrets read ********; `type` as the client named it (wireType). */
export type ConnectorView = Omit<ConnectorRecord, 'id' | 'tenant' | 'wireType'> & { _id: string };

export const connectorView = (c: ConnectorRecord): ConnectorView => ({
  _id: c.id,
  name: c.name,
  type: c.wireType ?? c.type,
  description: c.description,
  enabled: c.enabled,
  queue: c.queue,
  configuration: maskConfiguration(c.configuration),
  version: c.version,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
  createdBy: c.createdBy,
  updatedBy: c.updatedBy,
});

export interface QueueView extends QueueSettings, QueueLimits {
  _id: string;
  name: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
  state: QueueStateView;
}

/** A connector ready to store: its configuration already validated and sealed. */
export interface ConnectorFields {
  name: string;
  type: string;
  wireType: string | null;
  description: string | null;
  enabled: boolean;
  queue: string;
  configuration: Record<string, unknown>;
}

export interface QueueFields extends QueueSettings, QueueLimits {
  name: string;
  description: string | null;
}

/** What the gateway reads of a queue before each first attempt. */
export type QueueRules = Pick<QueueRecord, 'paused' | keyof QueueLimits>;
const rulesOf = (q: QueueRecord): QueueRules => ({ paused: q.paused, size: q.size, throttleParallelism: q.throttleParallelism, throttleDuration: q.throttleDuration, clusterWide: q.clusterWide });

const connectorNotFound = (name: string): ProblemError => new ProblemError('PKI-CONN-003', { message: `No PKI connector is named "${name}"` });
const queueNotFound = (name: string): ProblemError => new ProblemError('PKI-QUEUE-003', { message: `No PKI queue is named "${name}"` });

/**
 * PKI connectors and queues of each tenant (migration 0014). Every change is one transaction with its
 * event (PKI-CONNECTOR-… / PKI-QUEUE-…); events carry the masked view, never a secret.
 */
export class ConnectorRepository {
  /** queueRules' answers, by tenant and queue name. */
  private readonly rulesTrusted = new TrustedReads<QueueRules>(VERSION_CHECK_MS);

  constructor(
    private readonly knex: Knex,
    private readonly events: EventStore,
    private readonly clock: () => number,
  ) {}

  // --- connectors ---

  async list(tenant: string): Promise<ConnectorRecord[]> {
    return ((await this.knex(CONNECTORS).where({ tenant }).orderBy('name')) as ConnectorRow[]).map(connectorOfRow);
  }

  async find(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<ConnectorRecord | null> {
    const row = (await db(CONNECTORS).where({ tenant, name }).first()) as ConnectorRow | undefined;
    return row ? connectorOfRow(row) : null;
  }

  async get(tenant: string, name: string): Promise<ConnectorRecord> {
    const found = await this.find(tenant, name);
    if (!found) throw connectorNotFound(name);
    return found;
  }

  /** The version and enabled flag only (the instance cache's cheap freshness check). */
  async stamp(tenant: string, name: string): Promise<{ version: number; enabled: boolean } | null> {
    const row = (await this.knex(CONNECTORS).where({ tenant, name }).first('version', 'enabled')) as { version: number | string; enabled: number | boolean } | undefined;
    return row ? { version: Number(row.version), enabled: Boolean(row.enabled) } : null;
  }

  async count(tenant: string): Promise<number> {
    const row = (await this.knex(CONNECTORS).where({ tenant }).count({ n: '*' }).first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }

  /** Inserts a connector with its event. */
  async create(tenant: string, fields: ConnectorFields, principal: string | null): Promise<ConnectorRecord> {
    try {
      return await this.knex.transaction(async (trx) => {
        const record = await this.insertConnector(trx, tenant, fields, principal);
        await this.recordConnector(trx, record, 'PKI-CONNECTOR-CREATED', principal);
        return record;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('PKI-CONN-004', { message: `A PKI connector named "${fields.name}" already exists` });
      throw err;
    }
  }

  /** Replaces the connector of that name (id, creation and type stay; the version grows), with its event. */
  async update(tenant: string, fields: ConnectorFields, principal: string | null): Promise<ConnectorRecord> {
    return this.knex.transaction(async (trx) => {
      const record = await this.replaceConnector(trx, tenant, fields, principal);
      await this.recordConnector(trx, record, 'PKI-CONNECTOR-UPDATED', principal);
      return record;
    });
  }

  async remove(tenant: string, name: string, principal: string | null): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const removed = await this.deleteConnector(trx, tenant, name);
      await this.recordConnector(trx, removed, 'PKI-CONNECTOR-DELETED', principal);
    });
  }

  // The writes themselves, on the caller's handle and without an event: the routes above add theirs, the
  // configuration registry (config-type.ts) writes its own on the import's transaction.

  /** Every connector of a tenant, on `db`. */
  async listOn(db: Knex | Knex.Transaction, tenant: string): Promise<ConnectorRecord[]> {
    return ((await db(CONNECTORS).where({ tenant }).orderBy('name')) as ConnectorRow[]).map(connectorOfRow);
  }

  /** Inserts a connector naming an existing queue; a taken name is the driver's unique violation. */
  async insertConnector(db: Knex | Knex.Transaction, tenant: string, fields: ConnectorFields, principal: string | null): Promise<ConnectorRecord> {
    const now = this.clock();
    const record: ConnectorRecord = { id: newId(now), tenant, ...fields, version: 1, createdAt: now, updatedAt: now, createdBy: principal, updatedBy: principal };
    await this.requireQueue(db, tenant, fields.queue);
    await db(CONNECTORS).insert(rowOfConnector(record));
    return record;
  }

  /** Replaces the connector of that name (id and creation stay; the version grows): instances see the change. */
  async replaceConnector(db: Knex | Knex.Transaction, tenant: string, fields: ConnectorFields, principal: string | null): Promise<ConnectorRecord> {
    const current = await this.lockedConnector(db, tenant, fields.name);
    await this.requireQueue(db, tenant, fields.queue);
    const record: ConnectorRecord = {
      ...current,
      ...fields,
      version: current.version + 1,
      updatedAt: Math.max(this.clock(), current.updatedAt),
      updatedBy: principal,
    };
    await db(CONNECTORS).where({ id: current.id }).update(rowOfConnector(record));
    return record;
  }

  /** Deletes the connector of that name; answers what was deleted. */
  async deleteConnector(db: Knex | Knex.Transaction, tenant: string, name: string): Promise<ConnectorRecord> {
    const current = await this.lockedConnector(db, tenant, name);
    await db(CONNECTORS).where({ id: current.id }).delete();
    return current;
  }

  private async lockedConnector(trx: Knex | Knex.Transaction, tenant: string, name: string): Promise<ConnectorRecord> {
    const read = trx(CONNECTORS).where({ tenant, name }).first();
    const row = (await (isMysql(trx) ? read.forUpdate() : read)) as ConnectorRow | undefined;
    if (!row) throw connectorNotFound(name);
    return connectorOfRow(row);
  }

  private async recordConnector(trx: Knex.Transaction, c: ConnectorRecord, code: string, principal: string | null): Promise<void> {
    await this.events.append(
      { tenant: c.tenant, code, module: 'pki', status: 'success', principal, objectType: 'pki-connector', objectId: c.name, payload: { connector: connectorView(c) } },
      { trx },
    );
  }

  // --- queues ---

  /** The built-in queue `default` exists from its first use on (race-safe: a concurrent insert wins). */
  async ensureDefaultQueue(tenant: string, db: Knex | Knex.Transaction = this.knex): Promise<void> {
    if (await db(QUEUES).where({ tenant, name: DEFAULT_QUEUE }).first('id')) return;
    const now = this.clock();
    const record: QueueRecord = { id: newId(now), tenant, name: DEFAULT_QUEUE, description: 'Built-in queue', ...DEFAULT_QUEUE_SETTINGS, ...DEFAULT_QUEUE_LIMITS, createdAt: now, updatedAt: now, createdBy: null, updatedBy: null };
    const insert = async (trx: Knex.Transaction): Promise<void> => {
      await trx(QUEUES).insert(rowOfQueue(record));
      await this.recordQueue(trx, record, 'PKI-QUEUE-CREATED', null);
    };
    try {
      if (db.isTransaction) {
        // Inside the caller's transaction: a savepoint keeps a lost race from aborting it (MariaDB).
        await (db as Knex.Transaction).transaction(insert);
      } else await this.knex.transaction(insert);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }

  private async requireQueue(trx: Knex | Knex.Transaction, tenant: string, name: string): Promise<void> {
    if (name === DEFAULT_QUEUE) return this.ensureDefaultQueue(tenant, trx);
    if (!(await trx(QUEUES).where({ tenant, name }).first('id'))) throw new ProblemError('PKI-CONN-002', { detail: `queue: no PKI queue is named "${name}"` });
  }

  async listQueues(tenant: string): Promise<QueueRecord[]> {
    await this.ensureDefaultQueue(tenant);
    return ((await this.knex(QUEUES).where({ tenant }).orderBy('name')) as QueueRow[]).map(queueOfRow);
  }

  async findQueue(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<QueueRecord | null> {
    const found = (await db(QUEUES).where({ tenant, name }).first()) as QueueRow | undefined;
    if (found) return queueOfRow(found);
    if (name !== DEFAULT_QUEUE) return null;
    // The built-in queue on its first use (one read in the usual case, where it exists).
    await this.ensureDefaultQueue(tenant, db);
    const row = (await db(QUEUES).where({ tenant, name }).first()) as QueueRow | undefined;
    return row ? queueOfRow(row) : null;
  }

  async getQueue(tenant: string, name: string): Promise<QueueRecord> {
    const found = await this.findQueue(tenant, name);
    if (!found) throw queueNotFound(name);
    return found;
  }

  /** The retry settings of a queue; a queue deleted under its items falls back to the defaults. */
  async settingsOf(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<QueueSettings> {
    const row = (await db(QUEUES).where({ tenant, name }).first()) as QueueRow | undefined;
    return row ? queueOfRow(row) : DEFAULT_QUEUE_SETTINGS;
  }

  /**
   * Whether queue `name` is paused and its bounds, for the gateway's first attempt of each new item: an
   * answer read within VERSION_CHECK_MS is trusted (as a connector instance is: instances.ts); a change
   * through this repository forgets it. A missing queue reads as running and unbounded (its items then retry
   * on the defaults).
   */
  async queueRules(tenant: string, name: string): Promise<QueueRules> {
    const load = async (): Promise<QueueRules | null> => {
      const queue = await this.findQueue(tenant, name);
      return queue ? rulesOf(queue) : null;
    };
    return (await this.rulesTrusted.read(tenantKey(tenant, name), load)) ?? { paused: false, ...DEFAULT_QUEUE_LIMITS };
  }

  /** Names of the paused queues of every tenant, as `tenant\0name`. */
  async pausedQueues(): Promise<Set<string>> {
    const rows = (await this.knex(QUEUES).where({ paused: true }).select('tenant', 'name')) as { tenant: string; name: string }[];
    return new Set(rows.map((r) => `${r.tenant}\u0000${r.name}`));
  }

  async createQueue(tenant: string, fields: QueueFields, principal: string | null): Promise<QueueRecord> {
    if (fields.name === DEFAULT_QUEUE) await this.ensureDefaultQueue(tenant);
    try {
      // A missing queue was trusted as not paused: created paused, it is paused here at once.
      return await this.rulesTrusted.changing(tenantKey(tenant, fields.name), () =>
        this.knex.transaction(async (trx) => {
          const record = await this.insertQueue(trx, tenant, fields, principal);
          await this.recordQueue(trx, record, 'PKI-QUEUE-CREATED', principal);
          return record;
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('PKI-QUEUE-004', { message: `A PKI queue named "${fields.name}" already exists` });
      throw err;
    }
  }

  async updateQueue(tenant: string, fields: QueueFields, principal: string | null): Promise<QueueRecord> {
    if (fields.name === DEFAULT_QUEUE) await this.ensureDefaultQueue(tenant);
    return this.rulesTrusted.changing(tenantKey(tenant, fields.name), () =>
      this.knex.transaction(async (trx) => {
        const record = await this.replaceQueue(trx, tenant, fields, principal);
        await this.recordQueue(trx, record, 'PKI-QUEUE-UPDATED', principal);
        return record;
      }),
    );
  }

  /** Deletes a queue no connector names and no item waits in; `default` cannot go. */
  async removeQueue(tenant: string, name: string, principal: string | null): Promise<void> {
    await this.rulesTrusted.changing(tenantKey(tenant, name), () =>
      this.knex.transaction(async (trx) => {
        const removed = await this.deleteQueue(trx, tenant, name);
        await this.recordQueue(trx, removed, 'PKI-QUEUE-DELETED', principal);
      }),
    );
  }

  /** Every queue of a tenant (the built-in one included), on `db`. */
  async listQueuesOn(db: Knex | Knex.Transaction, tenant: string): Promise<QueueRecord[]> {
    await this.ensureDefaultQueue(tenant, db);
    return ((await db(QUEUES).where({ tenant }).orderBy('name')) as QueueRow[]).map(queueOfRow);
  }

  /** Inserts a queue; a taken name is the driver's unique violation. */
  async insertQueue(db: Knex | Knex.Transaction, tenant: string, fields: QueueFields, principal: string | null): Promise<QueueRecord> {
    const now = this.clock();
    const record: QueueRecord = { id: newId(now), tenant, ...fields, createdAt: now, updatedAt: now, createdBy: principal, updatedBy: principal };
    await db(QUEUES).insert(rowOfQueue(record));
    return record;
  }

  /** Replaces the settings of the queue of that name (PKI-QUEUE-003 when there is none). */
  async replaceQueue(db: Knex | Knex.Transaction, tenant: string, fields: QueueFields, principal: string | null): Promise<QueueRecord> {
    const read = db(QUEUES).where({ tenant, name: fields.name }).first();
    const row = (await (isMysql(db) ? read.forUpdate() : read)) as QueueRow | undefined;
    if (!row) throw queueNotFound(fields.name);
    const current = queueOfRow(row);
    const record: QueueRecord = { ...current, ...fields, updatedAt: Math.max(this.clock(), current.updatedAt), updatedBy: principal };
    await db(QUEUES).where({ id: current.id }).update(rowOfQueue(record));
    return record;
  }

  /** Deletes a queue no connector names and no item waits in (PKI-QUEUE-005); `default` cannot go (PKI-QUEUE-002). */
  async deleteQueue(db: Knex | Knex.Transaction, tenant: string, name: string): Promise<QueueRecord> {
    if (name === DEFAULT_QUEUE) throw new ProblemError('PKI-QUEUE-002', { message: 'The built-in queue "default" cannot be deleted' });
    const read = db(QUEUES).where({ tenant, name }).first();
    const row = (await (isMysql(db) ? read.forUpdate() : read)) as QueueRow | undefined;
    if (!row) throw queueNotFound(name);
    const users = (await db(CONNECTORS).where({ tenant, queue: name }).orderBy('name').select('name')) as { name: string }[];
    if (users.length > 0) throw new ProblemError('PKI-QUEUE-005', { detail: `used by the PKI connector(s) ${users.map((u) => `"${u.name}"`).join(', ')}` });
    if (await this.hasItems(db, tenant, name)) throw new ProblemError('PKI-QUEUE-005', { detail: 'items are still queued in it' });
    await db(QUEUES).where({ id: row.id }).delete();
    // Its cluster-wide throttle places (throttle.ts) go with it: a queue made again under this name starts afresh.
    await db('pki_queue_slots').where({ tenant, queue: name }).delete();
    return queueOfRow(row);
  }

  /** Whether any item of the queue is still in the table (waiting, running or failed). */
  async hasItems(db: Knex | Knex.Transaction, tenant: string, queue: string): Promise<boolean> {
    return (await db(ITEMS).where({ tenant, queue }).first('id')) !== undefined;
  }

  /** Forgets what this node trusts of a queue's rules (a change committed by the configuration registry). */
  forgetQueueRules(tenant: string, name: string): void {
    void this.rulesTrusted.changing(tenantKey(tenant, name), async () => undefined);
  }

  /** Counts and dates of the items of each queue of a tenant. */
  async queueStates(tenant: string): Promise<Map<string, QueueStateView>> {
    const rows = (await this.knex(ITEMS).where({ tenant }).groupBy('queue', 'state').select('queue', 'state').count({ n: '*' }).min({ next: 'next_attempt_at' })) as {
      queue: string;
      state: string;
      n: number | string;
      next: number | string | null;
    }[];
    const out = new Map<string, QueueStateView>();
    const of = (queue: string): QueueStateView => {
      let s = out.get(queue);
      if (!s) out.set(queue, (s = { waiting: 0, running: 0, failed: 0, nextAttemptAt: null, lastError: null }));
      return s;
    };
    for (const r of rows) {
      const s = of(r.queue);
      if (r.state === 'waiting' || r.state === 'running' || r.state === 'failed') s[r.state] = Number(r.n);
      if (r.state === 'waiting' && r.next !== null) s.nextAttemptAt = Number(r.next);
    }
    for (const queue of out.keys()) {
      const last = (await this.knex(ITEMS).where({ tenant, queue }).whereNotNull('last_error').orderBy('updated_at', 'desc').first('last_error')) as { last_error: string } | undefined;
      of(queue).lastError = last?.last_error ?? null;
    }
    return out;
  }

  private async recordQueue(trx: Knex.Transaction, q: QueueRecord, code: string, principal: string | null): Promise<void> {
    const { retries, initialDelaySeconds, maxDelaySeconds, paused, description, size, throttleParallelism, throttleDuration, clusterWide } = q;
    const queue = { name: q.name, description, retries, initialDelaySeconds, maxDelaySeconds, paused, size, throttleParallelism, throttleDuration, clusterWide };
    await this.events.append(
      { tenant: q.tenant, code, module: 'pki', status: 'success', principal, objectType: 'pki-queue', objectId: q.name, payload: { queue } },
      { trx },
    );
  }
}

export const EMPTY_QUEUE_STATE: QueueStateView = { waiting: 0, running: 0, failed: 0, nextAttemptAt: null, lastError: null };

export const queueView = (q: QueueRecord, state: QueueStateView | undefined): QueueView => ({
  _id: q.id,
  name: q.name,
  description: q.description,
  retries: q.retries,
  initialDelaySeconds: q.initialDelaySeconds,
  maxDelaySeconds: q.maxDelaySeconds,
  paused: q.paused,
  size: q.size,
  clusterWide: q.clusterWide,
  throttleDuration: q.throttleDuration,
  throttleParallelism: q.throttleParallelism,
  createdAt: q.createdAt,
  updatedAt: q.updatedAt,
  state: state ?? EMPTY_QUEUE_STATE,
});
