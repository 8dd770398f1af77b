import type { TriggerEventName } from '../events.js';

/**
 * Trigger event names of the vendor's (Horizon's) trigger shape, as its MCP server lists them
 * (horizon-mcp src/tools/config/schemas/triggers.schema.ts, TriggerEvent). All start with `on_`, none
 * of Certwright's do: both namings can share the `events` key without ambiguity.
 */
const WORKFLOWS = ['enroll', 'revoke', 'update', 'recover', 'migrate', 'renew', 'import'] as const;
const REQUEST_STEPS = ['submit', 'cancel', 'approve', 'deny', 'pending'] as const;
export const HORIZON_EVENT_NAMES: readonly string[] = [
  ...WORKFLOWS.flatMap((w) => [`on_${w}`, ...REQUEST_STEPS.map((s) => `on_${s}_${w}`)]),
  'on_in_progress_enroll',
  'on_failure_enroll',
  'on_failure_revoke',
  'on_in_progress_renew',
  'on_failure_renew',
  'on_expire',
  'on_license_expiration',
  'on_credentials_expiration',
  'on_license_usage',
  'on_dcv_license_usage',
  'on_dcv_policy_start',
  'on_dcv_policy_end',
  'on_dcv_validation_success',
  'on_dcv_validation_failure',
  'on_dcv_validation_retry',
  'on_test',
  'on_trigger_error',
];

/**
 * The Horizon events with a Certwright counterpart. Request events are not mapped: Certwright's
 * request_pending/approved/denied fire for every workflow, Horizon's name one workflow each, and a
 * trigger that fired for more than it was asked for would be a silent change.
 */
export const HORIZON_TO_CERTWRIGHT: Readonly<Record<string, TriggerEventName>> = {
  on_enroll: 'issued',
  on_renew: 'renewed',
  on_revoke: 'revoked',
  on_import: 'imported',
  on_expire: 'expiring',
  on_dcv_validation_failure: 'dcv_failure',
};

const CERTWRIGHT_TO_HORIZON = new Map(Object.entries(HORIZON_TO_CERTWRIGHT).map(([h, c]) => [c, h]));

export const isHorizonEvent = (name: string): boolean => HORIZON_EVENT_NAMES.includes(name);

/** The Horizon name of a Certwright event, or the Certwright name when Horizon has none (discovered, request_*). */
export const horizonNameOf = (event: TriggerEventName): string => CERTWRIGHT_TO_HORIZON.get(event) ?? event;

/** The Certwright event a Horizon event name stands for, if it has one (own keys only: "constructor" is no event). */
export const certwrightNameOf = (name: string): TriggerEventName | undefined => (Object.prototype.hasOwnProperty.call(HORIZON_TO_CERTWRIGHT, name) ? HORIZON_TO_CERTWRIGHT[name] : undefined);
