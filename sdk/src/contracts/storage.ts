/** Storage for heavy files the service produces (reports, archives). */
export interface StorageBackend {
  put(key: string, data: Buffer | AsyncIterable<Uint8Array>): Promise<void>;
  get(key: string): Promise<AsyncIterable<Uint8Array> | null>;
  remove(key: string): Promise<void>;
}
