/** Storages: where heavy files the platform produces go (reports, archives). */
export { Storages, STORAGE_PURPOSES, DEFAULT_STORAGE, type StoragePurpose, type StoragesDeps } from './storages.js';
export { FilesystemStorage, filesystemRoot } from './filesystem.js';
export { DatabaseStorage, CHUNK_BYTES } from './database.js';
export { checkStorageKey, StorageKeyError, MAX_KEY_LENGTH } from './keys.js';
export type { StorageData } from './chunks.js';
