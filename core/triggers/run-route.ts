import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../errors/index.js';
import { certificateVisible } from '../inventory/search/visibility.js';
import { certificateObjectSchema } from '../inventory/view.js';
import type { CoreServices } from '../services.js';
import { isTriggerEvent, TRIGGER_EVENT_NAMES } from './events.js';
import { certwrightNameOf } from './horizon/events.js';
import type { Trigger } from './model.js';
import { runTriggerNow } from './run-now.js';
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
      description: 'One attempt, recorded in the certificate\'s triggerResults. CRT-003 unknown certificate, TRG-003 unknown trigger, TRG-008 unknown event, TRG-009 event the trigger does not handle. The event is a Certwright name (revoked, expiring, …) or its Horizon name (on_revoke, on_expire, …).',
      params: {
        type: 'object',
        required: ['id', 'triggerName', 'event'],
        properties: { id: { type: 'string', maxLength: 64 }, triggerName: nameSchema, event: { type: 'string', maxLength: 64 } },
      },
      response: { 200: certificateObjectSchema },
    },
    handler: async (request) => {
      const { id, triggerName } = request.params;
      // Horizon names its events on_enroll, on_revoke, …: those with a counterpart are accepted too.
      const event = certwrightNameOf(request.params.event) ?? request.params.event;
      const tenant = request.tenant;
      const certificate = await services.inventory.repository.get(tenant, id);
      if (!certificate) throw new ProblemError('CRT-003', { detail: `No certificate ${id.slice(0, 64)}` });
      if (!(await certificateVisible(services.inventory, request, certificate._id))) {
        throw new ProblemError('SEC-PERM-001', { message: 'The filters of your search:certificates permissions do not cover this certificate' });
      }
      const trigger = await runtime.triggers.get(tenant, triggerName);
      if (!isTriggerEvent(event)) throw new ProblemError('TRG-008', { detail: `unknown event "${event}"; known: ${TRIGGER_EVENT_NAMES.join(', ')}` });
      if (!trigger.events.includes(event)) throw new ProblemError('TRG-009', { detail: `"${trigger.name}" handles ${trigger.events.join(', ')}` });

      const thresholdDays = event === 'expiring' ? thresholdFor(trigger, certificate.notAfter, services.clock()) : null;
      const outcome = await runTriggerNow(services, runtime, { tenant, trigger, event, certificate, thresholdDays, principal: request.principal?.identifier ?? null });
      return outcome.certificate ?? (await services.inventory.repository.get(tenant, certificate._id));
    },
  });
}
