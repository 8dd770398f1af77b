import { newId } from '../db/ids.js';
import type { CoreServices } from '../services.js';
import type { DeliveryResult } from '@certwright/sdk';
import { horizonNameOf } from './horizon/events.js';
import { SECRET_MASK, type Trigger } from './model.js';
import { runTriggerNow } from './run-now.js';
import type { TriggerRuntime } from './runtime.js';
import { checkedTriggerOf } from './trigger-input.js';

/**
 * The answer of a test run. Horizon's TriggerTest answer (horizon-go v2 docs/TriggerTest200Response.md:
 * type, status, message, requestURL required) with Certwright's delivery result beside it; `events`
 * naming as the trigger shows it. The request and response bodies Horizon may add are not known here:
 * a channel answers a delivery result, not its HTTP exchange.
 */
export interface TriggerTestResult {
  type: string;
  status: 'success' | 'failure';
  message: string;
  requestURL: string;
  name: string;
  event: string;
  delivered: boolean;
  retryable: boolean;
  detail: string | null;
}

export const triggerTestResultSchema = {
  $id: 'TriggerTestResult',
  type: 'object',
  required: ['type', 'status', 'message', 'requestURL', 'name', 'event', 'delivered', 'retryable', 'detail'],
  properties: {
    type: { type: 'string', description: "The trigger's Horizon type (email, webhook, rest), else its channel" },
    status: { type: 'string', enum: ['success', 'failure'] },
    message: { type: 'string', description: "The channel's detail of the attempt" },
    requestURL: { type: 'string', description: 'The URL called (******** when the channel seals it; empty for a channel without one, such as email)' },
    name: { type: 'string' },
    event: { type: 'string', description: 'The event it was run for: the first the trigger handles' },
    delivered: { type: 'boolean' },
    retryable: { type: 'boolean' },
    detail: { type: ['string', 'null'] },
  },
} as const;

/** A test's dictionary as Horizon sends it (MapEntry: {key?, value?}), as a plain object. */
export type TestDictionary = readonly { key?: string; value?: string | null }[];
const dictionaryOf = (entries: TestDictionary | null | undefined): Record<string, string> | undefined =>
  entries && entries.length > 0 ? Object.fromEntries(entries.filter((e) => typeof e.key === 'string').map((e) => [e.key!, e.value ?? ''])) : undefined;

/**
 * Runs `trigger` now for the first event it handles, with no certificate (horizon-mcp simulate_trigger:
 * "without real certificate context"): one attempt, no retry, even when disabled, through runTriggerNow like
 * the certificate run route. An `expiring` trigger is run for its smallest threshold. `secretFields`: target
 * fields the answer must not show (a sealed URL reads ********).
 */
async function run(
  services: CoreServices,
  runtime: TriggerRuntime,
  tenant: string,
  trigger: Trigger,
  secretFields: readonly string[],
  principal: string | null,
  dictionary: TestDictionary | null | undefined,
): Promise<TriggerTestResult> {
  const event = trigger.events[0]!;
  const thresholdDays = event === 'expiring' ? (trigger.thresholds[0] ?? null) : null;
  const { result } = await runTriggerNow(services, runtime, { tenant, trigger, event, certificate: null, thresholdDays, principal, dictionary: dictionaryOf(dictionary) });
  return answerOf(trigger, trigger.horizon ? horizonNameOf(event) : event, result, secretFields);
}

function answerOf(trigger: Trigger, event: string, result: DeliveryResult, secretFields: readonly string[]): TriggerTestResult {
  const url = secretFields.includes('url') || trigger.sealedSecrets.url !== undefined ? SECRET_MASK : typeof trigger.target.url === 'string' ? trigger.target.url : '';
  return {
    type: trigger.horizon?.type ?? trigger.channel,
    status: result.delivered ? 'success' : 'failure',
    message: result.detail ?? (result.delivered ? 'delivered' : 'not delivered'),
    requestURL: url,
    name: trigger.name,
    event,
    delivered: result.delivered,
    retryable: result.retryable,
    detail: result.detail ?? null,
  };
}

/** PATCH /api/v1/triggers/ {name} (horizon-mcp simulate_trigger): runs the stored trigger of that name. */
export async function testRun(services: CoreServices, runtime: TriggerRuntime, tenant: string, name: string, principal: string | null, dictionary?: TestDictionary | null): Promise<TriggerTestResult> {
  const trigger = await runtime.triggers.get(tenant, name);
  return run(services, runtime, tenant, trigger, [], principal, dictionary);
}

/**
 * PATCH /api/v1/triggers/ {trigger, dictionary?} (the v2 Go SDK's TriggerTest, docs/TriggerTestRequest.md):
 * runs the trigger given, in either shape and checked as POST checks it (same refusals), without storing
 * it. When a trigger of that name exists, secret target fields sent masked or left out are its own (a
 * GET → test echoes a sealed URL as ********), as on PUT. Recorded like any test run: a delivery and a
 * TRIGGER-RUN event about the trigger's name.
 */
export async function testRunDefinition(
  services: CoreServices,
  runtime: TriggerRuntime,
  tenant: string,
  definition: Record<string, unknown> & { name: string },
  principal: string | null,
  dictionary?: TestDictionary | null,
): Promise<TriggerTestResult> {
  const repository = runtime.triggers;
  const current = await repository.find(tenant, definition.name);
  const checked = checkedTriggerOf(services, definition, current ? { trigger: current, openSecret: (field) => repository.openSecret(current, field) } : undefined);
  const now = services.clock();
  // Never stored: a fresh id, so a delivery outliving this request finds no trigger and is canceled.
  const trigger: Trigger = {
    id: newId(now),
    tenant,
    name: checked.name,
    description: checked.description,
    enabled: checked.enabled,
    channel: checked.channel,
    target: checked.target,
    sealedSecrets: {},
    events: checked.events,
    thresholds: checked.thresholds,
    query: checked.query,
    triggerType: checked.triggerType,
    retries: checked.retries,
    horizon: checked.horizon,
    createdSeq: 0,
    createdAt: now,
    updatedAt: now,
  };
  return run(services, runtime, tenant, trigger, checked.secretFields, principal, dictionary);
}
