import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of the events API (search, CSV, get, analytics). Suffixes follow client-compat §6. */
export const EVENT_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
