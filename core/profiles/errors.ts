import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of certificate profiles (PRF-…; client-compat §6: 002 validation, 003 not found, 004 exists).
 * PRF-010…018: a request's template broken against its profile (ProfileService.resolve), all 400, the
 * detail naming the element. Messages the vendor's tests assert: `Profile does not exist or is disabled`,
 * `Unknown algorithm`, `Label element <name> is not authorized` (given per error).
 */
export const PROFILE_ERRORS = {
  'PRF-002': { status: 400, title: 'Invalid profile', message: 'The certificate profile is not valid' },
  'PRF-003': { status: 404, title: 'Profile not found', message: 'Profile does not exist or is disabled' },
  'PRF-004': { status: 400, title: 'Profile exists', message: 'A certificate profile with this name already exists' },
  'PRF-010': { status: 400, title: 'Missing template element', message: 'A mandatory element of the template has no value' },
  'PRF-011': { status: 400, title: 'Template value refused', message: "A value does not match the profile's rule for its element" },
  'PRF-012': { status: 400, title: 'SAN count out of bounds', message: 'The number of subject alternative names of a type is outside what the profile allows' },
  'PRF-013': { status: 400, title: 'Label not authorized', message: 'Label element is not authorized' },
  'PRF-014': { status: 400, title: 'Key type not authorized', message: 'The key type is not authorized by the profile' },
  'PRF-015': { status: 400, title: 'Unknown algorithm', message: 'Unknown algorithm' },
  'PRF-016': { status: 400, title: 'Enrollment mode not allowed', message: 'The profile does not allow this enrollment mode' },
  'PRF-017': { status: 400, title: 'Template element not authorized', message: 'The template names an element the profile does not have' },
  'PRF-018': { status: 400, title: 'Malformed template', message: 'The template does not have the expected shape' },
} as const satisfies Record<string, CatalogueEntry>;
