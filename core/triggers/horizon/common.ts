import { isTriggerEvent, type TriggerEventName } from '../events.js';
import { parseFiniteDuration as durationMs } from '../../http/finite-duration.js';
import { certwrightNameOf, HORIZON_TO_CERTWRIGHT, isHorizonEvent } from './events.js';
import { isObject, refused } from './refuse.js';

/**
 * Keys every Horizon trigger subtype has besides name, type, events and retries. The licence-usage key has
 * two spellings: `licenceUsagePercent` (horizon-mcp) and `licenseUsagePercent` (the v2 Go SDK's request models).
 */
export const COMMON_OPTION_KEYS = ['runPeriod', 'runOnRenewed', 'licenceUsagePercent', 'licenseUsagePercent', 'triggers'] as const;

const DAY_MS = 86_400_000;
const SUPPORTED = Object.keys(HORIZON_TO_CERTWRIGHT).join(', ');

/**
 * A trigger's `events` in either naming, as Certwright events. A Horizon event without a counterpart
 * is refused as such (TRG-002); a name neither side knows is left for checkTrigger (TRG-008).
 */
export function certwrightEvents(events: readonly string[]): string[] {
  return events.map((name) => {
    if (isTriggerEvent(name)) return name;
    const mapped = certwrightNameOf(name);
    if (mapped) return mapped;
    if (isHorizonEvent(name)) throw refused('events', `${name} has no Certwright counterpart (request events are not per workflow here; pending reminders, licence, credential and most DCV events do not exist); supported: ${SUPPORTED}`);
    return name;
  });
}

/**
 * The keys shared by every Horizon subtype: `runPeriod` of on_expire is how long before expiry to
 * notify, i.e. Certwright's threshold (whole days); `runOnRenewed: true` is what Certwright does
 * anyway (false has no counterpart); licence-usage thresholds and error-chained triggers have none.
 * Answers the thresholds and the keys to keep.
 */
export function commonOptions(body: Record<string, unknown>, events: readonly TriggerEventName[]): { thresholds: number[]; fields: Record<string, unknown> } {
  const expiring = events.includes('expiring');
  let thresholds: number[] = [];
  const period = body.runPeriod;
  if (period !== undefined && period !== null) {
    if (!expiring) throw refused('runPeriod', 'only on_expire runs on a period in Certwright (pending-request reminders have no counterpart)');
    const ms = durationMs(period);
    if (ms === null || ms % DAY_MS !== 0 || ms / DAY_MS < 1 || ms / DAY_MS > 3650) throw refused('runPeriod', 'whole days before expiry, 1 to 3650 (e.g. "30 days")');
    thresholds = [ms / DAY_MS];
  } else if (expiring) {
    throw refused('runPeriod', 'an on_expire trigger needs how long before expiry to notify (e.g. "30 days")');
  }
  if (body.runOnRenewed === false) throw refused('runOnRenewed', 'false has no counterpart: Certwright notifies of an expiring certificate even when it was renewed');
  for (const key of ['licenceUsagePercent', 'licenseUsagePercent']) {
    if (body[key] !== undefined && body[key] !== null) throw refused(key, 'licence-usage events have no Certwright counterpart');
  }
  const chained = body.triggers;
  if (chained !== undefined && chained !== null) {
    if (!isObject(chained)) throw refused('triggers', '{onTriggerError: [...]}');
    const onError = chained.onTriggerError;
    if (onError !== undefined && onError !== null && (!Array.isArray(onError) || onError.length > 0)) throw refused('triggers.onTriggerError', 'Certwright does not run other triggers when one fails (failures are in the certificate triggerResults and the deliveries)');
  }
  const fields: Record<string, unknown> = {};
  for (const key of COMMON_OPTION_KEYS) if (body[key] !== undefined) fields[key] = body[key];
  return { thresholds, fields };
}
