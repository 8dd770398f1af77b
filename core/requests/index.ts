/** WebRA requests (client-compat §2): their store and HRQL. The /api/v1/requests routes come later. */
export { RequestStore } from './store.js';
export { REQUEST_FIELDS, REQUEST_LANGUAGE, REQUEST_SPECIALS } from './language.js';
export {
  REQUEST_STATUSES,
  REQUEST_WORKFLOWS,
  type KeyValue,
  type NewRequest,
  type RequestObject,
  type RequestPatch,
  type RequestStatus,
  type RequestWorkflow,
  type StoredRequest,
  type UpdateResult,
} from './types.js';
