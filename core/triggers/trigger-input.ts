import type { CoreServices } from '../services.js';
import { certwrightSideOf, horizonInput, horizonSideIsCurrent, isHorizonShape, refuseStrayHorizonKeys } from './horizon/input.js';
import { asValidation } from './horizon/refuse.js';
import type { Trigger } from './model.js';
import { checkTrigger, type CheckedTrigger, type TriggerInput } from './validate.js';

/**
 * The body of POST and PUT /api/v1/triggers/ checked, in either shape: Certwright's ({channel, target,
 * events, …}) as before, or the vendor's (Horizon's, with `type`), mapped onto it first. In Horizon's
 * shape every validation refusal is TRG-002 (see horizon/refuse.ts). `current`: the stored trigger of
 * an update, whose secrets carry over. A trigger written in Certwright's shape answers a Horizon view derived
 * from it (horizon/derived.ts): sent back unchanged beside Certwright's keys, that side yields to them (the
 * trigger stays in Certwright's shape); changed, it is the Horizon shape that counts, as for any body with `type`.
 */
export function checkedTriggerOf(
  services: Pick<CoreServices, 'provided' | 'plugins'>,
  body: Record<string, unknown>,
  current?: { trigger: Trigger; openSecret: (field: string) => unknown },
): CheckedTrigger {
  if (!isHorizonShape(body)) {
    refuseStrayHorizonKeys(body);
    return checkTrigger(services, body as unknown as TriggerInput, current);
  }
  if (current && horizonSideIsCurrent(body, current.trigger)) return checkTrigger(services, certwrightSideOf(body, current.trigger), current);
  return asValidation(() => checkTrigger(services, horizonInput(services, body, current?.trigger), current));
}
