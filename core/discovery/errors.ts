import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of discovery. Suffixes follow client-compat §6: 002 validation. */
export const DISCOVERY_ERRORS = {
  'DSC-002': { status: 400, title: 'Invalid discovery event', message: 'The discovery event is not valid' },
} as const satisfies Record<string, CatalogueEntry>;
