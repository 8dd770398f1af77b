import type { EventCodeEntry } from '../events/catalogue.js';

/** Event codes raised by certificate profiles: spread into core/events/catalogue.ts. */
export const PROFILE_EVENTS: readonly EventCodeEntry[] = [];
