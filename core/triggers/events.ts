import { LIFECYCLE_EVENT_CODES } from '../events/codes.js';

/**
 * The events a trigger reacts to: the names a trigger configuration uses (client-compat: `expiring`,
 * `revoked`, …) and the event codes of the event store they stand for. The one table of both.
 */
export const TRIGGER_EVENTS = {
  issued: LIFECYCLE_EVENT_CODES.issued,
  imported: LIFECYCLE_EVENT_CODES.imported,
  renewed: LIFECYCLE_EVENT_CODES.renewed,
  revoked: LIFECYCLE_EVENT_CODES.revoked,
  expiring: LIFECYCLE_EVENT_CODES.expiring,
  discovered: LIFECYCLE_EVENT_CODES.discovered,
  request_pending: LIFECYCLE_EVENT_CODES.requestPending,
  request_approved: LIFECYCLE_EVENT_CODES.requestApproved,
  request_denied: LIFECYCLE_EVENT_CODES.requestDenied,
  dcv_failure: LIFECYCLE_EVENT_CODES.dcvFailure,
  automation_failure: LIFECYCLE_EVENT_CODES.automationFailure,
} as const;

export type TriggerEventName = keyof typeof TRIGGER_EVENTS;
export const TRIGGER_EVENT_NAMES = Object.keys(TRIGGER_EVENTS) as TriggerEventName[];

const BY_CODE = new Map<string, TriggerEventName>(Object.entries(TRIGGER_EVENTS).map(([name, code]) => [code, name as TriggerEventName]));

export const isTriggerEvent = (name: string): name is TriggerEventName => Object.prototype.hasOwnProperty.call(TRIGGER_EVENTS, name);
/** The trigger event an event code stands for, if triggers react to it. */
export const triggerEventOf = (code: string): TriggerEventName | undefined => BY_CODE.get(code);
/** Event codes triggers react to (the dispatcher reads only these). */
export const TRIGGERING_CODES: readonly string[] = [...BY_CODE.keys()];
