import type { TriggerEventName } from '../events.js';
import { emailTemplateView } from './email.js';
import { horizonNameOf } from './events.js';
import { restTopLevelOf } from './rest.js';
import type { HorizonState } from './state.js';

/**
 * The Horizon keys of a trigger written in Horizon's shape, answered beside Certwright's: `type`, the
 * subtype keys it was written with (the email title and body read back from the target), and `events`
 * in Horizon's names. A `rest` trigger answers its request both as `sequence` and as the top-level keys
 * of the older shape (rest.ts restTopLevelOf), whichever it was written with. Pure: no I/O, no secrets
 * (the kept fields hold none in clear).
 */
export function horizonKeysOf(horizon: HorizonState, target: Record<string, unknown>, events: readonly TriggerEventName[]): Record<string, unknown> {
  const fields =
    horizon.type === 'email'
      ? { ...horizon.fields, emailTemplate: emailTemplateView(horizon.fields, target) }
      : horizon.type === 'rest'
        ? { ...horizon.fields, ...restTopLevelOf(horizon.fields.sequence) }
        : horizon.fields;
  return { type: horizon.type, ...fields, events: events.map(horizonNameOf) };
}
