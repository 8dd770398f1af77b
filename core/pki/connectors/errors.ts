import type { CatalogueEntry } from '../../errors/catalogue.js';

/**
 * Error codes of PKI connectors and PKI queues (PKI-CONN-…, PKI-QUEUE-…). Suffixes follow client-compat §6:
 * 002 validation, 003 not found, 004 already exists, 005 still referenced.
 */
export const PKI_CONNECTOR_ERRORS = {
  'PKI-CONN-002': { status: 400, title: 'Invalid PKI connector', message: 'The PKI connector is not valid' },
  'PKI-CONN-003': { status: 404, title: 'PKI connector not found', message: 'No enabled PKI connector has this name' },
  'PKI-CONN-004': { status: 400, title: 'PKI connector exists', message: 'A PKI connector with this name already exists' },
  'PKI-CONN-005': { status: 400, title: 'PKI connector in use', message: 'A certificate profile still uses this PKI connector' },
  'PKI-CONN-006': { status: 400, title: 'Unknown PKI connector type', message: 'No installed plugin provides this PKI connector type' },
  'PKI-CONN-007': { status: 502, title: 'PKI connector failed', message: 'The PKI connector could not do what was asked' },
  'PKI-QUEUE-002': { status: 400, title: 'Invalid PKI queue', message: 'The PKI queue is not valid' },
  'PKI-QUEUE-003': { status: 404, title: 'PKI queue not found', message: 'No PKI queue has this name' },
  'PKI-QUEUE-004': { status: 400, title: 'PKI queue exists', message: 'A PKI queue with this name already exists' },
  'PKI-QUEUE-005': { status: 400, title: 'PKI queue in use', message: 'A PKI connector or a queued item still uses this PKI queue' },
  // A queue at its `size` (Horizon's bound on what it holds): the service cannot take the work now; later it can.
  'PKI-QUEUE-006': { status: 503, title: 'PKI queue full', message: 'The PKI queue holds as many items as its size allows' },
} as const satisfies Record<string, CatalogueEntry>;
