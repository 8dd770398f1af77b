import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Codes of the datasource routes beyond the collection's own family (DATASOURCE-002 invalid, -003 unknown, -004
 * exists, -005 referenced, which the registry derives from the type). A fetch that fails (unreachable server,
 * refused bind, timeout, oversized or malformed answer) is the caller's configuration meeting the outside world:
 * a 422 naming what went wrong, never a 500.
 *
 * Apart from errors.ts, with no value import: core/errors/catalogue.ts lists it, and errors.ts needs ProblemError
 * (an import cycle through the catalogue otherwise).
 */
export const DATASOURCE_ERRORS = {
  'DATASOURCE-006': { status: 422, title: 'Datasource fetch failed', message: 'The datasource could not be fetched' },
} as const satisfies Record<string, CatalogueEntry>;
