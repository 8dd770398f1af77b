import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of the DCV lifecycle routes (the collections' own come from their errorFamily). */
export const DCV_ERRORS = {
  'DCV-002': { status: 400, title: 'Invalid DCV request', message: 'The DCV request is not valid' },
  'DCV-003': { status: 404, title: 'DCV policy not found', message: 'No DCV policy has this name' },
  'DCV-005': { status: 400, title: 'Domain not covered', message: 'The DCV policy does not cover this domain' },
} as const satisfies Record<string, CatalogueEntry>;
