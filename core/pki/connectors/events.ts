import type { EventCodeEntry } from '../../events/catalogue.js';

/** Event codes raised by PKI connectors and PKI queues: spread into core/events/catalogue.ts. */
export const PKI_CONNECTOR_EVENTS: readonly EventCodeEntry[] = [];
