/**
 * Storage for heavy files the service produces (reports, archives). A plugin registers a factory per
 * storage type (`registries.storages.register('s3', factory)`); the core calls it with `{name, config}`,
 * `config` being the storage object (/api/v1/system/storages/) plus `tenant` and `references` (the
 * credential and proxy it names, secrets open), and calls it again when that object changes.
 *
 * Keys are relative, `/`-separated names of `[A-Za-z0-9._-]` segments (no `.` or `..`, at most 191
 * characters): the core refuses any other key before it reaches a backend.
 */
export interface StorageBackend {
  /** Stores `data` under `key`, replacing what was there only once all of it is written (never half a file). */
  put(key: string, data: Buffer | AsyncIterable<Uint8Array>): Promise<void>;
  /** The content under `key` as a stream, or null when there is none. */
  get(key: string): Promise<AsyncIterable<Uint8Array> | null>;
  /** Removes `key`; a missing key is not an error. */
  remove(key: string): Promise<void>;
}
