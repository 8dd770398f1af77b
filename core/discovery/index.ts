/** Discovery (client-compat §5): the discovery event store and HDQL. Routes come later. */
export { DiscoveryEventStore, discoveryEventFromRow } from './event-store.js';
export { DISCOVERY_EVENT_FIELDS, DISCOVERY_EVENT_LANGUAGE } from './language.js';
export { DISCOVERY_ERRORS } from './errors.js';
export {
  DISCOVERY_EVENT_CODES,
  DISCOVERY_EVENT_STATUSES,
  type DiscoveryEventInput,
  type DiscoveryEventOrigin,
  type DiscoveryEventStatus,
  type StoredDiscoveryEvent,
} from './types.js';
