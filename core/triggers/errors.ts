import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of triggers (configuration, runs). Suffixes follow client-compat §6. */
export const TRIGGER_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
