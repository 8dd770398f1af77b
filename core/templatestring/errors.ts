import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Codes of computation rules and template strings (POST /api/v1/templatestring/playground; the spec shows
 * none). Each 400 carries `position: {offset, line, column}` where the rule went wrong and `kind`.
 */
export const TEMPLATESTRING_ERRORS = {
  'TPL-001': { status: 400, title: 'Invalid computation rule', message: 'The computation rule does not parse' },
  'TPL-002': { status: 400, title: 'Computation rule failed', message: 'The computation rule cannot be evaluated on this data' },
  'TPL-003': { status: 400, title: 'Computation rule too costly', message: 'The computation rule exceeds a limit of size, depth, steps or time' },
  'TPL-004': { status: 400, title: 'Invalid playground request', message: 'Give one of computationRule, templateString or template, and the data as an object' },
} as const satisfies Record<string, CatalogueEntry>;
