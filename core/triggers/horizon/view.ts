import type { TriggerEventName } from '../events.js';
import { emailTemplateView } from './email.js';
import { horizonNameOf } from './events.js';
import type { HorizonState } from './state.js';

/**
 * The Horizon keys of a trigger written in Horizon's shape, answered beside Certwright's: `type`, the
 * subtype keys it was written with (the email title and body read back from the target), and `events`
 * in Horizon's names. Pure: no I/O, no secrets (the kept fields hold none in clear).
 */
export function horizonKeysOf(horizon: HorizonState, target: Record<string, unknown>, events: readonly TriggerEventName[]): Record<string, unknown> {
  const fields = horizon.type === 'email' ? { ...horizon.fields, emailTemplate: emailTemplateView(horizon.fields, target) } : horizon.fields;
  return { type: horizon.type, ...fields, events: events.map(horizonNameOf) };
}
