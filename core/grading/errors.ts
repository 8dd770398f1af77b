import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Codes of certificate grading (/api/v1/certificate/grading/; the spec shows none). The decoder's own reason
 * for an unreadable certificate goes in `detail`.
 */
export const GRADING_ERRORS = {
  'GRADING-002': { status: 400, title: 'Invalid certificate to grade', message: 'Give one certificate: a PEM (or base64 DER) or the _id of an inventory certificate' },
  'GRADING-003': { status: 404, title: 'Unknown grading policy or ruleset', message: 'No grading policy or ruleset has this name' },
  'GRADING-004': { status: 404, title: 'Unknown certificate', message: 'No inventory certificate has this _id' },
} as const satisfies Record<string, CatalogueEntry>;
