import type { CoreServices } from '../services.js';
import { horizonNameOf } from './horizon/events.js';
import { SECRET_MASK, type Trigger } from './model.js';
import { runTriggerNow } from './run-now.js';
import type { TriggerRuntime } from './runtime.js';

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

/** Where the trigger sends, for the answer: its target's url, masked when sealed. */
function urlOf(trigger: Trigger): string {
  if (typeof trigger.target.url === 'string') return trigger.target.url;
  return trigger.sealedSecrets.url !== undefined ? SECRET_MASK : '';
}

/**
 * PATCH /api/v1/triggers/ {name}: runs the trigger now for the first event it handles, with no
 * certificate (horizon-mcp simulate_trigger: "without real certificate context"): one attempt, no
 * retry, even when disabled, through runTriggerNow like the certificate run route. An `expiring`
 * trigger is run for its smallest threshold.
 */
export async function testRun(services: CoreServices, runtime: TriggerRuntime, tenant: string, name: string, principal: string | null): Promise<TriggerTestResult> {
  const trigger = await runtime.triggers.get(tenant, name);
  const event = trigger.events[0]!;
  const thresholdDays = event === 'expiring' ? (trigger.thresholds[0] ?? null) : null;
  const { result } = await runTriggerNow(services, runtime, { tenant, trigger, event, certificate: null, thresholdDays, principal });
  const message = result.detail ?? (result.delivered ? 'delivered' : 'not delivered');
  return {
    type: trigger.horizon?.type ?? trigger.channel,
    status: result.delivered ? 'success' : 'failure',
    message,
    requestURL: urlOf(trigger),
    name: trigger.name,
    event: trigger.horizon ? horizonNameOf(event) : event,
    delivered: result.delivered,
    retryable: result.retryable,
    detail: result.detail ?? null,
  };
}
