import type { CatalogueEntry } from '../../errors/catalogue.js';

/** Error codes of the event integrity check and checkpoints. Suffixes follow client-compat §6. */
export const INTEGRITY_ERRORS = {
  'EVT-INTEG-003': { status: 404, title: 'No integrity check yet', message: 'No integrity check of the event chain has run yet: start one with GET /api/v1/events/integrity/run' },
} as const satisfies Record<string, CatalogueEntry>;
