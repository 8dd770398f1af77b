import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of the PKI toolkit and its resources. Suffixes follow client-compat §6: 002 validation,
 * 003 not found, 004 already exists, 005 referenced / refused by a rule. PKI-001's message is the one
 * the vendor's integration tests assert ("Could not parse provided PEM").
 */
export const PKI_ERRORS = {
  'PKI-001': { status: 400, title: 'Unreadable object', message: 'Could not parse provided PEM' },
  'PKI-002': { status: 400, title: 'Wrong kind of object', message: 'The object is not of the expected kind' },
  'PKI-003': { status: 400, title: 'Wrong password', message: 'The password does not open this object' },
  'PKI-004': { status: 400, title: 'Object too large', message: 'The object exceeds the size limits' },
  'PKI-005': { status: 400, title: 'Object too deeply nested', message: 'The object is nested too deeply' },
  'PKI-006': { status: 400, title: 'Unsupported algorithm', message: 'Unknown algorithm' },
  'PKI-007': { status: 400, title: 'Invalid signature', message: 'The signature does not verify' },
  'CA-002': { status: 400, title: 'Invalid CA', message: 'The certificate authority is not valid' },
  'CA-003': { status: 404, title: 'CA not found', message: 'No certificate authority has this name' },
  'CA-004': { status: 400, title: 'CA exists', message: 'A certificate authority with this name already exists' },
  'CA-005': { status: 400, title: 'CA referenced', message: 'The certificate authority is in use' },
  'TC-003': { status: 404, title: 'Trust chain not found', message: 'No trust chain starts at this anchor' },
  'CRL-002': { status: 400, title: 'Invalid CRL', message: 'The CRL is not valid for its CA' },
  'CRL-003': { status: 404, title: 'CRL not cached', message: 'No CRL is cached for this CA' },
} as const satisfies Record<string, CatalogueEntry>;
