import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { StorageBackend } from '@certwright/sdk';
import { fixedChunks, type StorageData } from './chunks.js';
import { checkStorageKey } from './keys.js';

/** Rows of 256 KiB: far below MySQL's max_allowed_packet and its mediumblob, and few rows per file. */
export const CHUNK_BYTES = 256 * 1024;

/** Keys cannot hold `~`: staged writes cannot meet a real key. */
const STAGING = '~staging/';
/** A staged write older than this was left by a node that stopped mid-write. */
const ABANDONED_MS = 24 * 60 * 60 * 1000;

const TABLE = 'storage_blobs';

/**
 * The `database` storage type: each key as rows of `storage_blobs` (chunk 0, 1, …). A write stages its
 * chunks under a private key, then swaps them in with one transaction: the transaction never waits on the
 * writer's stream (on SQLite it would hold the only connection, which the stream's producer may need).
 */
export class DatabaseStorage implements StorageBackend {
  constructor(
    private readonly knex: Knex,
    readonly tenant: string,
    readonly storage: string,
    private readonly clock: () => number = Date.now,
  ) {}

  private rows(key: string) {
    return this.knex(TABLE).where({ tenant: this.tenant, storage: this.storage, blob_key: key });
  }

  async put(key: string, data: StorageData): Promise<void> {
    checkStorageKey(key);
    const now = this.clock();
    // Fixed-width time first: staged keys sort by age, so abandoned ones are one range.
    const staged = `${STAGING}${String(now).padStart(15, '0')}-${randomBytes(6).toString('hex')}`;
    await this.knex(TABLE)
      .where({ tenant: this.tenant, storage: this.storage })
      .where('blob_key', '>=', STAGING)
      .where('blob_key', '<', `${STAGING}${String(now - ABANDONED_MS).padStart(15, '0')}`)
      .delete();
    try {
      let chunk = 0;
      // An empty value is one empty chunk: it exists (get answers an empty stream, not null).
      for await (const piece of fixedChunks(data, CHUNK_BYTES)) {
        await this.knex(TABLE).insert({ tenant: this.tenant, storage: this.storage, blob_key: staged, chunk: chunk++, data: piece });
      }
      await this.knex.transaction(async (trx) => {
        await trx(TABLE).where({ tenant: this.tenant, storage: this.storage, blob_key: key }).delete();
        await trx(TABLE).where({ tenant: this.tenant, storage: this.storage, blob_key: staged }).update({ blob_key: key });
      });
    } catch (err) {
      await this.rows(staged).delete().catch(() => undefined);
      throw err;
    }
  }

  async get(key: string): Promise<AsyncIterable<Uint8Array> | null> {
    checkStorageKey(key);
    const first = await this.chunkAfter(key, -1);
    if (!first) return null;
    return this.stream(key, first);
  }

  /**
   * One row per query, in chunk order: a large file never sits in memory whole, and no connection is held
   * between chunks. A read that overlaps a replace of the same key may mix both: writers use fresh keys.
   */
  private async *stream(key: string, first: { chunk: number; data: Buffer }): AsyncGenerator<Uint8Array> {
    let row: { chunk: number; data: Buffer } | undefined = first;
    while (row) {
      yield row.data;
      row = await this.chunkAfter(key, row.chunk);
    }
  }

  private async chunkAfter(key: string, chunk: number): Promise<{ chunk: number; data: Buffer } | undefined> {
    return (await this.rows(key).where('chunk', '>', chunk).orderBy('chunk').first('chunk', 'data')) as { chunk: number; data: Buffer } | undefined;
  }

  async remove(key: string): Promise<void> {
    checkStorageKey(key);
    await this.rows(key).delete();
  }
}
