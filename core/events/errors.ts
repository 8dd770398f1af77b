import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of the events API (search, CSV, get, analytics). Suffixes follow client-compat §6. */
export const EVENT_ERRORS = {
  'EVT-002': { status: 400, title: 'Invalid event analytics request', message: 'The event analytics request is not valid' },
  'EVT-003': { status: 404, title: 'Event not found', message: 'No event has this identifier' },
  'EVT-DSC-003': { status: 404, title: 'Discovery event not found', message: 'No discovery event has this identifier' },
} as const satisfies Record<string, CatalogueEntry>;
