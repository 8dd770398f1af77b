import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { CertwrightConfig } from '../config/index.js';
import type { ConfigRegistry } from '../config-objects/registry.js';
import { ProblemError } from '../errors/index.js';
import { DEFAULT_STORAGE, STORAGE_PURPOSES, type Storages } from '../storage/index.js';
import { reportLink } from './link.js';
import { ReportStore, type ReportRecord } from './store.js';

export interface ReportsDeps {
  knex: Knex;
  clock: () => number;
  config: CertwrightConfig;
  storages: Storages;
  registry: ConfigRegistry;
  logger: Logger;
}

export interface PublishInput {
  tenant: string;
  /** The report task's name. */
  name: string;
  fileName: string;
  contentType: string;
  content: Buffer;
  rows: number;
  retentionMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Reports deleted per purge batch. */
const PURGE_BATCH = 100;

/**
 * Stored CSV reports: the content in the storage the system configuration names for reports
 * (magicLinkReportStorage), the metadata in the `reports` table. Reads never see an expired report; the purge
 * job (jobs.ts) deletes them.
 */
export class Reports {
  readonly store: ReportStore;

  constructor(private readonly deps: ReportsDeps) {
    this.store = new ReportStore(deps.knex);
  }

  get config(): CertwrightConfig {
    return this.deps.config;
  }

  now(): number {
    return this.deps.clock();
  }

  /**
   * Stores a report and answers it with its link. The name of the storage is resolved here (Storages.forPurpose
   * answers a backend, not its name) and recorded, so the report is read and removed where it was written.
   */
  async publish(input: PublishInput): Promise<{ record: ReportRecord; link: string }> {
    const storage = await this.storageName(input.tenant);
    const backend = await this.deps.storages.open(input.tenant, storage);
    // Unguessable: the uuid is what a mail carries and what names the file in a shared storage.
    const uuid = randomUUID();
    const storageKey = `reports/${uuid}${input.fileName.endsWith('.gz') ? '.csv.gz' : '.csv'}`;
    await backend.put(storageKey, input.content);
    const createdAt = this.now();
    const record: ReportRecord = {
      uuid,
      tenant: input.tenant,
      name: input.name,
      fileName: input.fileName,
      contentType: input.contentType,
      size: input.content.length,
      rows: input.rows,
      storage,
      storageKey,
      createdAt,
      expiresAt: createdAt + input.retentionMs,
    };
    try {
      await this.store.insert(record);
    } catch (err) {
      await backend.remove(storageKey).catch(() => undefined);
      throw err;
    }
    return { record, link: reportLink(this.deps.config, uuid) };
  }

  /** A live report's metadata, or null (unknown, expired, or not a uuid). */
  async get(tenant: string, uuid: string): Promise<ReportRecord | null> {
    const id = uuid.toLowerCase();
    return UUID.test(id) ? this.store.get(tenant, id, this.now()) : null;
  }

  /** A live report and its content, or null (also when its file has gone from the storage). */
  async content(tenant: string, uuid: string): Promise<{ record: ReportRecord; stream: AsyncIterable<Uint8Array> } | null> {
    const record = await this.get(tenant, uuid);
    if (!record) return null;
    const stream = await (await this.deps.storages.open(tenant, record.storage)).get(record.storageKey);
    return stream ? { record, stream } : null;
  }

  /** Deletes a live report, its file then its row; answers whether there was one. */
  async remove(tenant: string, uuid: string): Promise<boolean> {
    const record = await this.get(tenant, uuid);
    if (!record) return false;
    await this.discard(record);
    return true;
  }

  /** Deletes every expired report (every tenant); answers how many. A report that fails stays for the next run. */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const expired = await this.store.expired(this.now(), PURGE_BATCH);
      let failed = 0;
      for (const record of expired) {
        try {
          await this.discard(record);
          purged++;
        } catch (err) {
          failed++;
          this.deps.logger.warn({ report: record.uuid, storage: record.storage, err: (err as Error).message }, 'expired report not deleted: retried at the next purge');
        }
      }
      // A failure would come back first in the next batch: stop rather than loop on it.
      if (expired.length < PURGE_BATCH || failed > 0) return purged;
    }
  }

  /** The file first: if its removal fails, the row stays and the removal is tried again. */
  private async discard(record: ReportRecord): Promise<void> {
    let backend;
    try {
      backend = await this.deps.storages.open(record.tenant, record.storage);
    } catch (err) {
      // A storage deleted since took its files with it: only the row is left to delete.
      if (!(err instanceof ProblemError && err.status === 404)) throw err;
    }
    await backend?.remove(record.storageKey);
    await this.store.remove(record.tenant, record.uuid);
  }

  /** The storage named for reports (STORAGE_PURPOSES.reports), `default` when none is: as Storages.forPurpose. */
  private async storageName(tenant: string): Promise<string> {
    const entry = await this.deps.registry.resolve('system-configuration', tenant, 'storage');
    const named = entry?.[STORAGE_PURPOSES.reports];
    return typeof named === 'string' && named.length > 0 ? named : DEFAULT_STORAGE;
  }
}
