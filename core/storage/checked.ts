import type { StorageBackend } from '@certwright/sdk';
import { checkStorageKey } from './keys.js';

/** A plugin's backend behind the core's key rule: a hostile key never reaches a plugin. */
export function checkedBackend(inner: StorageBackend): StorageBackend {
  return {
    async put(key, data) {
      checkStorageKey(key);
      return inner.put(key, data);
    },
    async get(key) {
      checkStorageKey(key);
      return inner.get(key);
    },
    async remove(key) {
      checkStorageKey(key);
      return inner.remove(key);
    },
  };
}
