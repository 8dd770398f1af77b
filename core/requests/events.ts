import type { EventCodeEntry } from '../events/catalogue.js';

/** Event codes raised by requests, workflows and challenges: spread into core/events/catalogue.ts. */
export const REQUEST_EVENTS: readonly EventCodeEntry[] = [];
