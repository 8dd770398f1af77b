import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of requests, workflows and challenges (WEBRA-<WORKFLOW>-…, REQ-…, CHAL-…). */
export const REQUEST_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
