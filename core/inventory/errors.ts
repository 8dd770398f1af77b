import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of the certificate inventory and labels. Suffixes follow client-compat §6: 002 validation,
 * 003 not found (CRT-003 is the code clients see for an unknown certificate), 004 already exists,
 * 005 referenced / refused by a rule.
 */
export const INVENTORY_ERRORS = {
  'CRT-002': { status: 400, title: 'Invalid certificate', message: 'The certificate is not valid' },
  'CRT-003': { status: 404, title: 'Certificate not found', message: 'No certificate has this identifier' },
  'CRT-004': { status: 400, title: 'Certificate exists', message: 'This certificate is already in the inventory' },
  'LBL-002': { status: 400, title: 'Invalid label', message: 'The label is not valid' },
  'LBL-003': { status: 404, title: 'Label not found', message: 'No label has this name' },
  'LBL-004': { status: 400, title: 'Label exists', message: 'A label with this name already exists' },
  'LBL-005': { status: 400, title: 'Label in use', message: 'This label is set on certificates and cannot be removed' },
  'LBL-006': { status: 400, title: 'Label not authorized', message: 'Label element is not authorized' },
} as const satisfies Record<string, CatalogueEntry>;
