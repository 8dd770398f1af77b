import type { FastifyInstance } from 'fastify';
import { newId } from '../db/ids.js';
import { ProblemError } from '../errors/index.js';
import type { StoredEvent } from '../events/store.js';
import { certificateVisible } from '../inventory/search/visibility.js';
import { certificateObjectSchema } from '../inventory/view.js';
import type { CoreServices } from '../services.js';
import { isTriggerEvent, TRIGGER_EVENTS, TRIGGER_EVENT_NAMES } from './events.js';
import type { Trigger } from './model.js';
import type { TriggerRuntime } from './runtime.js';
import { nameSchema } from './schemas.js';

const DAY_MS = 86_400_000;
type RunParams = { Params: { id: string; triggerName: string; event: string } };

/** For a run of `expiring`: the smallest threshold of the trigger the certificate is within, else the largest. */
const thresholdFor = (trigger: Trigger, notAfter: number, now: number): number => {
  const left = (notAfter - now) / DAY_MS;
  return trigger.thresholds.find((t) => left <= t) ?? trigger.thresholds[trigger.thresholds.length - 1]!;
};

/**
 * PATCH /api/v1/certificates/run/{id}/:triggerName/:event (webra capability): runs one trigger for one
 * event on one certificate now — one attempt, no retry, whatever the trigger's query says and even when
 * the trigger is disabled (an operator's explicit run) — records the trigger result and answers the
 * certificate object as GET /api/v1/certificates/{url-encoded PEM} does (bare). Needs
 * configuration:triggers:write, and the certificate within the caller's search:certificates filters.
 */
export async function runRoute(app: FastifyInstance, options: { services: CoreServices; runtime: TriggerRuntime }): Promise<void> {
  const { services, runtime } = options;
  app.patch<RunParams>('/api/v1/certificates/run/:id/:triggerName/:event', {
    config: { capability: 'webra', access: { permission: 'configuration:triggers:write' } },
    schema: {
      tags: ['certificates', 'triggers'],
      summary: 'Run a trigger for an event on one certificate now',
      description: 'One attempt, recorded in the certificate\'s triggerResults. CRT-003 unknown certificate, TRG-003 unknown trigger, TRG-008 unknown event, TRG-009 event the trigger does not handle.',
      params: {
        type: 'object',
        required: ['id', 'triggerName', 'event'],
        properties: { id: { type: 'string', maxLength: 64 }, triggerName: nameSchema, event: { type: 'string', maxLength: 64 } },
      },
      response: { 200: certificateObjectSchema },
    },
    handler: async (request) => {
      const { id, triggerName, event } = request.params;
      const tenant = request.tenant;
      const certificate = await services.inventory.repository.get(tenant, id);
      if (!certificate) throw new ProblemError('CRT-003', { detail: `No certificate ${id.slice(0, 64)}` });
      if (!(await certificateVisible(services.inventory, request, certificate._id))) {
        throw new ProblemError('SEC-PERM-001', { message: 'The filters of your search:certificates permissions do not cover this certificate' });
      }
      const trigger = await runtime.triggers.get(tenant, triggerName);
      if (!isTriggerEvent(event)) throw new ProblemError('TRG-008', { detail: `unknown event "${event}"; known: ${TRIGGER_EVENT_NAMES.join(', ')}` });
      if (!trigger.events.includes(event)) throw new ProblemError('TRG-009', { detail: `"${trigger.name}" handles ${trigger.events.join(', ')}` });

      const now = services.clock();
      const thresholdDays = event === 'expiring' ? thresholdFor(trigger, certificate.notAfter, now) : null;
      // The run is not an event of the store: the channel gets the event it would have got, built here.
      const synthetic: StoredEvent = {
        id: newId(now),
        seq: 0,
        tenant,
        code: TRIGGER_EVENTS[event],
        module: 'triggers',
        status: 'success',
        principal: request.principal?.identifier ?? null,
        objectType: 'certificate',
        objectId: certificate._id,
        payload: JSON.stringify({ run: true, ...(thresholdDays !== null ? { thresholdDays, notAfter: certificate.notAfter } : {}) }),
        createdAt: now,
        prevHash: '',
        hash: '',
      };
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
          certificateId: certificate._id,
        },
      ]);
      const delivery = await runtime.queue.claim(deliveryId!, runtime.worker.leaseMs);
      if (!delivery) throw new Error('a run delivery was claimed by someone else');
      const outcome = await runtime.worker.attempt(delivery, 0, { trigger, event: synthetic });
      await services.events.append({
        tenant,
        code: 'TRIGGER-RUN',
        module: 'triggers',
        status: outcome.result.delivered ? 'success' : 'failure',
        principal: request.principal?.identifier ?? null,
        objectType: 'certificate',
        objectId: certificate._id,
        payload: { trigger: trigger.name, event, delivered: outcome.result.delivered, detail: outcome.result.detail ?? null },
      });
      return outcome.certificate ?? (await services.inventory.repository.get(tenant, certificate._id));
    },
  });
}
