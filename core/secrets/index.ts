// Secrets at rest: master key loading and AES-256-GCM envelope sealing.
export { keyId, loadMasterKey, MasterKeyError, MASTER_KEY_BYTES, MASTER_KEY_FILE } from './master-key.js';
export type { LoadedMasterKey } from './master-key.js';
export { SecretBox, SecretDecryptError } from './envelope.js';
