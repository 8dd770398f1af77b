import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of triggers (configuration, runs). Suffixes follow client-compat §6: 002 validation,
 * 003 not found, 004 already exists; the others name what was wrong so a client can say it.
 */
export const TRIGGER_ERRORS = {
  'TRG-002': { status: 400, title: 'Invalid trigger', message: 'The trigger is not valid' },
  'TRG-003': { status: 404, title: 'Trigger not found', message: 'No trigger has this name' },
  'TRG-004': { status: 400, title: 'Trigger exists', message: 'A trigger with this name already exists' },
  'TRG-005': { status: 400, title: 'Unknown trigger channel', message: 'No trigger channel of this type is installed' },
  'TRG-006': { status: 400, title: 'Invalid trigger target', message: 'The target does not match what the channel expects' },
  'TRG-007': { status: 400, title: 'Invalid trigger query', message: 'The certificate query of the trigger does not parse' },
  'TRG-008': { status: 400, title: 'Unknown trigger event', message: 'The trigger names an event that does not exist' },
  'TRG-009': { status: 400, title: 'Event not handled', message: 'The trigger does not handle this event' },
} as const satisfies Record<string, CatalogueEntry>;
