import type { CatalogueEntry } from '../errors/catalogue.js';

/** Error codes of certificate profiles (PRF-…; client-compat §6: 002 validation, 003 not found, 004 exists, 005 referenced). */
export const PROFILE_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
