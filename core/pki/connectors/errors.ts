import type { CatalogueEntry } from '../../errors/catalogue.js';

/** Error codes of PKI connectors and PKI queues (PKI-CONN-…, PKI-QUEUE-…). */
export const PKI_CONNECTOR_ERRORS = {} as const satisfies Record<string, CatalogueEntry>;
