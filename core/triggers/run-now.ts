import { newId } from '../db/ids.js';
import type { StoredEvent } from '../events/store.js';
import type { CertificateObject } from '../inventory/types.js';
import type { CoreServices } from '../services.js';
import type { AttemptOutcome } from './delivery-worker.js';
import { TRIGGER_EVENTS, type TriggerEventName } from './events.js';
import type { Trigger } from './model.js';
import type { TriggerRuntime } from './runtime.js';

export interface RunRequest {
  tenant: string;
  trigger: Trigger;
  event: TriggerEventName;
  /** The certificate the run is about; null for a test run (PATCH /api/v1/triggers/ {name}). */
  certificate: CertificateObject | null;
  thresholdDays: number | null;
  principal: string | null;
  /** A test run's dictionary (Horizon's TriggerTest): given to the channel in the event's payload as `dictionary`. */
  dictionary?: Record<string, string>;
}

/**
 * Runs one trigger for one event now, as both run routes do: one attempt, no retry, whatever the
 * trigger's query says and even when it is disabled (an operator's explicit run). The delivery is
 * written to the queue already claimed by this run (a worker draining the queue cannot take it first),
 * so it is in the deliveries' record; a run about a certificate
 * also writes its trigger result. Each run appends TRIGGER-RUN (about the certificate, or about the
 * trigger for a test run).
 */
export async function runTriggerNow(services: CoreServices, runtime: TriggerRuntime, run: RunRequest): Promise<AttemptOutcome> {
  const { tenant, trigger, event, certificate, thresholdDays, principal, dictionary } = run;
  const now = services.clock();
  // The run is not an event of the store: the channel gets the event it would have got, built here.
  const payload = {
    run: true,
    ...(certificate ? {} : { test: true }),
    ...(thresholdDays !== null ? { thresholdDays, ...(certificate ? { notAfter: certificate.notAfter } : {}) } : {}),
    ...(dictionary ? { dictionary } : {}),
  };
  const synthetic: StoredEvent = {
    id: newId(now),
    seq: 0,
    tenant,
    code: TRIGGER_EVENTS[event],
    module: 'triggers',
    status: 'success',
    principal,
    objectType: certificate ? 'certificate' : null,
    objectId: certificate?._id ?? null,
    payload: JSON.stringify(payload),
    createdAt: now,
    prevHash: '',
    hash: '',
  };
  // Written already claimed: a worker nudged by another event must not take the run's delivery first.
  const [deliveryId] = await runtime.queue.enqueue(services.knex, [
    {
      tenant,
      dedupeKey: `run:${synthetic.id}`,
      triggerId: trigger.id,
      triggerName: trigger.name,
      triggerEvent: event,
      thresholdDays,
      eventId: null,
      eventSeq: null,
      certificateId: certificate?._id ?? null,
    },
  ], { claimedForMs: runtime.worker.leaseMs });
  const delivery = await runtime.queue.get(deliveryId!);
  if (!delivery) throw new Error('the run delivery was not written');
  const outcome = await runtime.worker.attempt(delivery, 0, { trigger, event: synthetic });
  await services.events.append({
    tenant,
    code: 'TRIGGER-RUN',
    module: 'triggers',
    status: outcome.result.delivered ? 'success' : 'failure',
    principal,
    objectType: certificate ? 'certificate' : 'trigger',
    objectId: certificate?._id ?? trigger.name,
    payload: { trigger: trigger.name, event, delivered: outcome.result.delivered, detail: outcome.result.detail ?? null, ...(certificate ? {} : { test: true }) },
  });
  return outcome;
}
