/** WebRA requests (client-compat §2): their store, HRQL and the workflows (workflow/, routes/). */
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
export { RequestWorkflows, type RequestAnswer } from './workflow/service.js';
