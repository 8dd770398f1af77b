/**
 * Storage keys: relative, slash-separated names. One rule for every backend (plugins' included, through
 * the Storages service), so a key that reaches a file name, a row or an object store cannot climb out of
 * its storage.
 */

/** The `storage_blobs.blob_key` column's length: the same bound everywhere, so a key fits every backend. */
export const MAX_KEY_LENGTH = 191;

const KEY = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

export class StorageKeyError extends TypeError {
  constructor(key: unknown, why: string) {
    super(`storage key ${JSON.stringify(typeof key === 'string' ? key.slice(0, 64) : key)} refused: ${why}`);
    this.name = 'StorageKeyError';
  }
}

/** Throws StorageKeyError unless `key` is a safe relative key. */
export function checkStorageKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new StorageKeyError(key, 'empty');
  if (key.length > MAX_KEY_LENGTH) throw new StorageKeyError(key, `longer than ${MAX_KEY_LENGTH} characters`);
  if (!KEY.test(key)) throw new StorageKeyError(key, 'only letters, digits, ".", "_", "-" and "/" between segments');
  // `.` and `..` pass the character rule: refused by segment.
  if (key.split('/').some((segment) => segment === '.' || segment === '..')) throw new StorageKeyError(key, '"." and ".." segments');
}
