import type { CatalogueEntry } from '../../errors/catalogue.js';

/** Error codes of the event integrity check and checkpoints. Suffixes follow client-compat §6. */
export const INTEGRITY_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
