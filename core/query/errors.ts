import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of the query languages. HQL-001 is the code clients key on for bad syntax (client-compat §6). */
export const QUERY_ERRORS = {
  'HQL-001': { status: 400, title: 'Invalid query', message: 'The query could not be parsed' },
  'HQL-002': { status: 400, title: 'Invalid search request', message: 'The search request is not valid' },
} as const satisfies Record<string, CatalogueEntry>;
